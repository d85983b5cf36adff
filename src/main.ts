// Process entry point: wires the CLI to stdout/stderr and the exit code.
import { main } from "./cli.ts";

const code = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  tty: { out: process.stdout.isTTY === true, err: process.stderr.isTTY === true },
  env: process.env,
});
process.exitCode = code;
