// Routes each examined log line to the detectors. A line is cleaned (job-log timestamp, ANSI
// colours, progress-bar redraws), split at `[rankN]:` prefixes (ranks share one pipe, so a
// physical line may hold several ranks' output) and each segment goes, in this order, to the
// open multi-line blocks (config dumps, torchrun's box, tracebacks) and then, when it holds an
// anchor, to the detectors that anchor concerns.
import { Findings } from "./findings.ts";
import { ChildFailedDetector } from "./detectors/child-failed.ts";
import { ConfigDetector } from "./detectors/config.ts";
import { DecentralizedPgDetector } from "./detectors/decentralized-pg.ts";
import { IterationDetector } from "./detectors/iterations.ts";
import { ProbeReportDetector } from "./detectors/probe-reports.ts";
import { ProcessGroupDetector } from "./detectors/process-groups.ts";
import { SignatureDetector } from "./detectors/signatures.ts";
import { TracebackDetector } from "./detectors/tracebacks.ts";
import { ANCHOR_FROM, ANCHOR_TEST } from "./anchors.ts";

/** Longest line examined; the rest of a longer line is ignored (lines this long are data dumps). */
export const MAX_LINE = 65_536;

const JOB_LOG_STAMP_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?/;
// ANSI CSI / OSC sequences (colours, cursor moves) that coloured loggers and tqdm emit.
const ANSI_RE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;
// What a failure on a CP group's own INFO line holds (the nccl-watchdog signatures, or an error);
// healthy groups print "watchdog thread joined" and the like at teardown.
const CP_GROUP_FAILURE_RE = /rror|Watchdog caught|by watchdog|thread terminated/;
const CP_GROUP_EXTRA_RE = new RegExp(`${CP_GROUP_FAILURE_RE.source}|HCP-PROBE`, "g");
const RANK_PREFIX_RE = /\[rank(\d+)\]:/g;

/**
 * The first `[rankN]:` at or after `from`. indexOf finds where one may start far faster than
 * the regex can rule one out, and most examined lines have no prefix after their first (or
 * none at all: Bridge's iteration lines); the regex then starts there, so the match is the same.
 */
function nextRankPrefix(text: string, from: number): RegExpExecArray | null {
  const at = text.indexOf("[rank", from);
  if (at < 0) return null;
  RANK_PREFIX_RE.lastIndex = at;
  return RANK_PREFIX_RE.exec(text);
}

export class LogReader {
  readonly findings = new Findings();
  readonly config: ConfigDetector;
  readonly groups: ProcessGroupDetector;
  readonly probe: ProbeReportDetector;
  readonly iterations: IterationDetector;
  readonly tracebacks: TracebackDetector;
  readonly box: ChildFailedDetector;
  readonly signatures: SignatureDetector;
  readonly decentralized: DecentralizedPgDetector;
  examined = 0;
  /**
   * The line being read lost colour codes (words may have joined into an anchor) or everything
   * up to a progress bar's "\r": its text is no longer the scanned line minus a prefix.
   */
  private rewritten = false;

  constructor(probeKey: string | undefined, previousLine: () => string) {
    const f = this.findings;
    this.config = new ConfigDetector(f);
    this.groups = new ProcessGroupDetector(f);
    this.probe = new ProbeReportDetector(f, probeKey);
    this.iterations = new IterationDetector(f);
    this.box = new ChildFailedDetector(f);
    this.tracebacks = new TracebackDetector(f, previousLine, (line) => this.box.open(line));
    this.signatures = new SignatureDetector(f);
    this.decentralized = new DecentralizedPgDetector(f);
  }

  /** A multi-line block is open: the stream must hand over every line, not only anchored ones. */
  needEveryLine(): boolean {
    return this.tracebacks.size > 0 || this.box.isOpen || this.config.isOpen;
  }

  /**
   * One physical line. `anchor`: the first anchor the scan found in it ("" when the line comes
   * from line-by-line reading and may hold none).
   */
  line(raw: string, line: number, anchor = ""): void {
    this.examined++;
    // torch's construction lines (one per group and rank) need only their own regex, which
    // reads the global rank from the line itself: no cleaning, no rank split.
    if (anchor === "TIMEOUT(ms)" && this.construction(raw)) return;
    let text = raw.length > MAX_LINE ? raw.slice(0, MAX_LINE) : raw;
    // A GitHub Actions job log (the bot's fallback when no artifact was uploaded) starts every
    // line with an ISO timestamp; tracebacks and torchrun's box are matched from line start.
    if (text.charCodeAt(10) === 0x54 /* T */ && text.charCodeAt(4) === 0x2d /* - */) text = text.replace(JOB_LOG_STAMP_RE, "");
    // Colour codes are removed per examined line: scanning every block for ESC costs more than
    // it saves, and loggers colour whole tokens, so anchors are not split by them.
    this.rewritten = text.includes("\x1b");
    if (this.rewritten) text = text.replace(ANSI_RE, "");
    // charCodeAt, not endsWith: V8's endsWith costs as much as a scan of the line.
    while (text.charCodeAt(text.length - 1) === 0x0d /* \r */) text = text.slice(0, -1);
    if (text.includes("\r")) {
      text = text.slice(text.lastIndexOf("\r") + 1); // progress-bar redraws
      this.rewritten = true;
    }
    let start = 0;
    let rank: number | null = null;
    let segments = 0;
    let m = nextRankPrefix(text, 0);
    if (m === null) return this.segment(text, null, line, text, anchor);
    for (; m !== null; m = nextRankPrefix(text, RANK_PREFIX_RE.lastIndex)) {
      if (m.index > start) {
        this.segment(text.slice(start, m.index), rank, line, text, "");
        segments++;
      }
      rank = Number(m[1]);
      start = m.index + m[0].length;
      if (text.charCodeAt(start) === 0x20 && text.charCodeAt(start + 1) !== 0x20) start++; // "[rank0]: Traceback"
    }
    // One prefix at the start (the common case): the rest is still the anchored line.
    this.segment(text.slice(start), rank, line, text, segments === 0 ? anchor : "");
  }

  /** True when the line was a construction line and nothing else on it can matter. */
  private construction(raw: string): boolean {
    if (raw.length > MAX_LINE || raw.includes("\x1b") || raw.includes("\r")) return false;
    ANCHOR_FROM.lastIndex = raw.indexOf("TIMEOUT(ms)") + 11;
    if (ANCHOR_FROM.test(raw)) return false;
    this.groups.construction(raw);
    return true;
  }

  finish(nextLine: number): void {
    this.config.finish(nextLine);
    this.box.finish();
    this.tracebacks.finish();
  }

  private segment(seg: string, rank: number | null, line: number, whole: string, anchor: string): void {
    if (this.config.isOpen && this.config.feed(seg, line)) return;
    if (this.box.isOpen) this.box.feed(seg, line);
    if (this.tracebacks.size > 0 && this.tracebacks.feed(seg, rank, line)) return;
    if (anchor === "" && !ANCHOR_TEST.test(seg)) return;
    this.examine(seg, rank, line, whole, anchor);
  }

  private examine(seg: string, rank: number | null, line: number, whole: string, anchor: string): void {
    // Fast paths for the two frequent kinds of line (iteration lines, torch PG INFO lines):
    // they carry nothing else the verdict needs, except a watchdog failure on a CP group or a
    // report that an old probe glued to the line.
    if (anchor === "iteration" && this.iterations.iteration(seg, line)) return;
    if (anchor === "CONTEXT_PARALLEL_GROUP") {
      this.groups.names(seg, rank, line, whole);
      // One scan for both rare cases; only a hit pays for telling them apart. The words it
      // looks for are anchors, and the scan found none before this one (the line's leftmost)
      // nor can one start inside it: the search starts after it, unless the line was
      // rewritten (then anything before it may be new).
      const at = this.rewritten ? -1 : seg.indexOf("CONTEXT_PARALLEL_GROUP");
      CP_GROUP_EXTRA_RE.lastIndex = at < 0 ? 0 : at + 22;
      if (CP_GROUP_EXTRA_RE.test(seg)) {
        if (CP_GROUP_FAILURE_RE.test(seg)) this.signatures.failureLine(seg, rank, line);
        if (seg.includes("HCP-PROBE")) this.probe.line(seg, line);
      }
      return;
    }
    if (seg.includes("TIMEOUT(ms)")) this.groups.construction(seg);
    if (seg.includes("CONTEXT_PARALLEL_GROUP")) this.groups.names(seg, rank, line, whole);
    if (seg.includes("HCP-PROBE")) this.probe.line(seg, line);
    if (seg.includes("HyperCommGrid")) this.decentralized.line(seg, line);
    if (seg.includes("iteration")) {
      if (this.iterations.iteration(seg, line)) return;
      this.iterations.loopStart(seg, line);
    }
    if (seg.includes("Traceback (most recent call last)")) this.tracebacks.start(rank, line, seg);
    else if (seg.includes("ChildFailedError")) this.box.open(line);
    else if (seg.includes("rror") || seg.includes("NaN") || seg.includes("Watchdog caught") || seg.includes("by watchdog") || seg.includes("thread terminated")) {
      this.signatures.failureLine(seg, rank, line);
    }
    if (seg.includes("after training is done")) this.iterations.done(seg, line);
    if (seg.includes("context") || seg.includes("cp_comm_type") || seg.includes("onfigurat")) this.config.line(seg, line);
  }
}
