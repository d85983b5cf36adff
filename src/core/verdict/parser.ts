// Streaming smoke-run verdict. Reads a torchrun log chunk by chunk (bytes or strings, split
// anywhere) in constant memory and decides whether the HCP smoke run really passed.
//
// Hot path: a log is mostly lines that matter to nobody (NCCL/c10d INFO, warnings, per-step
// chatter). A block of complete lines is searched for literal anchors (anchors.ts); only lines
// containing an anchor are cut out and examined. Line-by-line reading is switched on only
// while a multi-line structure is open (a Python traceback, the torchrun ChildFailedError box,
// a YAML config dump), and those are short.
//
// Two ways to find the anchored lines, with identical results:
// - bytes (the CLI, the bot): kept in WebAssembly memory and searched there with SIMD
//   (scan/anchor-scan.wat) before decoding; about 3x faster than the regex.
// - strings, non-ASCII blocks, or runtimes without WebAssembly: one global regex.
//
// Memory: the partial last line (capped at MAX_LINE), per-rank traceback states (capped),
// and capped evidence/candidate lists. Nothing grows with the log.
import { matchSignature, M4_RULE, DENSE_BF16_PEAK_TFLOPS, normaliseGpu } from "./catalog.ts";
import { parseProbeLine } from "./probe.ts";
import { ANCHORS } from "./anchors.ts";
import { WasmAnchorScanner, type AnchorHits } from "./scan/wasm-scanner.ts";
import {
  VerdictOptionsSchema,
  type Cause,
  type CauseKind,
  type ChildFailed,
  type ChildFailure,
  type Evidence,
  type Iteration,
  type Verdict,
  type VerdictConfig,
  type VerdictOptions,
} from "./schema.ts";

export interface VerdictEndExtra {
  /** The harness killed the run at its time limit. */
  timedOut?: boolean;
  /** The harness stopped the run because it was cancelled (the signal it received). */
  cancelledBy?: string;
  /** The signal that ended torchrun, e.g. "SIGKILL". */
  signal?: string;
}

export { ANCHORS };

export interface VerdictParser {
  push(chunk: string | Uint8Array): void;
  end(exitCode?: number | null, extra?: VerdictEndExtra): Verdict;
  /** Sizes of the internal state, for tests that check memory stays bounded. */
  stateSize(): { carryChars: number; tracebacks: number; candidates: number; evidence: number };
  /** "wasm" once a block of the log was searched by the WebAssembly scanner. */
  readonly scanEngine: "wasm" | "regex";
}

/** Longest line examined; the rest of a longer line is ignored (lines this long are data dumps). */
export const MAX_LINE = 65_536;
/** Size of the byte slices the decoder and the scan work on (see push). */
const SLICE_BYTES = 65_536;
const MAX_TEXT = 300;
const MAX_TRACEBACKS = 64;
const MAX_CANDIDATES = 32;
const MAX_NOTES = 16;
const MAX_BOX_FAILURES = 16;
const MAX_LIST_ITEMS = 1024;
/** Lines an open traceback may go without a frame before it is given up (interleaved output). */
const TRACEBACK_IDLE_LIMIT = 60;
const BOX_LINE_LIMIT = 400;
const YAML_LINE_LIMIT = 50_000;
/**
 * The most bytes a partial line of at most MAX_LINE characters takes (3 bytes per UTF-16 unit
 * at most) plus a UTF-8 sequence cut at its end: what the byte path may have to keep.
 */
const MAX_LINE_BYTES = 3 * MAX_LINE + 3;


function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const ANCHOR_SOURCE = ANCHORS.map(escapeRegex).join("|");
const ANCHOR_TEST = new RegExp(ANCHOR_SOURCE);
const ANCHOR_GLOBAL = new RegExp(ANCHOR_SOURCE, "g");

// ANSI CSI / OSC sequences (colours, cursor moves) that coloured loggers and tqdm emit.
/** What a run killed by a signal prints about the kill itself. */
const KILL_ECHO_RE = /SignalException|got signal: ?(?:2|9|15)\b|KeyboardInterrupt|SIG(?:TERM|KILL|INT)\b|Signal (?:2|9|15) \(/;
const JOB_LOG_STAMP_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?/;
const ANSI_RE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;
// What a failure on a CP group's own INFO line holds (the nccl-watchdog signatures, or an error);
// healthy groups print "watchdog thread joined" and the like at teardown.
const CP_GROUP_FAILURE_RE = /rror|Watchdog caught|by watchdog|thread terminated/;
const RANK_PREFIX_RE = /\[rank(\d+)\]:/g;
const PG_DESC_RE = /PG GUID \d+\((HIERARCHICAL_)?CONTEXT_PARALLEL_GROUP(?:_L(\d+))?\)/g;
const ITERATION_RE = /\biteration\s+(\d+)\s*\/\s*(\d+)\s*\|/;
const START_LOOP_RE = /Starting training loop at iteration (\d+)/;
const FRAME_RE = /^\s*File "([^"]*)", line (\d+), in (.*)$/;
const EXCEPTION_RE = /^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::\s?(.*))?$/;
const EXCEPTION_NAME_RE = /(?:Error|Exception|Exit|Interrupt|Warning|Failure|Timeout|StopIteration)$/;
const CONFIG_KEY_RE =
  /(?:^|[\s'"])(cp_comm_type|context_parallel_size|hierarchical_context_parallel_sizes|use_decentralized_pg|eval_context_parallel_size):\s*(.*)$/;
const MLM_CP_RE = /(?:^|\s)context-parallel size: (\d+)/;
const MLM_HCP_RE = /hierarchical context-parallel sizes: (\[[^\]]*\]|None)/;
const BOX_FIELD_RE = /^\s*(rank|exitcode|traceback)\s*:\s*(.*)$/;
const LAUNCHER_FAIL_RE = /failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)/;
const SIGNAL_RE = /Signal (\d+) \((SIG[A-Z0-9]+)\)/;

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

type Candidate = Cause & { priority: number };

type BoxState = {
  line: number;
  lines: number;
  phase: "head" | "failures" | "root";
  script: string | null;
  current: ChildFailure | null;
  root: ChildFailure | null;
  failures: ChildFailure[];
};

/** Lower wins when several failures were seen: the most specific explanation first. */
const PRIORITY: Record<CauseKind, number> = {
  "config-assertion": 1,
  "hydra-override": 1,
  "te-assertion": 2,
  "cuda-oom": 3,
  "nan-loss": 4,
  nccl: 5,
  "python-exception": 6,
  timeout: 7,
  "child-failed": 8,
  "nonzero-exit": 9,
  truncated: 10,
  "no-training-step": 11,
  "hcp-flat": 12,
  "config-mismatch": 12,
  "implausible-throughput": 12,
  "hcp-unverified": 13,
};

const EVIDENCE_CAPS: Record<Evidence["kind"], number> = {
  hcp: 6,
  "flat-cp": 3,
  probe: 4,
  config: 8,
  iteration: 2,
  failure: 10,
  "child-failed": 4,
  marker: 4,
  throughput: 2,
};

function clip(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

function num(text: string | undefined): number | null {
  if (text === undefined) return null;
  const n = Number(text.trim());
  return Number.isFinite(n) ? n : null;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** UTF-8 length of `s`; a lone surrogate counts 3 bytes (TextEncoder writes U+FFFD for it). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (isHighSurrogate(c) && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** `'a2a+p2p'`, `a2a+p2p`, `['p2p', 'a2a']`, `None` → list of strings or null. */
function parseStringList(value: string): string[] | null {
  const v = value.trim();
  if (v === "" || v === "None" || v === "null" || v === "~") return null;
  const inner = v.startsWith("[") && v.endsWith("]") ? v.slice(1, -1) : v;
  return inner
    .split(",")
    .map((s) => s.trim().replace(/^['"]|['"]$/g, ""))
    .filter((s) => s.length > 0);
}

function parseIntList(value: string): number[] | null {
  const items = parseStringList(value);
  if (!items) return null;
  const nums = items.map((s) => Number(s));
  return nums.every((n) => Number.isFinite(n)) ? nums : null;
}

function parseBool(value: string): boolean | null {
  const v = value.trim().replace(/^['"]|['"]$/g, "").toLowerCase();
  return v === "true" ? true : v === "false" ? false : null;
}

/** `  cp_comm_type: 'a2a+p2p'  (Mcore default: None)` → `'a2a+p2p'`. */
function stripDefaultNote(value: string): string {
  return value.replace(/\s+\((?:Mcore )?default: .*\)\s*$/, "").trim();
}

function parseChildFailureField(current: ChildFailure, field: string, value: string): void {
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

/** Only HCP-RULES section 3 ids (B6, M8, T1) are upstream checks; "oom", "nccl-…" are ours. */
function upstreamId(id: string): string | undefined {
  return /^[BMT]\d+$/.test(id) ? id : undefined;
}

/** Length of the prefix of `b` that ends on a UTF-8 sequence boundary (looks at most 3 bytes back). */
export function completeUtf8Length(b: Uint8Array): number {
  const len = b.length;
  for (let back = 1; back <= 3 && back <= len; back++) {
    const byte = b[len - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? len - back : len;
  }
  return len;
}

function emptyChildFailure(): ChildFailure {
  return { rank: null, localRank: null, exitcode: null, signal: null, pid: null };
}

const SIGNAL_NAMES: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM" };

function countNewlines(t: string, from: number, to: number): number {
  let n = 0;
  let i = t.indexOf("\n", from);
  while (i >= 0 && i < to) {
    n++;
    i = t.indexOf("\n", i + 1);
  }
  return n;
}

/** An anchored line of a block: filled in place by a finder (no allocation per line). */
interface FoundLine {
  start: number;
  /** Index of the line's "\n". */
  end: number;
  /** The line's first anchor. */
  anchor: string;
  /** Newlines between the block start and the line. */
  linesBefore: number;
}

/** Finds a block's anchored lines, in order. */
interface AnchorFinder {
  /** The first anchored line starting at or after `from` (a line start): false when none is left. */
  next(from: number, found: FoundLine): boolean;
  /** The block's line count, asked once all lines are handled. */
  blockLines(): number;
}

/** The regex finder (strings, non-ASCII blocks, runtimes without WebAssembly). */
function regexFinder(block: string): AnchorFinder {
  const anchor = ANCHOR_GLOBAL;
  // Newlines are counted as the search moves on, never twice.
  let countedTo = 0;
  let counted = 0;
  const countTo = (to: number) => {
    counted += countNewlines(block, countedTo, to);
    countedTo = to;
    return counted;
  };
  return {
    next(from, found) {
      anchor.lastIndex = from;
      const m = anchor.exec(block);
      if (!m) return false;
      found.start = m.index === 0 ? 0 : block.lastIndexOf("\n", m.index - 1) + 1;
      found.end = block.indexOf("\n", m.index);
      found.anchor = m[0];
      found.linesBefore = countTo(found.start);
      return true;
    },
    blockLines: () => countTo(block.length),
  };
}

/** The lines the WebAssembly scanner found in the block's bytes (ASCII: byte offsets are string offsets). */
function hitsFinder(hits: AnchorHits): AnchorFinder {
  const data = hits.data;
  let h = 0;
  return {
    next(from, found) {
      while (h < hits.count && data[h * 4]! < from) h++;
      if (h === hits.count) return false;
      found.start = data[h * 4]!;
      found.end = data[h * 4 + 1]!;
      found.anchor = ANCHORS[data[h * 4 + 2]!]!;
      found.linesBefore = data[h * 4 + 3]!;
      h++;
      return true;
    },
    blockLines: () => hits.newlines,
  };
}

export function createVerdictParser(options: VerdictOptions): VerdictParser {
  const opts = VerdictOptionsSchema.parse(options);
  const decoder = new TextDecoder("utf-8");
  /** Bytes of a UTF-8 sequence cut by the chunk boundary (at most 3), joined to the next chunk. */
  let pendingBytes: Uint8Array | null = null;

  // Stream position. Bytes go to the WebAssembly scanner's buffer (byte path) when it is
  // available and the stream started with bytes; otherwise they are decoded into `carry`.
  let scanner: WasmAnchorScanner | null = null;
  let pathChosen = false;
  let wasmScanned = false;
  let endsWithHighSurrogate = false;
  let carry = "";
  let skippingLongLine = false;
  let linesDone = 0;
  let bytes = 0;
  let examined = 0;

  // Evidence
  const evidence: Evidence[] = [];
  const evidenceCount: Record<string, number> = {};
  const hcpEvidence: Evidence[] = [];
  let hierarchicalLines = 0;
  let flatLines = 0;
  let flatTornDown = false;
  const levels = new Set<number>();
  let probeReports = 0;
  let probeSaysFlat = false;
  let probeSaysHcp = false;
  const notes: string[] = [];

  // Iterations and throughput
  let iterCount = 0;
  let finiteLossCount = 0;
  let nanIterations = 0;
  let skippedIterations = 0;
  let firstIter: Iteration | null = null;
  let lastIterRaw: { iteration: number; seg: string; line: number } | null = null;
  let firstNanLine: number | null = null;
  let startIteration: number | null = null;
  let tflopsSamples = 0;
  let maxTflops: number | null = null;
  let maxTflopsLine: number | null = null;

  // Config
  const config: VerdictConfig = {
    cpCommType: null,
    contextParallelSize: null,
    hierarchicalSizes: null,
    hierarchicalSizesState: "unknown",
    useDecentralizedPg: null,
    evalContextParallelSize: null,
    sources: [],
  };
  let yamlMode: { lines: number; section: string | null } | null = null;
  let pendingList: { key: string; items: string[]; source: "summary" | "yaml" } | null = null;
  let configSummary = false;
  let finalConfiguration = false;

  // Failures
  const tracebacks = new Map<number, TracebackState>();
  // The block being scanned and where the current line starts in it, so a traceback can look
  // at the line before it ("Exception ignored in: …") without every line being examined.
  let curBlock = "";
  let curLineStart = 0;
  let lastLineOfPrevBlock = "";
  const candidates: Candidate[] = [];
  let box: BoxState | null = null;
  let childFailed: ChildFailed | null = null;
  let launcherFailure: { line: number; exitcode: number; localRank: number } | null = null;
  let trainingDone = false;
  let trainingDoneLine: number | null = null;

  function note(text: string): void {
    if (notes.length < MAX_NOTES && !notes.includes(text)) notes.push(text);
  }

  function addEvidence(kind: Evidence["kind"], line: number, text: string): void {
    const n = evidenceCount[kind] ?? 0;
    if (n >= EVIDENCE_CAPS[kind]) return;
    evidenceCount[kind] = n + 1;
    evidence.push({ kind, line, text: clip(text) });
  }

  function addCandidate(c: Omit<Candidate, "priority">): void {
    const duplicate = candidates.some((o) => o.kind === c.kind && o.ruleId === c.ruleId && o.rank === c.rank && o.upstream === c.upstream);
    if (duplicate || candidates.length >= MAX_CANDIDATES) return;
    candidates.push({ ...c, priority: PRIORITY[c.kind] });
    if (c.line !== null && c.text !== undefined) addEvidence("failure", c.line, c.text);
  }

  // ---- line dispatch -------------------------------------------------------------------

  function needEveryLine(): boolean {
    return tracebacks.size > 0 || box !== null || yamlMode !== null || pendingList !== null;
  }

  /** `anchored`: found by the anchor scan (so the line holds an anchor somewhere). */
  function processLine(raw: string, line: number, anchored = false): void {
    examined++;
    let text = raw.length > MAX_LINE ? raw.slice(0, MAX_LINE) : raw;
    // A GitHub Actions job log (the bot's fallback when no artifact was uploaded) starts every
    // line with an ISO timestamp; tracebacks and torchrun's box are matched from line start.
    if (text.charCodeAt(10) === 0x54 /* T */ && text.charCodeAt(4) === 0x2d /* - */) text = text.replace(JOB_LOG_STAMP_RE, "");
    // Colour codes are removed per examined line: scanning every block for ESC costs more than
    // it saves, and loggers colour whole tokens, so anchors are not split by them.
    if (text.includes("\x1b")) text = text.replace(ANSI_RE, "");
    while (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.includes("\r")) text = text.slice(text.lastIndexOf("\r") + 1); // progress-bar redraws
    if (text.includes("[rank")) {
      // Ranks share one pipe; a physical line may hold several `[rankN]:` segments.
      RANK_PREFIX_RE.lastIndex = 0;
      let m: RegExpExecArray | null;
      let start = 0;
      let rank: number | null = null;
      let segments = 0;
      while ((m = RANK_PREFIX_RE.exec(text)) !== null) {
        if (m.index > start) {
          handleSegment(text.slice(start, m.index), rank, line, text, false);
          segments++;
        }
        rank = Number(m[1]);
        start = m.index + m[0].length;
        if (text.charCodeAt(start) === 0x20 && text.charCodeAt(start + 1) !== 0x20) start++; // "[rank0]: Traceback"
      }
      // One prefix at the start (the common case): the rest is still the anchored line.
      handleSegment(text.slice(start), rank, line, text, anchored && segments === 0);
    } else handleSegment(text, null, line, text, anchored);
  }

  /** `anchored`: the anchor scan already found an anchor in this (unsplit) line. */
  function handleSegment(seg: string, rank: number | null, line: number, whole: string, anchored: boolean): void {
    if (pendingList && feedPendingList(seg)) return;
    if (yamlMode && feedYaml(seg, line)) return;
    if (box) feedBox(seg, line);
    if (tracebacks.size > 0 && feedTraceback(seg, rank, line)) return;
    if (!anchored && !ANCHOR_TEST.test(seg)) return;
    examineSegment(seg, rank, line, whole, anchored);
  }

  function examineSegment(seg: string, rank: number | null, line: number, whole: string, anchored: boolean): void {
    // Fast paths for the two frequent kinds of line (iteration lines, torch PG INFO lines):
    // they carry nothing else the verdict needs, except a watchdog failure on a CP group.
    if (anchored && firstAnchor === "iteration" && readIteration(seg, line)) return;
    if (anchored && firstAnchor === "CONTEXT_PARALLEL_GROUP") {
      readGroupNames(seg, line, whole);
      if (CP_GROUP_FAILURE_RE.test(seg)) readFailureLine(seg, rank, line);
      return;
    }
    if (seg.includes("CONTEXT_PARALLEL_GROUP")) readGroupNames(seg, line, whole);
    if (seg.includes("HCP-PROBE")) readProbe(seg, line);
    if (seg.includes("iteration")) {
      if (readIteration(seg, line)) return;
      const start = START_LOOP_RE.exec(seg);
      if (start) {
        startIteration = Number(start[1]);
        addEvidence("marker", line, seg);
      }
    }
    if (seg.includes("Traceback (most recent call last)")) openTraceback(rank, line, seg);
    else if (seg.includes("ChildFailedError")) openBox(line);
    else if (seg.includes("rror") || seg.includes("NaN") || seg.includes("Watchdog caught") || seg.includes("by watchdog") || seg.includes("thread terminated")) {
      readFailureLine(seg, rank, line);
    }
    if (seg.includes("after training is done")) {
      trainingDone = true;
      trainingDoneLine = line;
      addEvidence("marker", line, seg);
    }
    if (seg.includes("context") || seg.includes("cp_comm_type") || seg.includes("onfigurat")) readConfigLine(seg, line);
  }

  // ---- HCP evidence --------------------------------------------------------------------

  function readGroupNames(seg: string, line: number, whole: string): void {
    // indexOf first: these lines are frequent with TORCH_CPP_LOG_LEVEL=INFO.
    const hierAt = seg.indexOf("(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L");
    const flatAt = seg.indexOf("(CONTEXT_PARALLEL_GROUP)");
    if (hierAt >= 0 && seg.lastIndexOf("PG GUID", hierAt) >= 0) {
      PG_DESC_RE.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = PG_DESC_RE.exec(seg)) !== null) if (m[1] && m[2] !== undefined) levels.add(Number(m[2]));
      hierarchicalLines++;
      if (hcpEvidence.length < 6) hcpEvidence.push({ kind: "hcp", line, text: clip(whole) });
      addEvidence("hcp", line, whole);
    }
    if (flatAt >= 0 && seg.lastIndexOf("PG GUID", flatAt) >= 0) {
      flatLines++;
      // Teardown lines mean the run got past every collective it was going to make.
      if (!flatTornDown && /Destroy complete|Starting to destroy process group|destructor entered/.test(seg)) flatTornDown = true;
      if (hierAt < 0) addEvidence("flat-cp", line, whole);
    }
  }

  function readProbe(seg: string, line: number): void {
    const parsed = parseProbeLine(seg);
    if (!parsed) return;
    if (!parsed.ok) {
      note(`line ${line}: malformed HCP-PROBE report ignored (${clip(parsed.error, 120)})`);
      return;
    }
    probeReports++;
    const r = parsed.report;
    if (r.error) {
      note(`line ${line}: the HCP probe on rank ${r.rank} failed: ${clip(r.error, 160)}`);
      return;
    }
    if (r.levels && r.levels.length > 0) {
      probeSaysHcp = true;
      for (const l of r.levels) levels.add(l.level);
      if (r.levels.some((l) => l.size === 1)) {
        note(`HCP probe rank ${r.rank}: a level has size 1, so a2a+p2p degenerates to plain ${r.levels[0]?.size === 1 ? "p2p" : "a2a"} (HCP004)`);
      }
    } else probeSaysFlat = true;
    if (hcpEvidence.length < 6) hcpEvidence.push({ kind: "probe", line, text: clip(seg) });
    addEvidence("probe", line, seg);
  }

  // ---- iterations ----------------------------------------------------------------------

  /** The value of `| key: value |` in an iteration line, without splitting the whole line. */
  function fieldAfter(seg: string, key: string): string | null {
    const i = seg.indexOf(key);
    if (i < 0) return null;
    const start = i + key.length;
    const end = seg.indexOf("|", start);
    return seg.slice(start, end < 0 ? undefined : end).trim();
  }

  /** The loss of an iteration line: `lm loss`, else the first other `… loss` field (not `loss scale`). */
  function lossText(seg: string): string | null {
    const lm = fieldAfter(seg, "| lm loss:");
    if (lm !== null) return lm;
    const other = /\|\s*([^|:]*\bloss):\s*([^|]*)\|/.exec(seg);
    return other ? other[2]!.trim() : null;
  }

  /**
   * Hot path (every iteration line of a long run): only the four values the verdict needs.
   * The full field set is parsed for the first and the last line only (parseIteration).
   */
  function readIteration(seg: string, line: number): boolean {
    const m = ITERATION_RE.exec(seg);
    if (!m) return false;
    const iteration = Number(m[1]);
    const loss = lossText(seg);
    const lossValue = loss === null ? null : num(loss);
    const lossNonFinite = loss !== null && lossValue === null;
    const nanCounter = num(fieldAfter(seg, "number of nan iterations:") ?? undefined) ?? 0;
    const nanHere = Math.max(nanCounter, lossNonFinite ? 1 : 0);
    iterCount++;
    if (lossValue !== null) finiteLossCount++;
    nanIterations += nanHere;
    skippedIterations += num(fieldAfter(seg, "number of skipped iterations:") ?? undefined) ?? 0;
    if (nanHere > 0 && firstNanLine === null) {
      firstNanLine = line;
      addCandidate({
        kind: "nan-loss",
        message: lossNonFinite ? `iteration ${iteration}: lm loss is ${loss}` : `iteration ${iteration}: number of nan iterations is ${nanCounter}`,
        line,
        rank: null,
        text: clip(seg),
      });
    }
    if (seg.includes("TFLOP/s/GPU")) {
      const tflops = num(fieldAfter(seg, "throughput per GPU (TFLOP/s/GPU):") ?? undefined);
      if (tflops !== null) {
        tflopsSamples++;
        if (maxTflops === null || tflops > maxTflops) {
          maxTflops = tflops;
          maxTflopsLine = line;
        }
      }
    }
    if (firstIter === null) {
      firstIter = parseIteration(seg, line);
      addEvidence("iteration", line, seg);
    }
    if (lastIterRaw === null || iteration >= lastIterRaw.iteration) lastIterRaw = { iteration, seg: clip(seg, 2000), line };
    return true;
  }

  function parseIteration(seg: string, line: number): Iteration | null {
    const m = ITERATION_RE.exec(seg);
    if (!m) return null;
    const it: Iteration = {
      iteration: Number(m[1]),
      total: Number(m[2]),
      consumedSamples: null,
      elapsedMs: null,
      tflopsPerGpu: null,
      learningRate: null,
      globalBatchSize: null,
      lmLoss: null,
      lmLossText: lossText(seg),
      lossScale: null,
      gradNorm: null,
      skippedIterations: 0,
      nanIterations: 0,
      line,
    };
    for (const part of seg.slice(m.index + m[0].length).split("|")) {
      const colon = part.indexOf(":");
      if (colon < 0) continue;
      const value = part.slice(colon + 1).trim();
      switch (part.slice(0, colon).trim()) {
        case "consumed samples": it.consumedSamples = num(value); break;
        case "elapsed time per iteration (ms)": it.elapsedMs = num(value); break;
        case "throughput per GPU (TFLOP/s/GPU)": it.tflopsPerGpu = num(value); break;
        case "learning rate": it.learningRate = num(value); break;
        case "global batch size": it.globalBatchSize = num(value); break;
        case "loss scale": it.lossScale = num(value); break;
        case "grad norm": it.gradNorm = num(value); break;
        case "number of skipped iterations": it.skippedIterations = num(value) ?? 0; break;
        case "number of nan iterations": it.nanIterations = num(value) ?? 0; break;
      }
    }
    it.lmLoss = it.lmLossText === null ? null : num(it.lmLossText);
    return it;
  }

  // ---- tracebacks ----------------------------------------------------------------------

  function previousLine(): string {
    if (curLineStart === 0) return lastLineOfPrevBlock;
    const start = curBlock.lastIndexOf("\n", curLineStart - 2) + 1;
    return curBlock.slice(start, curLineStart - 1);
  }

  function openTraceback(rank: number | null, line: number, seg: string): void {
    const key = rank ?? -1;
    const existing = tracebacks.get(key);
    if (existing) {
      // A chained exception ("During handling of the above exception…") restarts the frames.
      existing.idle = 0;
      existing.lastFile = null;
      existing.lastSource = null;
      return;
    }
    if (tracebacks.size >= MAX_TRACEBACKS) return;
    tracebacks.set(key, {
      line,
      text: seg,
      lastFile: null,
      lastFrameLine: null,
      lastSource: null,
      expectSource: false,
      idle: 0,
      ignored: previousLine().includes("Exception ignored"),
    });
  }

  /** Returns true when the segment was consumed as part of a traceback. */
  function feedTraceback(seg: string, rank: number | null, line: number): boolean {
    const key = rank ?? -1;
    const tb = tracebacks.get(key);
    if (!tb) {
      ageTracebacks(line);
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
      tracebacks.delete(key);
      closeTraceback(tb, ex[1]!, ex[2] ?? "", rank, line, seg.trim());
      return true;
    }
    if (++tb.idle > TRACEBACK_IDLE_LIMIT) {
      tracebacks.delete(key);
      giveUpTraceback(tb, rank);
    }
    return false;
  }

  function ageTracebacks(line: number): void {
    for (const [key, tb] of tracebacks) {
      if (++tb.idle > TRACEBACK_IDLE_LIMIT) {
        tracebacks.delete(key);
        giveUpTraceback(tb, key < 0 ? null : key);
      }
    }
    void line;
  }

  function giveUpTraceback(tb: TracebackState, rank: number | null): void {
    if (tb.ignored) return;
    addCandidate({
      kind: "python-exception",
      message: `a traceback${rank === null ? "" : ` on rank ${rank}`} without a final exception line${tb.lastFile ? ` (last frame ${tb.lastFile}:${tb.lastFrameLine})` : ""}`,
      line: tb.line,
      rank,
      text: clip(tb.text),
    });
  }

  function closeTraceback(tb: TracebackState, type: string, message: string, rank: number | null, line: number, text: string): void {
    if (type.endsWith("ChildFailedError")) {
      openBox(line);
      return;
    }
    if (tb.ignored) {
      note(`line ${line}: ignored exception at interpreter exit (${clip(text, 120)})`);
      return;
    }
    const full = message ? `${type}: ${message}` : type;
    const sig = matchSignature(full);
    if (sig) {
      addCandidate({ kind: sig.kind, message: clip(full), line, rank, ruleId: sig.ruleId, upstream: upstreamId(sig.id), text: clip(text) });
      return;
    }
    if (type === "AssertionError" && !message && tb.lastSource?.includes("hierarchical_context_parallel_sizes")) {
      // M4: bare assert np.prod(sizes) == context_parallel_size (parallel_state.py) or M10 (arguments.py).
      addCandidate({
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
      addCandidate({ kind: "nan-loss", message: clip(full), line, rank, text: clip(text) });
      return;
    }
    const where = !message && tb.lastFile ? ` at ${tb.lastFile}:${tb.lastFrameLine}${tb.lastSource ? `: ${tb.lastSource}` : ""}` : "";
    addCandidate({ kind: "python-exception", message: clip(full + where), line, rank, text: clip(text) });
  }

  // ---- other failure lines -------------------------------------------------------------

  function readFailureLine(seg: string, rank: number | null, line: number): void {
    const sig = matchSignature(seg);
    if (sig) {
      addCandidate({ kind: sig.kind, message: clip(seg.trim()), line, rank, ruleId: sig.ruleId, upstream: upstreamId(sig.id), text: clip(seg) });
      return;
    }
    if (seg.includes("exitcode")) {
      const m = LAUNCHER_FAIL_RE.exec(seg);
      if (m && !launcherFailure) launcherFailure = { line, exitcode: Number(m[1]), localRank: Number(m[2]) };
    }
  }

  // ---- torchrun ChildFailedError box ---------------------------------------------------

  function openBox(line: number): void {
    if (box || childFailed) return;
    box = { line, lines: 0, phase: "head", script: null, current: null, root: null, failures: [] };
  }

  function feedBox(seg: string, line: number): void {
    const b = box!;
    if (++b.lines > BOX_LINE_LIMIT) return closeBox();
    const t = seg.trim();
    if (t.endsWith(" FAILED") && b.script === null) b.script = t.slice(0, -" FAILED".length);
    else if (t === "Failures:") b.phase = "failures";
    else if (t.startsWith("Root Cause")) b.phase = "root";
    else if (/^\[\d+\]:$/.test(t)) {
      const entry = emptyChildFailure();
      if (b.phase === "root" && !b.root) b.root = entry;
      else if (b.phase === "failures" && b.failures.length < MAX_BOX_FAILURES) b.failures.push(entry);
      b.current = entry;
      addEvidence("child-failed", line, seg);
    } else if (b.current) {
      const f = BOX_FIELD_RE.exec(seg);
      if (f) parseChildFailureField(b.current, f[1]!, f[2]!.trim());
      else if (/^={5,}$/.test(t) && b.phase === "root") return closeBox();
    }
  }

  function closeBox(): void {
    const b = box!;
    box = null;
    for (const f of [b.root, ...b.failures]) {
      if (f && f.signal === null && f.exitcode !== null && f.exitcode < 0) f.signal = SIGNAL_NAMES[-f.exitcode] ?? `signal ${-f.exitcode}`;
    }
    childFailed = { script: b.script, rootCause: b.root, failures: b.failures, line: b.line };
    const r = b.root;
    const what = r
      ? `rank ${r.rank ?? "?"} (local_rank ${r.localRank ?? "?"}) ${r.signal ? `killed by ${r.signal}` : `exited with ${r.exitcode ?? "?"}`}`
      : "no root cause listed";
    addCandidate({ kind: "child-failed", message: `torchrun ChildFailedError: ${b.script ?? "the script"} failed; root cause ${what}`, line: b.line, rank: r?.rank ?? null });
  }

  // ---- configuration -------------------------------------------------------------------

  function addSource(source: "summary" | "yaml" | "mlm-args"): void {
    if (!config.sources.includes(source)) config.sources.push(source);
  }

  function setConfig(key: string, value: string, line: number, text: string, source: "summary" | "yaml" | "mlm-args"): void {
    addSource(source);
    addEvidence("config", line, text);
    switch (key) {
      case "cp_comm_type":
        config.cpCommType = parseStringList(value);
        break;
      case "context_parallel_size":
        config.contextParallelSize = num(value);
        break;
      case "hierarchical_context_parallel_sizes": {
        const sizes = parseIntList(value);
        config.hierarchicalSizes = sizes;
        config.hierarchicalSizesState = sizes ? "set" : "none";
        break;
      }
      case "use_decentralized_pg":
        config.useDecentralizedPg = parseBool(value);
        break;
      case "eval_context_parallel_size":
        config.evalContextParallelSize = num(value);
        break;
    }
  }

  function readConfigLine(seg: string, line: number): void {
    if (seg.includes("Final configuration")) {
      finalConfiguration = true;
      yamlMode = { lines: 0, section: null };
      addEvidence("marker", line, seg);
      return;
    }
    if (seg.includes("Configuration Summary")) configSummary = true;
    const m = CONFIG_KEY_RE.exec(seg);
    if (m) {
      const value = stripDefaultNote(m[2]!);
      if (value === "") pendingList = { key: m[1]!, items: [], source: "summary" };
      else setConfig(m[1]!, value, line, seg, "summary");
      return;
    }
    const cp = MLM_CP_RE.exec(seg);
    if (cp) setConfig("context_parallel_size", cp[1]!, line, seg, "mlm-args");
    const hcp = MLM_HCP_RE.exec(seg);
    if (hcp) setConfig("hierarchical_context_parallel_sizes", hcp[1]!, line, seg, "mlm-args");
  }

  /** YAML block list items (`  - 2`) after `hierarchical_context_parallel_sizes:`. */
  function feedPendingList(seg: string): boolean {
    const p = pendingList!;
    const m = /^\s*-\s+(.*)$/.exec(seg);
    if (m) {
      if (p.items.length < MAX_LIST_ITEMS) p.items.push(m[1]!.trim());
      return true;
    }
    pendingList = null;
    setConfig(p.key, `[${p.items.join(",")}]`, linesDone + 1, `${p.key}: [${p.items.join(", ")}]`, p.source);
    if (p.items.length === 0 && p.key === "hierarchical_context_parallel_sizes") config.hierarchicalSizesState = "none";
    return false;
  }

  /** `Final configuration:` then the ConfigContainer as YAML (HEAD run_recipe, rank 0). */
  function feedYaml(seg: string, line: number): boolean {
    const y = yamlMode!;
    if (++y.lines > YAML_LINE_LIMIT) {
      yamlMode = null;
      return false;
    }
    const top = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(seg);
    if (top) {
      y.section = top[2] === "" ? top[1]! : null;
      return true;
    }
    const nested = /^\s+([A-Za-z_][\w-]*):\s*(.*)$/.exec(seg);
    if (nested) {
      const key = nested[1]!;
      const wanted = /^(cp_comm_type|context_parallel_size|hierarchical_context_parallel_sizes|use_decentralized_pg|eval_context_parallel_size)$/.test(key);
      if (wanted && (y.section === "model" || y.section === "dist")) {
        const value = nested[2]!.trim();
        if (value === "") pendingList = { key, items: [], source: "yaml" };
        else setConfig(key, value, line, seg, "yaml");
      }
      return true;
    }
    if (/^\s*-(\s|$)/.test(seg) || /^\s+\S/.test(seg) || seg.trim() === "") return true;
    yamlMode = null; // first non-YAML line ends the dump; examine it normally
    return false;
  }

  // ---- streaming -----------------------------------------------------------------------

  /** The first anchor the scan found in the current line ("" in line-by-line mode). */
  let firstAnchor = "";
  const found: FoundLine = { start: 0, end: 0, anchor: "", linesBefore: 0 };

  /** Examines the line at `pos` of the current block; returns where the next line starts. */
  function processNextLine(block: string, pos: number): number {
    const nl = block.indexOf("\n", pos);
    curLineStart = pos;
    processLine(block.slice(pos, nl), linesDone + 1);
    linesDone++;
    return nl + 1;
  }

  /**
   * Examines the lines of `block` (complete lines, ends with "\n") that `finder` reports as
   * holding an anchor, and every line while a traceback, box or YAML dump is open (anchored
   * lines inside those are then skipped by the finder's `from`).
   */
  function scanBlock(block: string, finder: AnchorFinder): void {
    curBlock = block;
    const base = linesDone;
    const len = block.length;
    let pos = 0;
    while (pos < len) {
      if (needEveryLine()) {
        pos = processNextLine(block, pos);
        continue;
      }
      if (!finder.next(pos, found)) break;
      linesDone = base + found.linesBefore;
      curLineStart = found.start;
      firstAnchor = found.anchor;
      processLine(block.slice(found.start, found.end), linesDone + 1, true);
      firstAnchor = "";
      linesDone++;
      pos = found.end + 1;
    }
    linesDone = base + finder.blockLines();
  }

  function finishBlock(block: string): void {
    lastLineOfPrevBlock = block.slice(block.lastIndexOf("\n", block.length - 2) + 1, -1);
    curBlock = "";
    curLineStart = 0;
  }

  /** Byte path: buffer the bytes, then scan and examine the complete lines among them. */
  function feedBytes(chunk: Uint8Array, buffer: WasmAnchorScanner): void {
    buffer.append(chunk);
    if (skippingLongLine) {
      const nl = buffer.firstNewline();
      if (nl < 0) {
        buffer.discard(buffer.size);
        return;
      }
      buffer.discard(nl + 1);
      skippingLongLine = false;
      linesDone++;
    }
    const lastNl = buffer.lastNewline();
    if (lastNl >= 0) {
      const end = lastNl + 1;
      const block = decoder.decode(buffer.view(0, end));
      if (buffer.isAscii(0, end)) {
        scanBlock(block, hitsFinder(buffer.scan(end)));
        wasmScanned = true;
      } else scanBlock(block, regexFinder(block));
      finishBlock(block);
      buffer.discard(end);
    }
    if (buffer.size > MAX_LINE) {
      // Maybe a line longer than MAX_LINE characters: as feedText, examine its head and drop
      // the rest up to its newline.
      const tail = buffer.view();
      const head = decoder.decode(tail.subarray(0, completeUtf8Length(tail)));
      if (head.length > MAX_LINE) {
        processLine(head, linesDone + 1);
        buffer.discard(buffer.size);
        skippingLongLine = true;
      }
    }
  }

  /** Hands the byte path's partial line to the string path (a string was pushed after bytes). */
  function leaveBytePath(atEnd: boolean): void {
    if (!scanner) return;
    const tail = scanner.view();
    const cut = atEnd ? tail.length : completeUtf8Length(tail);
    carry = decoder.decode(tail.subarray(0, cut));
    pendingBytes = cut < tail.length ? tail.slice(cut) : null;
    scanner = null;
  }

  function feedText(text: string): void {
    if (text.length === 0) return;
    if (skippingLongLine) {
      const nl = text.indexOf("\n");
      if (nl < 0) return;
      text = text.slice(nl + 1);
      skippingLongLine = false;
      linesDone++;
    }
    const buf = carry.length > 0 ? carry + text : text;
    const lastNl = buf.lastIndexOf("\n");
    if (lastNl < 0) {
      carry = buf;
    } else {
      const block = buf.slice(0, lastNl + 1);
      carry = buf.slice(lastNl + 1);
      scanBlock(block, regexFinder(block));
      finishBlock(block);
    }
    if (carry.length > MAX_LINE) {
      // A line longer than MAX_LINE: examine its head now, drop the rest up to its newline.
      processLine(carry, linesDone + 1);
      carry = "";
      skippingLongLine = true;
    }
  }

  /**
   * Decodes complete UTF-8 sequences and keeps a cut one for the next chunk. Node 20's
   * TextDecoder is about 2.5x slower with {stream: true} than without, so the boundary is
   * handled here and every call is a plain decode (identical output for any split).
   */
  function decodeBytes(chunk: Uint8Array): string {
    let bytesIn = chunk;
    if (pendingBytes) {
      bytesIn = new Uint8Array(pendingBytes.length + chunk.length);
      bytesIn.set(pendingBytes);
      bytesIn.set(chunk, pendingBytes.length);
      pendingBytes = null;
    }
    const cut = completeUtf8Length(bytesIn);
    if (cut < bytesIn.length) pendingBytes = bytesIn.slice(cut);
    return cut === 0 ? "" : decoder.decode(cut === bytesIn.length ? bytesIn : bytesIn.subarray(0, cut));
  }

  /** The byte path is taken when the first chunk is bytes and WebAssembly is usable. */
  function choosePath(first: string | Uint8Array): void {
    pathChosen = true;
    if (typeof first !== "string" && opts.anchorScan === "auto") scanner = WasmAnchorScanner.create(ANCHORS, MAX_LINE_BYTES + SLICE_BYTES);
  }

  function push(chunk: string | Uint8Array): void {
    if (!pathChosen) choosePath(chunk);
    if (typeof chunk === "string") {
      leaveBytePath(false);
      if (pendingBytes) {
        feedText(decoder.decode(pendingBytes));
        pendingBytes = null;
      }
      bytes += utf8Length(chunk);
      // A surrogate pair cut between two chunks is one 4-byte character, not two lone halves.
      if (endsWithHighSurrogate && isLowSurrogate(chunk.charCodeAt(0))) bytes -= 2;
      endsWithHighSurrogate = chunk.length > 0 ? isHighSurrogate(chunk.charCodeAt(chunk.length - 1)) : endsWithHighSurrogate;
      feedText(chunk);
    } else if (scanner) {
      bytes += chunk.byteLength;
      for (let at = 0; at < chunk.length; at += SLICE_BYTES) feedBytes(chunk.subarray(at, at + SLICE_BYTES), scanner);
    } else {
      bytes += chunk.byteLength;
      // Large chunks are fed in slices: decoding, flattening the carried line and regex
      // scanning are all markedly faster on strings of tens of KB than on MB-sized ones.
      for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
        feedText(decodeBytes(at === 0 && chunk.length <= SLICE_BYTES ? chunk : chunk.subarray(at, at + SLICE_BYTES)));
      }
    }
  }

  // ---- decision ------------------------------------------------------------------------

  function finishStream(): void {
    leaveBytePath(true);
    if (pendingBytes) {
      feedText(decoder.decode(pendingBytes)); // a sequence cut by the end of the log: U+FFFD
      pendingBytes = null;
    }
    if (carry.length > 0 && !skippingLongLine) {
      let last = carry;
      carry = "";
      if (last.endsWith("\r")) last = last.replace(/\r+$/, "");
      processLine(last, linesDone + 1);
      linesDone++;
    } else if (skippingLongLine) linesDone++;
    carry = "";
    if (pendingList) feedPendingList("");
    if (box) closeBox();
    for (const [key, tb] of tracebacks) giveUpTraceback(tb, key < 0 ? null : key);
    tracebacks.clear();
  }

  function hcpActive(exitCode: number | null): boolean | null {
    if (probeSaysFlat) return false; // a rank without HCP groups attends only to its local chunk
    if (probeSaysHcp || hierarchicalLines > 0) return true;
    // Flat group named but no hierarchical one: only conclusive once the run got past the
    // point where HCP groups would have been named (a training step, a clean exit, teardown).
    // Case g (rank 1 died before the first CP collective) stays null.
    const ranFarEnough = iterCount > 0 || exitCode === 0 || flatTornDown || trainingDone;
    if (flatLines > 0 && ranFarEnough) return false;
    if (config.cpCommType?.includes("a2a+p2p")) {
      // Bridge before #2665 accepted these and silently ran flat CP (HCP-RULES 3.1, issue #2667).
      if (config.hierarchicalSizesState === "none" || config.useDecentralizedPg === true) return false;
    }
    return null;
  }

  function pickCause(exitCode: number | null, extra: VerdictEndExtra): { cause: Cause | null; others: Cause[] } {
    const all = [...candidates];
    if (extra.timedOut || exitCode === 124) {
      all.push({
        kind: "timeout",
        message: `killed by the harness time limit${extra.signal ? ` (${extra.signal})` : exitCode === 124 ? " (exit status 124 from timeout)" : ""}`,
        line: null,
        rank: null,
        priority: PRIORITY.timeout,
      });
    }
    if (extra.cancelledBy && !all.some((c) => !KILL_ECHO_RE.test(c.message))) {
      all.push({ kind: "nonzero-exit", message: `cancelled: the harness received ${extra.cancelledBy} and stopped the run`, line: null, rank: null, priority: PRIORITY["nonzero-exit"] });
    }
    if (all.length === 0 && exitCode !== null && exitCode !== 0) {
      const fromLauncher = launcherFailure;
      all.push({
        kind: "nonzero-exit",
        message: `torchrun exited with status ${exitCode}${extra.signal ? ` (${extra.signal})` : ""} and the log names no error${fromLauncher ? `; the launcher reported local_rank ${fromLauncher.localRank} failed with exitcode ${fromLauncher.exitcode}` : ""}`,
        line: fromLauncher?.line ?? null,
        rank: null,
        priority: PRIORITY["nonzero-exit"],
      });
    } else if (all.length === 0 && exitCode === null && extra.signal) {
      all.push({ kind: "nonzero-exit", message: `torchrun was ended by ${extra.signal}`, line: null, rank: null, priority: PRIORITY["nonzero-exit"] });
    }
    if (all.length === 0) return { cause: null, others: [] };
    // Prefer failures of the rank torchrun names as the root cause; the others are mostly
    // consequences (SIGTERM'd peers, watchdogs timing out on the dead rank). When the harness
    // killed the run, what the kill itself printed (torchrun's SignalException, interrupted
    // ranks) comes after the timeout.
    const rootRank = childFailed?.rootCause?.rank ?? null;
    const killed = extra.timedOut === true || exitCode === 124 || extra.cancelledBy !== undefined;
    const score = (c: Candidate) =>
      c.priority + (rootRank !== null && c.rank !== null && c.rank !== rootRank ? 100 : 0) + (killed && c.line !== null && KILL_ECHO_RE.test(c.message) ? 50 : 0);
    const sorted = all
      .map((c, i) => ({ c, i }))
      .sort((a, b) => score(a.c) - score(b.c) || a.i - b.i)
      .map(({ c }) => c);
    const strip = ({ priority: _p, ...rest }: Candidate): Cause => rest;
    return { cause: strip(sorted[0]!), others: sorted.slice(1, 9).map(strip) };
  }

  function throughputVerdict() {
    const gpuKey = opts.gpu ? normaliseGpu(opts.gpu) : undefined;
    const peak = gpuKey ? DENSE_BF16_PEAK_TFLOPS[gpuKey]! : null;
    const ratio = peak !== null && maxTflops !== null ? maxTflops / peak : null;
    if (opts.gpu && !gpuKey) note(`unknown GPU "${opts.gpu}": no TFLOP/s sanity check (known: ${Object.keys(DENSE_BF16_PEAK_TFLOPS).join(", ")})`);
    if (opts.gpu && gpuKey && tflopsSamples === 0 && iterCount > 0) {
      note("no `throughput per GPU (TFLOP/s/GPU)` in the iteration lines: add logger.log_throughput=true for the TFLOP/s check");
    }
    return {
      gpu: gpuKey ?? opts.gpu ?? null,
      peakTflops: peak,
      maxTflopsPerGpu: maxTflops,
      lastTflopsPerGpu: lastIter()?.tflopsPerGpu ?? null,
      samples: tflopsSamples,
      ratioToPeak: ratio === null ? null : Math.round(ratio * 1000) / 1000,
      implausible: ratio !== null && ratio > opts.throughputToleranceFactor,
      suspicious: ratio !== null && ratio > 0.8,
    };
  }

  function lastIter(): Iteration | null {
    return lastIterRaw ? parseIteration(lastIterRaw.seg, lastIterRaw.line) : null;
  }

  function sameList(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
    return a.length === b.length && a.every((x, i) => String(x) === String(b[i]));
  }

  /** Reasons the run did not use HCP although it trained (only when HCP is required). */
  function inactiveCause(active: boolean | null, throughput: ReturnType<typeof throughputVerdict>): Cause | null {
    const cpTypes = config.cpCommType;
    if (active === false) {
      const why = probeSaysFlat
        ? "the HCP probe reported no hierarchical CP groups (get_hierarchical_context_parallel_groups returned None)"
        : flatLines > 0
          ? `the flat CONTEXT_PARALLEL_GROUP is named ${flatLines}× in torch's log prefixes but no HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L* is`
          : "the configuration has cp_comm_type a2a+p2p with hierarchical_context_parallel_sizes None: CP is silently disabled (Bridge #2667)";
      const ev = evidence.find((e) => e.kind === "flat-cp" || e.kind === "probe" || e.kind === "config");
      return { kind: "hcp-flat", message: `HCP was not active: ${why}`, line: ev?.line ?? null, rank: null, ruleId: probeSaysFlat || flatLines > 0 ? undefined : "HCP001" };
    }
    if (cpTypes && !cpTypes.includes("a2a+p2p")) {
      const ev = evidence.find((e) => e.kind === "config" && e.text.includes("cp_comm_type"));
      return {
        kind: "config-mismatch",
        message: `the run asked for HCP but the logged cp_comm_type is ${JSON.stringify(cpTypes.length === 1 ? cpTypes[0] : cpTypes)}: attention does not use the hierarchical groups${hierarchicalLines > 0 ? " even though they were built (HCP005)" : ""}`,
        line: ev?.line ?? null,
        rank: null,
        ruleId: hierarchicalLines > 0 ? "HCP005" : undefined,
      };
    }
    if (config.contextParallelSize === 1) {
      return { kind: "config-mismatch", message: "the logged context_parallel_size is 1: no context parallelism at all", line: null, rank: null, ruleId: "HCP020" };
    }
    if (throughput.implausible) {
      return {
        kind: "implausible-throughput",
        message: `${throughput.maxTflopsPerGpu} TFLOP/s/GPU is above the ${throughput.gpu} dense BF16 peak of ${throughput.peakTflops}: CP was very likely off and each rank attended only to its local chunk (Bridge #2667)`,
        line: maxTflopsLine,
        rank: null,
        ruleId: "HCP001",
      };
    }
    return null;
  }

  /** The run asked for specific values (options) and the log printed others. */
  function optionMismatch(): Cause | null {
    const problems: string[] = [];
    if (opts.sizes && config.hierarchicalSizes && !sameList(opts.sizes, config.hierarchicalSizes)) {
      problems.push(`hierarchical_context_parallel_sizes ${JSON.stringify(config.hierarchicalSizes)} (asked ${JSON.stringify(opts.sizes)})`);
    }
    if (opts.contextParallelSize && config.contextParallelSize !== null && opts.contextParallelSize !== config.contextParallelSize) {
      problems.push(`context_parallel_size ${config.contextParallelSize} (asked ${opts.contextParallelSize})`);
    }
    if (opts.cpCommType && config.cpCommType && !sameList([opts.cpCommType], config.cpCommType) && !config.cpCommType.every((t) => t === opts.cpCommType)) {
      problems.push(`cp_comm_type ${JSON.stringify(config.cpCommType)} (asked ${opts.cpCommType})`);
    }
    if (problems.length === 0) return null;
    return { kind: "config-mismatch", message: `the logged configuration differs from the requested one: ${problems.join("; ")}`, line: null, rank: null };
  }

  function noStepCause(exitCode: number | null): Cause {
    const staleHint =
      startIteration !== null && startIteration > 0
        ? ` The loop started at iteration ${startIteration}: the run resumed from an existing checkpoint (use checkpoint.load=null checkpoint.save=null, SMOKE1).`
        : trainingDone
          ? " `[after training is done]` was printed without any iteration: the loop was skipped (stale checkpoint?) or logger.log_interval is larger than train_iters (SMOKE1)."
          : "";
    if (iterCount > 0) {
      return { kind: "no-training-step", message: `${iterCount} iteration line(s) but none with a finite lm loss.${staleHint}`, line: null, rank: null };
    }
    return {
      kind: "no-training-step",
      message: `no Bridge iteration line (\` iteration N/M | … | lm loss: … |\`) in the log${exitCode === 0 ? " although torchrun exited 0" : ""}.${staleHint}`,
      line: trainingDoneLine,
      rank: null,
    };
  }

  function hcpEvidenceFor(active: boolean | null): Evidence[] {
    if (hcpEvidence.length > 0) return [...hcpEvidence];
    const flat = evidence.filter((e) => e.kind === "flat-cp").slice(0, 3);
    if (flat.length > 0 || active !== false) return flat;
    return evidence.filter((e) => e.kind === "config").slice(0, 3);
  }

  function end(exitCode?: number | null, extra: VerdictEndExtra = {}): Verdict {
    finishStream();
    const code = exitCode === undefined ? null : exitCode;
    const active = hcpActive(code);
    const throughput = throughputVerdict();
    if (throughput.suspicious && !throughput.implausible) note(`TFLOP/s/GPU at ${Math.round((throughput.ratioToPeak ?? 0) * 100)} % of the ${throughput.gpu} peak: unusually high for a smoke run`);
    // The run asked for HCP when the caller says so, or when its overrides or the configuration
    // it printed say cp_comm_type a2a+p2p: then a flat run must not pass.
    const hcpRequired = opts.expectHcp || Boolean(opts.cpCommType?.includes("a2a+p2p")) || Boolean(config.cpCommType?.includes("a2a+p2p"));
    if (hcpRequired && !opts.expectHcp) note("the run's configuration asks for cp_comm_type a2a+p2p: HCP must be proven, although it was not expected");
    if (throughput.implausible && !hcpRequired) note(`TFLOP/s/GPU above the ${throughput.gpu} peak: CP may be off`);
    if (hcpRequired && iterCount > 0 && !configSummary && !finalConfiguration && config.sources.length === 0) {
      note("no Bridge configuration summary in the log: cp_comm_type and the hierarchical sizes could not be checked");
    }
    if (active === true && config.hierarchicalSizes?.includes(1)) note("a hierarchical size is 1: a2a+p2p degenerates to a single level (HCP004)");

    let { cause, others } = pickCause(code, extra);
    let status: Verdict["status"] = "fail";
    if (!cause) {
      const inactive = hcpRequired ? inactiveCause(active, throughput) : null;
      const mismatch = optionMismatch();
      if (inactive) {
        status = "hcp-inactive";
        cause = inactive;
      } else if (mismatch) cause = mismatch;
      else if (code === null && !trainingDone && !extra.timedOut) {
        cause = {
          kind: "truncated",
          message: "the log ends without an exit status and without `[after training is done]`: the run was cut short or the log is incomplete",
          line: null,
          rank: null,
        };
      } else if (finiteLossCount === 0) cause = noStepCause(code);
      else if (hcpRequired && active === null) {
        status = "inconclusive";
        cause = {
          kind: "hcp-unverified",
          message:
            "the run trained but the log cannot tell whether HCP was on: no HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L* in torch's log prefixes (needs TORCH_CPP_LOG_LEVEL=INFO and not TORCH_DISTRIBUTED_DEBUG=DETAIL) and no HCP-PROBE line",
          line: null,
          rank: null,
        };
      } else status = "pass";
    }
    if (status !== "pass" && iterCount === 0 && cause && cause.kind !== "no-training-step" && cause.kind !== "truncated") {
      note("no Bridge iteration line in the log");
    }

    const sortedEvidence = [...evidence].sort((a, b) => a.line - b.line);
    return {
      status,
      expectHcp: hcpRequired,
      cause,
      hcp: {
        active,
        hierarchicalLines,
        flatLines,
        levels: [...levels].sort((a, b) => a - b),
        probeReports,
        evidence: hcpEvidenceFor(active),
      },
      iterations: {
        count: iterCount,
        finiteLossCount,
        nanIterations,
        skippedIterations,
        first: firstIter,
        last: lastIter(),
        startIteration,
      },
      throughput,
      config: { ...config, sources: [...config.sources] },
      childFailed,
      otherFailures: others,
      markers: { trainingDone, configSummary, finalConfiguration },
      notes: [...notes],
      evidence: sortedEvidence,
      exitCode: code,
      timedOut: extra.timedOut === true || code === 124,
      signal: extra.signal ?? null,
      stats: { bytes, lines: linesDone, examinedLines: examined },
    };
  }

  return {
    push,
    end,
    get scanEngine() {
      return wasmScanned ? ("wasm" as const) : ("regex" as const);
    },
    stateSize: () => ({ carryChars: carry.length + (scanner?.size ?? 0), tracebacks: tracebacks.size, candidates: candidates.length, evidence: evidence.length }),
  };
}

/** Convenience for whole strings (tests, small logs). */
export function verdictOf(text: string | Uint8Array, options: VerdictOptions, exitCode?: number | null, extra?: VerdictEndExtra): Verdict {
  const parser = createVerdictParser(options);
  parser.push(text);
  return parser.end(exitCode, extra);
}
