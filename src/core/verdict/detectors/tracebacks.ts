// Detector: Python tracebacks, one open per rank (ranks interleave on one pipe). A traceback
// is read line by line from `Traceback (most recent call last)` to its exception line; the
// exception becomes a failure candidate: a catalogue match (with its rule), the bare M4
// assertion on the hierarchical sizes, a NaN, or a plain python-exception.
import { M4_RULE, matchSignature } from "../catalog.ts";
import { clip, type Findings } from "../findings.ts";
import { signatureCause } from "./signatures.ts";

const MAX_TRACEBACKS = 64;
/** Lines an open traceback may go without a frame before it is given up (interleaved output). */
const TRACEBACK_IDLE_LIMIT = 60;
const FRAME_RE = /^\s*File "([^"]*)", line (\d+), in (.*)$/;
const EXCEPTION_RE = /^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::\s?(.*))?$/;
const EXCEPTION_NAME_RE = /(?:Error|Exception|Exit|Interrupt|Warning|Failure|Timeout|StopIteration)$/;

type TracebackState = {
  line: number;
  text: string;
  lastFile: string | null;
  lastFrameLine: number | null;
  lastSource: string | null;
  expectSource: boolean;
  idle: number;
  /** Printed after "Exception ignored in …": benign (e.g. a __del__ at interpreter exit). */
  ignored: boolean;
};

export class TracebackDetector {
  private readonly open = new Map<number, TracebackState>();

  constructor(
    private readonly findings: Findings,
    /** The physical line before the current one ("Exception ignored in: …" marks a benign traceback). */
    private readonly previousLine: () => string,
    /** A traceback ending in ChildFailedError is torchrun's: its failure box follows. */
    private readonly openBox: (line: number) => void,
  ) {}

  get size(): number {
    return this.open.size;
  }

  start(rank: number | null, line: number, seg: string): void {
    const key = rank ?? -1;
    const existing = this.open.get(key);
    if (existing) {
      // A chained exception ("During handling of the above exception…") restarts the frames.
      existing.idle = 0;
      existing.lastFile = null;
      existing.lastSource = null;
      return;
    }
    if (this.open.size >= MAX_TRACEBACKS) return;
    this.open.set(key, {
      line,
      text: seg,
      lastFile: null,
      lastFrameLine: null,
      lastSource: null,
      expectSource: false,
      idle: 0,
      ignored: this.previousLine().includes("Exception ignored"),
    });
  }

  /** Returns true when the segment was consumed as part of a traceback. */
  feed(seg: string, rank: number | null, line: number): boolean {
    const key = rank ?? -1;
    const tb = this.open.get(key);
    if (!tb) {
      this.age();
      return false;
    }
    const frame = FRAME_RE.exec(seg);
    if (frame) {
      tb.lastFile = frame[1]!;
      tb.lastFrameLine = Number(frame[2]);
      tb.expectSource = true;
      tb.idle = 0;
      return true;
    }
    if (seg.startsWith("  ") || seg.startsWith("\t")) {
      const src = seg.trim();
      if (tb.expectSource && src && !/^[\^~\s]+$/.test(src)) {
        tb.lastSource = clip(src, 200);
        tb.expectSource = false;
      }
      tb.idle = 0;
      return true;
    }
    if (seg.trim() === "") return true;
    const ex = EXCEPTION_RE.exec(seg.trim());
    if (ex && EXCEPTION_NAME_RE.test(ex[1]!)) {
      this.open.delete(key);
      this.close(tb, ex[1]!, ex[2] ?? "", rank, line, seg.trim());
      return true;
    }
    if (++tb.idle > TRACEBACK_IDLE_LIMIT) {
      this.open.delete(key);
      this.giveUp(tb, rank);
    }
    return false;
  }

  /** The end of the log: tracebacks still open never printed their exception. */
  finish(): void {
    for (const [key, tb] of this.open) this.giveUp(tb, key < 0 ? null : key);
    this.open.clear();
  }

  private age(): void {
    for (const [key, tb] of this.open) {
      if (++tb.idle > TRACEBACK_IDLE_LIMIT) {
        this.open.delete(key);
        this.giveUp(tb, key < 0 ? null : key);
      }
    }
  }

  private giveUp(tb: TracebackState, rank: number | null): void {
    if (tb.ignored) return;
    this.findings.addCandidate({
      kind: "python-exception",
      message: `a traceback${rank === null ? "" : ` on rank ${rank}`} without a final exception line${tb.lastFile ? ` (last frame ${tb.lastFile}:${tb.lastFrameLine})` : ""}`,
      line: tb.line,
      rank,
      text: clip(tb.text),
    });
  }

  private close(tb: TracebackState, type: string, message: string, rank: number | null, line: number, text: string): void {
    if (type.endsWith("ChildFailedError")) {
      this.openBox(line);
      return;
    }
    if (tb.ignored) {
      this.findings.note(`line ${line}: ignored exception at interpreter exit (${clip(text, 120)})`);
      return;
    }
    const full = message ? `${type}: ${message}` : type;
    const sig = matchSignature(full);
    if (sig) {
      this.findings.addCandidate(signatureCause(sig, full, line, rank, text));
      return;
    }
    if (type === "AssertionError" && !message && tb.lastSource?.includes("hierarchical_context_parallel_sizes")) {
      // M4: bare assert np.prod(sizes) == context_parallel_size (parallel_state.py) or M10 (arguments.py).
      this.findings.addCandidate({
        kind: "config-assertion",
        message: `AssertionError at ${tb.lastFile}:${tb.lastFrameLine}: ${tb.lastSource}`,
        line,
        rank,
        ruleId: M4_RULE.ruleId,
        upstream: M4_RULE.upstream,
        text: clip(text),
      });
      return;
    }
    if (/\bnan\b/i.test(message) && /loss|grad/i.test(message)) {
      this.findings.addCandidate({ kind: "nan-loss", message: clip(full), line, rank, text: clip(text) });
      return;
    }
    const where = !message && tb.lastFile ? ` at ${tb.lastFile}:${tb.lastFrameLine}${tb.lastSource ? `: ${tb.lastSource}` : ""}` : "";
    this.findings.addCandidate({ kind: "python-exception", message: clip(full + where), line, rank, text: clip(text) });
  }
}
