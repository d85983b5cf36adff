// The CLI's `io` for a real process: stdout, stderr, whether they are terminals, the environment.
import type { Io } from "../cli.ts";

export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    tty: { out: process.stdout.isTTY === true, err: process.stderr.isTTY === true },
    env: process.env,
  };
}
