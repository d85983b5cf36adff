// Runs the smoke command as its own process group and streams its merged output.
//
// Why a process group: torchrun spawns one Python process per rank, and those may spawn
// dataloader workers. Killing only torchrun can leave ranks holding GPUs (and our pipe, so the
// stream would never end). `detached: true` makes the child a session/group leader, so a
// signal to -pid reaches the whole tree.
//
// Ending a run: the time limit, or SIGTERM/SIGINT to smoke-run (a workflow cancel), sends
// SIGTERM to the group (torchrun forwards it to the ranks and prints its failure box), then
// SIGKILL after a grace period. When torchrun exits by itself, anything left in its group is
// reaped the same way.
import { randomBytes } from "node:crypto";
import { execa } from "execa";
import { reapRun, RunTracker } from "./reap.ts";

/** The variable every process of a run inherits, so it can be found after it leaves the session. */
export const RUN_MARKER_VAR = "HCP_SMOKE_RUN_MARKER";

export interface RunOptions {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  timeoutMs: number;
  /** SIGTERM → SIGKILL delay. */
  graceMs: number;
  /** Receives the merged stdout+stderr in arrival order; awaited, so a slow sink applies backpressure. */
  onChunk(chunk: Uint8Array): void | Promise<void>;
  /** Harness messages (why the run is being stopped). */
  notice(message: string): void;
  /** Signals that cancel the run; the default handles SIGTERM and SIGINT. */
  cancelSignals?: readonly NodeJS.Signals[];
  /**
   * Bytes the child reads on one more descriptor (3): written whole at the start into a socket
   * whose writing end is then closed, so once the readers took them nothing is left to read.
   */
  extraFd?: { fd: 3; data: Uint8Array };
}

export interface RunResult {
  exitCode: number | null;
  /** The signal that ended the direct child, e.g. "SIGTERM". */
  signal: string | null;
  timedOut: boolean;
  /** The signal smoke-run itself received, when a cancel stopped the run. */
  cancelledBy: NodeJS.Signals | null;
  /** Set when the command could not be started (e.g. `uv` not on PATH). */
  spawnError: string | null;
  durationMs: number;
  /** Processes of the run still alive after reaping (pids); a run that leaves any cannot pass. */
  survivors: number[];
}

/** Sends a signal to a process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true; // exists, not ours to signal: nothing more to do
    throw error;
  }
}

export function groupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

/** SIGTERM now, SIGKILL after the grace period unless the group is gone by then. */
class GroupStopper {
  private killTimer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly pgid: number,
    private readonly graceMs: number,
    /** The run's processes outside the group too (a `setsid` child holding our pipe). */
    private readonly tracker: RunTracker,
  ) {}

  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    const group = signalGroup(this.pgid, "SIGTERM");
    const others = this.tracker.signal("SIGTERM").length > 0;
    if (!group && !others) return;
    this.killTimer = setTimeout(() => this.kill(), this.graceMs);
  }

  kill(): void {
    clearTimeout(this.killTimer);
    this.killTimer = undefined;
    this.stopping = true;
    signalGroup(this.pgid, "SIGKILL");
    this.tracker.signal("SIGKILL");
  }

  dispose(): void {
    clearTimeout(this.killTimer);
  }
}

export async function runSmokeProcess(options: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const [file, ...args] = options.argv;
  if (!file) throw new Error("empty argv");
  const marker = `${RUN_MARKER_VAR}=${randomBytes(16).toString("hex")}`;
  const subprocess = execa(file, args, {
    env: { ...options.env, [RUN_MARKER_VAR]: marker.slice(RUN_MARKER_VAR.length + 1) },
    extendEnv: false, // the caller's env is complete: it may have removed variables on purpose
    cwd: options.cwd,
    detached: true,
    cleanup: false,
    stdio: ["ignore", "pipe", "pipe", ...(options.extraFd ? [options.extraFd.data] : [])],
    all: true,
    buffer: false,
    reject: false,
    stripFinalNewline: false,
  });

  let timedOut = false;
  let cancelledBy: NodeJS.Signals | null = null;
  const pid = subprocess.pid;
  const tracker = pid === undefined ? undefined : new RunTracker(pid, marker);
  const stopper = pid === undefined || !tracker ? undefined : new GroupStopper(pid, options.graceMs, tracker);
  // Descendants that leave the session and clear their environment are still known once seen.
  const poller = setInterval(() => tracker?.poll(), 200);
  poller.unref();

  const timer = setTimeout(() => {
    timedOut = true;
    options.notice(`time limit of ${formatMs(options.timeoutMs)} reached: stopping the whole process group (SIGTERM, SIGKILL after ${formatMs(options.graceMs)})`);
    stopper?.stop();
  }, options.timeoutMs);

  const onSignal = (signal: NodeJS.Signals) => {
    if (cancelledBy) {
      options.notice(`${signal} again: killing the process group now`);
      stopper?.kill();
      return;
    }
    cancelledBy = signal;
    options.notice(`${signal} received: stopping the whole process group (SIGTERM, SIGKILL after ${formatMs(options.graceMs)})`);
    stopper?.stop();
  };
  const signals = options.cancelSignals ?? (["SIGTERM", "SIGINT"] as const);
  for (const s of signals) process.on(s, onSignal);

  // torchrun has exited; whatever is left of its group would keep our pipe open forever.
  subprocess.once("exit", () => {
    if (pid !== undefined && (groupAlive(pid) || (tracker?.members().length ?? 0) > 0)) {
      options.notice(`${file} exited but processes of its group remain: stopping them (SIGTERM, SIGKILL after ${formatMs(options.graceMs)})`);
      stopper?.stop();
    }
  });

  try {
    if (subprocess.all) {
      for await (const chunk of subprocess.all) {
        await options.onChunk(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Uint8Array));
      }
    }
    const result = await subprocess;
    clearInterval(poller);
    const survivors = tracker ? await reapRun(tracker, Math.max(options.graceMs, 2000)) : [];
    if (survivors.length) options.notice(`processes of the run would not die: ${survivors.join(", ")}; the run cannot pass`);
    return {
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      timedOut,
      cancelledBy,
      spawnError: pid === undefined ? (result.shortMessage ?? "the command could not be started") : null,
      durationMs: Date.now() - started,
      survivors,
    };
  } finally {
    clearTimeout(timer);
    clearInterval(poller);
    for (const s of signals) process.off(s, onSignal);
    // The run is over either way: nothing of it may outlive smoke-run.
    if (pid !== undefined && groupAlive(pid)) stopper?.kill();
    if (tracker) await reapRun(tracker, 0);
    stopper?.dispose();
  }
}

export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** `90s`, `30m`, `1h30m`, `500ms`; a bare number means minutes (like the repo config's run_minutes). */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 60_000;
  const re = /(\d+)(ms|h|m|s)/gy;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let matched = 0;
  for (let m = re.exec(trimmed); m; m = re.exec(trimmed)) {
    total += Number(m[1]) * unit[m[2]!]!;
    matched = re.lastIndex;
  }
  return matched === trimmed.length && matched > 0 ? total : undefined;
}
