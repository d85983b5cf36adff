// Finds every process of a run, wherever it went, so that nothing of the code under test
// outlives smoke-run (a `setsid` child once rewrote smoke.log and verdict.json seconds after
// smoke-run had reaped the process group and exited).
//
// A process belongs to the run when any of these holds (Linux /proc, the runner's platform):
// - it is in the run's session or process group (setsid leaves both);
// - its environment carries the run's marker variable (inherited across setsid and fork;
//   /proc/PID/environ shows the environment a process was started with);
// - it was seen as a descendant of the run while the tracker polled (a child that clears its
//   environment and detaches is still caught if it lived through one poll).
// A process that clears its environment and escapes between two polls is not found; what it
// writes afterwards still cannot pass the run, because the bot checks the artifact against
// the hashes smoke-run printed (src/core/smoke/runner-report.ts).
import { readdirSync, readFileSync } from "node:fs";

interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Start time in clock ticks since boot: with the pid, it names one process (pids are reused). */
  start: string;
  state: string;
}

/** /proc/PID/stat; the command name is in parentheses and may hold spaces. */
function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, state: fields[0] ?? "", ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), start: fields[19] ?? "" };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

function environHas(pid: number, entry: string): boolean {
  try {
    const env = readFileSync(`/proc/${pid}/environ`);
    const needle = Buffer.from(`${entry}\0`);
    return env.subarray(0, needle.length).equals(needle) || env.includes(Buffer.concat([Buffer.from([0]), needle]));
  } catch {
    return false;
  }
}

export const procAvailable = (): boolean => readStat(process.pid) !== undefined;

export class RunTracker {
  /** pid -> start time of every process seen as part of the run. */
  private readonly seen = new Map<number, string>();

  /** `root` leads its own session and group (execa `detached: true`); `marker` is NAME=VALUE in its environment. */
  constructor(
    private readonly root: number,
    private readonly marker: string,
  ) {
    const stat = readStat(root);
    if (stat) this.seen.set(root, stat.start);
  }

  /** Records the run's current processes (call it periodically while the run lives). */
  poll(): void {
    this.members(false);
  }

  /** The run's live processes (zombies excluded: they hold nothing and only wait to be reaped). */
  members(readEnviron = true): ProcStat[] {
    const stats = allPids()
      .filter((pid) => pid !== process.pid)
      .map(readStat)
      .filter((s): s is ProcStat => s !== undefined);
    const inRun = new Set<number>();
    for (const s of stats) {
      const known = this.seen.get(s.pid) === s.start;
      if (known || s.sid === this.root || s.pgid === this.root || (readEnviron && environHas(s.pid, this.marker))) inRun.add(s.pid);
    }
    // Descendants of members, to a fixed point (the list is not ordered by ancestry).
    for (let grew = true; grew; ) {
      grew = false;
      for (const s of stats) {
        if (!inRun.has(s.pid) && inRun.has(s.ppid)) {
          inRun.add(s.pid);
          grew = true;
        }
      }
    }
    const members = stats.filter((s) => inRun.has(s.pid));
    for (const s of members) this.seen.set(s.pid, s.start);
    return members.filter((s) => s.state !== "Z" && s.state !== "X");
  }

  signal(signal: NodeJS.Signals): number[] {
    const hit: number[] = [];
    for (const s of this.members()) {
      try {
        process.kill(s.pid, signal);
        hit.push(s.pid);
      } catch {
        // gone already, or not ours to signal
      }
    }
    return hit;
  }
}

/**
 * SIGKILLs the run's processes until none is left, or `maxMs` passes; returns the pids that
 * would not die (the caller must not report a pass then).
 */
export async function reapRun(tracker: RunTracker, maxMs: number): Promise<number[]> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const left = tracker.signal("SIGKILL");
    if (left.length === 0) return [];
    if (Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}
