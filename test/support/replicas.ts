// Real bot processes (`hcp-bot serve`, the compiled binary) sharing one Redis, pointed at a
// fake GitHub on loopback: what the replica, crash and drain tests (and bench:load) start.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { botEnv } from "./bot-harness.ts";
import { startHcpBot } from "./cli.ts";
import { PATIENCE_MS } from "./patience.ts";

export interface Replica {
  name: string;
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far (its log lines and the start-up line). */
  output(): string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resident memory of the process (from /proc), in MB. */
  rssMb(): number;
  /** CPU time the process has used so far, all its threads (from /proc), in ms. */
  cpuMs(): number;
}

export interface ReplicaOptions {
  name: string;
  githubUrl: string;
  appId: number;
  secret: string;
  redisUrl: string;
  /** Keys of this suite in the shared Redis. */
  prefix: string;
  extra?: Record<string, string>;
  /** Node options before the script (e.g. bench:load's `--cpu-prof`, which NODE_OPTIONS does not take). */
  nodeArgs?: readonly string[];
}

/** The environment of one replica: the GitHub App, the fake GitHub, the shared Redis. */
export function replicaEnv(o: ReplicaOptions): NodeJS.ProcessEnv {
  const bot = botEnv({ githubUrl: o.githubUrl, appId: o.appId, secret: o.secret, dataDir: mkdtempSync(join(tmpdir(), `hcp-${o.name}-`)) });
  return { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...bot, LOG_LEVEL: "warn", LOG_FORMAT: "json", REDIS_URL: o.redisUrl, HCP_REDIS_PREFIX: o.prefix, ...o.extra };
}

/** Starts `hcp-bot serve` and resolves once it says which port it listens on. */
export async function startReplica(o: ReplicaOptions, timeoutMs = PATIENCE_MS): Promise<Replica> {
  const { child, done } = startHcpBot(["serve"], { env: replicaEnv(o), ...(o.nodeArgs ? { nodeArgs: o.nodeArgs } : {}) });
  let err = "";
  child.stderr!.on("data", (d: string) => (err += d));
  child.stdout!.on("data", (d: string) => (err += d));
  const exited = done.then((r) => ({ code: r.code, signal: r.signal }));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${o.name} did not start within ${timeoutMs} ms:\n${err}`)), timeoutMs);
    const look = () => {
      const m = /listening on port (\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stderr!.on("data", look);
    void exited.then((r) => {
      clearTimeout(timer);
      reject(new Error(`${o.name} exited (${r.code ?? r.signal}) before listening:\n${err}`));
    });
  });
  return {
    name: o.name,
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output: () => err,
    exited,
    rssMb: () => rssMbOf(child.pid!),
    cpuMs: () => cpuMsOf(child.pid!),
  };
}

/** On-CPU time of every thread of a process so far (the first field of each task's schedstat, ns), in ms; 0 once it is gone. */
export function cpuMsOf(pid: number): number {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0] ?? 0);
    return ns / 1e6;
  } catch {
    return 0;
  }
}

export function rssMbOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0");
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** Polls until `check` holds (a loaded machine gets a generous default). */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, ms = PATIENCE_MS): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

export async function stopReplica(r: Replica | undefined, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (!r || r.child.exitCode !== null || r.child.signalCode !== null) return;
  r.child.kill(signal);
  await r.exited;
}
