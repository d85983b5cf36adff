// Detector: torchrun's ChildFailedError box (fixtures/logs/README.md, "torchrun failure box"):
// the script, the `Root Cause (first observed failure)` entry and the other `Failures:`.
// `[0]:`/`[1]:` are entry indexes, not ranks; the rank is the entry's `rank :` field.
import type { Findings } from "../findings.ts";
import type { ChildFailed, ChildFailure } from "../schema.ts";

const MAX_BOX_FAILURES = 16;
const BOX_LINE_LIMIT = 400;
const BOX_FIELD_RE = /^\s*(rank|exitcode|traceback)\s*:\s*(.*)$/;
const SIGNAL_RE = /Signal (\d+) \((SIG[A-Z0-9]+)\)/;
const SIGNAL_NAMES: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM" };

type BoxState = {
  line: number;
  lines: number;
  phase: "head" | "failures" | "root";
  script: string | null;
  current: ChildFailure | null;
  root: ChildFailure | null;
  failures: ChildFailure[];
};

function emptyChildFailure(): ChildFailure {
  return { rank: null, localRank: null, exitcode: null, signal: null, pid: null };
}

function parseField(current: ChildFailure, field: string, value: string): void {
  if (field === "rank") {
    const m = /^(-?\d+)(?: \(local_rank: (\d+)\))?/.exec(value);
    if (m) {
      current.rank = Number(m[1]);
      current.localRank = m[2] !== undefined ? Number(m[2]) : null;
    }
  } else if (field === "exitcode") {
    const m = /^(-?\d+)(?: \(pid: (\d+)\))?/.exec(value);
    if (m) {
      current.exitcode = Number(m[1]);
      current.pid = m[2] !== undefined ? Number(m[2]) : null;
    }
  } else if (field === "traceback") {
    const m = SIGNAL_RE.exec(value);
    if (m) current.signal = m[2]!;
  }
}

export class ChildFailedDetector {
  private box: BoxState | null = null;
  private result: ChildFailed | null = null;

  constructor(private readonly findings: Findings) {}

  get isOpen(): boolean {
    return this.box !== null;
  }

  /** `ChildFailedError` seen: the box follows (only the first box of a log is read). */
  open(line: number): void {
    if (this.box || this.result) return;
    this.box = { line, lines: 0, phase: "head", script: null, current: null, root: null, failures: [] };
  }

  feed(seg: string, line: number): void {
    const b = this.box!;
    if (++b.lines > BOX_LINE_LIMIT) return this.close();
    const t = seg.trim();
    if (t.endsWith(" FAILED") && b.script === null) b.script = t.slice(0, -" FAILED".length);
    else if (t === "Failures:") b.phase = "failures";
    else if (t.startsWith("Root Cause")) b.phase = "root";
    else if (/^\[\d+\]:$/.test(t)) {
      const entry = emptyChildFailure();
      if (b.phase === "root" && !b.root) b.root = entry;
      else if (b.phase === "failures" && b.failures.length < MAX_BOX_FAILURES) b.failures.push(entry);
      b.current = entry;
      this.findings.addEvidence("child-failed", line, seg);
    } else if (b.current) {
      const f = BOX_FIELD_RE.exec(seg);
      if (f) parseField(b.current, f[1]!, f[2]!.trim());
      else if (/^={5,}$/.test(t) && b.phase === "root") return this.close();
    }
  }

  finish(): void {
    if (this.box) this.close();
  }

  private close(): void {
    const b = this.box!;
    this.box = null;
    for (const f of [b.root, ...b.failures]) {
      if (f && f.signal === null && f.exitcode !== null && f.exitcode < 0) f.signal = SIGNAL_NAMES[-f.exitcode] ?? `signal ${-f.exitcode}`;
    }
    this.result = { script: b.script, rootCause: b.root, failures: b.failures, line: b.line };
    const r = b.root;
    const what = r
      ? `rank ${r.rank ?? "?"} (local_rank ${r.localRank ?? "?"}) ${r.signal ? `killed by ${r.signal}` : `exited with ${r.exitcode ?? "?"}`}`
      : "no root cause listed";
    this.findings.addCandidate({ kind: "child-failed", message: `torchrun ChildFailedError: ${b.script ?? "the script"} failed; root cause ${what}`, line: b.line, rank: r?.rank ?? null });
  }

  facts(): { childFailed: ChildFailed | null } {
    return { childFailed: this.result };
  }
}
