// The built edge deployment on its real runtimes, as `npm run start:workerd` and
// `npm run start:deno` run it: workerd through Miniflare (the Durable Object and the Queue
// bindings of wrangler.toml), and Deno from npm as a child process with a local KV file.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { startWorkerd } from "../../scripts/start-workerd.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const root = join(import.meta.dirname, "..", "..");
const deno = join(root, "node_modules", ".bin", "deno");

export interface EdgeProcess {
  url: string;
  /** The minute's cron: restart stale jobs, run the queue-timeout sweep. */
  scheduled(): Promise<void>;
  /**
   * The runtime dies where it stands (an isolate evicted, a process killed) and comes back on
   * the same state after `afterMs`; on Deno `signal` says how it is told (SIGINT: as Deno Deploy does).
   */
  interrupt(afterMs: number, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
  /** What the runtime printed (Deno) on stderr, for failures. */
  output(): string;
  /** The Deno process's id (to pause it with SIGSTOP); undefined on workerd. */
  readonly pid: number | undefined;
}

export type RuntimeName = "workerd" | "deno";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startEdge(runtime: RuntimeName, env: Record<string, string>): Promise<EdgeProcess> {
  return runtime === "workerd" ? startOnWorkerd(env) : startOnDeno(env);
}

async function startOnWorkerd(env: Record<string, string>): Promise<EdgeProcess> {
  const worker = await startWorkerd({ ...env, HOST: "127.0.0.1", PORT: "0" });
  return {
    url: worker.url,
    scheduled: () => worker.scheduled(),
    async interrupt(afterMs) {
      await worker.restart(); // a new workerd: the consumer that was running is gone
      await sleep(afterMs);
    },
    stop: () => worker.stop(),
    output: () => "",
    pid: undefined,
  };
}

interface DenoChild {
  child: ChildProcess;
  url: string;
  stderr: string[];
}

async function spawnDeno(env: Record<string, string>, port: number): Promise<DenoChild> {
  const child = spawn(deno, ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "dist/edge/deno.js"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...env, HOST: "127.0.0.1", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stderr: string[] = [];
  child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      if (line.includes('"hcp-bot listening"')) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`deno exited with ${code}: ${stderr.join("")}`)));
  });
  return { child, url: await listening, stderr };
}

async function startOnDeno(env: Record<string, string>): Promise<EdgeProcess> {
  // Port 0 would change across restarts; the first start picks one, restarts keep it.
  let current = await spawnDeno(env, 0);
  const port = Number(new URL(current.url).port);
  const kill = async (signal: NodeJS.Signals) => {
    if (current.child.exitCode !== null || current.child.signalCode !== null) return;
    const exited = once(current.child, "exit");
    current.child.kill(signal);
    await exited;
  };
  return {
    get url() {
      return current.url;
    },
    // Deno.cron ticks once a minute; the entry also restarts stale jobs at start and every lease period.
    async scheduled() {},
    async interrupt(afterMs, signal = "SIGKILL") {
      await kill(signal);
      await sleep(afterMs);
      current = await spawnDeno(env, port);
    },
    stop: () => kill("SIGTERM"),
    output: () => current.stderr.join(""),
    get pid() {
      return current.child.pid;
    },
  };
}

/** Polls until `check` returns a value (not undefined/false), or fails with what was last seen. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
