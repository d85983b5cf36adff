// The CLI's `io` for a real process: stdout, stderr, whether they are terminals, the environment.
//
// With `direct` (dist/lint.cjs: `hcp-bot lint`, whose only output is through this `io`),
// output to a pipe or a file is written with write(2) on the descriptor: process.stdout for
// a pipe is a net.Socket, and creating it loads net and the streams (~10 ms of CPU, while a
// small lint's output is one line). A terminal (or any character device) keeps Node's
// stream, which knows the terminal; a write that fails (a non-blocking pipe that is full, a
// closed one) hands that text and all later text to the stream, which waits or reports as
// before. Commands that also write to process.stdout themselves (smoke-run's live output)
// keep the streams, so their text stays in order.
//
// A reader that goes away (`hcp-bot advise ... | head -3`) ends the command quietly, as it
// ends cat, grep or git: no more output is wanted, so there is nothing to report, and the
// exit status is the one a shell gives a process that SIGPIPE stopped (128 + 13), so a
// `set -o pipefail` script still sees that the output was cut off. Node ignores SIGPIPE, so
// without this the write's EPIPE surfaced as an unhandled 'error' event and a stack trace.
import { fstatSync, writeSync } from "node:fs";
import type { Io } from "../cli.ts";

/** The status a shell reports for a process stopped by SIGPIPE. */
export const BROKEN_PIPE_EXIT = 128 + 13;

export function processIo({ direct = false }: { direct?: boolean } = {}): Io {
  const out = descriptorWriter(1, quietOnBrokenPipe(() => process.stdout), direct);
  const err = descriptorWriter(2, quietOnBrokenPipe(() => process.stderr), direct);
  return {
    out: out.write,
    err: err.write,
    tty: { out: out.tty(), err: err.tty() },
    env: process.env,
    stdin: readAllStdin,
  };
}

/** Only `lint -` reads stdin: process.stdin (and the stream modules with it) is created then. */
async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

export interface DescriptorWriter {
  write(text: string): void;
  tty(): boolean;
}

type WriteSync = (fd: number, buffer: Uint8Array, offset: number, length: number) => number;

/** With `allowDirect`, writes to `fd` itself while it is a pipe, socket or file; to `stream()` otherwise. */
export function descriptorWriter(fd: number, stream: () => NodeJS.WriteStream, allowDirect: boolean, write: WriteSync = writeSync): DescriptorWriter {
  let direct = allowDirect && process.platform !== "win32" && !isCharacterDevice(fd);
  return {
    tty: () => (direct ? false : stream().isTTY === true),
    write(text) {
      if (!direct) {
        stream().write(text);
        return;
      }
      const bytes = Buffer.from(text, "utf8");
      let done = 0;
      try {
        while (done < bytes.length) done += write(fd, bytes, done, bytes.length - done);
      } catch (error) {
        if (isBrokenPipe(error)) stopForBrokenPipe();
        direct = false;
        stream().write(bytes.subarray(done));
      }
    },
  };
}

/** `stream()`, with a broken pipe on it ending the process quietly (see the header). */
function quietOnBrokenPipe(stream: () => NodeJS.WriteStream): () => NodeJS.WriteStream {
  let watched = false;
  return () => {
    const s = stream();
    if (!watched) {
      watched = true;
      s.on("error", (error) => {
        if (isBrokenPipe(error)) stopForBrokenPipe();
        throw error; // any other write error stays what it was: unhandled, reported, exit 1
      });
    }
    return s;
  };
}

function isBrokenPipe(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "EPIPE";
}

function stopForBrokenPipe(): never {
  process.exit(BROKEN_PIPE_EXIT);
}

/** A terminal is a character device, so anything else is not one (isatty(3) would say the same). */
function isCharacterDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return true; // unknown: leave it to Node's stream
  }
}
