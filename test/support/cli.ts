// Runs the real `hcp-bot` binary as a child process, the way users and CI run it.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

export const root = join(import.meta.dirname, "..", "..");
export const bin = join(root, "bin", "hcp-bot.js");

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Started {
  child: ChildProcess;
  done: Promise<Run>;
}

export interface RunOptions {
  /** Default: the repository root. */
  cwd?: string;
  /** Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Node options before the script, e.g. `--no-expose-wasm`. */
  nodeArgs?: readonly string[];
  /** Written to the child's stdin, which is then closed; without it stdin is not connected. */
  input?: string;
}

export function startHcpBot(args: readonly string[], options: RunOptions = {}): Started {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), bin, ...args], {
    cwd: options.cwd ?? root,
    env: options.env ?? process.env,
    stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const done = new Promise<Run>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export function hcpBot(args: readonly string[], options: RunOptions = {}): Promise<Run> {
  return startHcpBot(args, options).done;
}
