// The verdict, decided from what the detectors found (pure: facts in, Verdict out).
//
// Order: a failure seen in the log (ranked below) decides first; then HCP positively off; then
// a log that contradicts the request; then a log that ends too early or trained nothing; then
// HCP on but not hierarchical (a level of size 1: hcp-degenerate); then an unknown exit status;
// then, for a run that must prove HCP, the authenticated probe reports. Every missing fact
// makes the verdict worse, never better; evidence anyone can print (an unsigned flat report,
// Bridge's HyperCommGrid line) only ever counts against a run.
import { DENSE_BF16_PEAK_TFLOPS, normaliseGpu } from "./catalog.ts";
import { degenerateCause } from "./degenerate.ts";
import type { ConfigFacts } from "./detectors/config.ts";
import type { DecentralizedPgFacts } from "./detectors/decentralized-pg.ts";
import type { IterationFacts } from "./detectors/iterations.ts";
import type { ProbeFacts } from "./detectors/probe-reports.ts";
import type { ProcessGroupFacts } from "./detectors/process-groups.ts";
import type { LauncherFailure } from "./detectors/signatures.ts";
import { clip } from "./findings.ts";
import type { Cause, CauseKind, ChildFailed, Evidence, Throughput, Verdict, VerdictOptionsSchema } from "./schema.ts";
import type * as z from "zod";

export interface VerdictEndExtra {
  /** The harness killed the run at its time limit. */
  timedOut?: boolean;
  /** The harness stopped the run because it was cancelled (the signal it received). */
  cancelledBy?: string;
  /** The signal that ended torchrun, e.g. "SIGKILL". */
  signal?: string;
}

export interface VerdictFacts {
  iterations: IterationFacts;
  config: ConfigFacts;
  groups: ProcessGroupFacts;
  probe: ProbeFacts;
  decentralized: DecentralizedPgFacts;
  childFailed: ChildFailed | null;
  launcherFailure: LauncherFailure | null;
  candidates: readonly Cause[];
  evidence: readonly Evidence[];
  /** The first authenticated reports and linked hierarchical group lines, in log order. */
  hcpEvidence: readonly Evidence[];
  notes: readonly string[];
  stats: Verdict["stats"];
}

type Options = z.output<typeof VerdictOptionsSchema>;

const MAX_NOTES = 16;

/** What the kill itself prints when the harness stops a run. */
const KILL_ECHO_RE = /SignalException|got signal: ?(?:2|9|15)\b|KeyboardInterrupt|SIG(?:TERM|KILL|INT)\b|Signal (?:2|9|15) \(/;

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
  "exit-unknown": 11,
  "hcp-flat": 12,
  "hcp-degenerate": 12,
  "config-mismatch": 12,
  "implausible-throughput": 12,
  "hcp-unverified": 13,
};

/** Configuration is validated on every rank: its failure is the cause whichever rank torchrun saw die first. */
const EVERY_RANK: ReadonlySet<CauseKind> = new Set(["config-assertion", "hydra-override", "te-assertion"]);

const sameList = (a: readonly (string | number)[], b: readonly (string | number)[]) => a.length === b.length && a.every((x, i) => String(x) === String(b[i]));
const show = (v: unknown) => JSON.stringify(v);

class Notes {
  readonly list: string[];
  constructor(from: readonly string[]) {
    this.list = [...from];
  }
  add(text: string): void {
    if (this.list.length < MAX_NOTES && !this.list.includes(text)) this.list.push(text);
  }
}

/** The level sizes everything agrees on, with where they came from; a 1 anywhere is degenerate. */
interface Layout {
  probeSizes: number[] | null;
  groupSizes: number[] | null;
  degenerate: { sizes: number[]; from: string } | null;
}

function layoutOf(f: VerdictFacts, opts: Options): Layout {
  const withLevels = f.probe.ranks.filter((r) => r.levelSizes !== null);
  const probeSizes = withLevels[0]?.levelSizes ?? null;
  // Levels 0..n-1 all named and sized by construction lines (else only per level, below).
  const g = f.groups;
  const groupSizes = g.levels.length > 0 && g.levels.every((l, i) => l === i && g.levelSizes[i] !== null) ? (g.levelSizes as number[]) : null;
  const logged = f.config.config.hierarchicalSizes;
  const candidates: [number[] | null | undefined, string][] = [
    [withLevels.find((r) => r.levelSizes!.includes(1))?.levelSizes, "the authenticated HCP-PROBE reports"],
    [g.levelSizes.includes(1) ? g.levelSizes.map((x) => x ?? 0) : groupSizes, "torch's ProcessGroupNCCL construction lines"],
    [logged, "the logged configuration"],
    // The request's own sizes only where the log shows none (else a mismatch says more).
    [probeSizes || groupSizes || logged ? null : opts.sizes, "the request"],
  ];
  const hit = candidates.find(([sizes]) => sizes?.includes(1));
  return { probeSizes, groupSizes, degenerate: hit ? { sizes: hit[0]!, from: hit[1] } : null };
}

/** The log shows that no hierarchical CP group existed on some rank (whatever else it shows). */
function flatSeen(f: VerdictFacts, exitCode: number | null): boolean {
  if (f.probe.ranks.some((r) => r.levelSizes === null)) return true; // a rank without HCP groups attends only to its local chunk
  // Bridge's decentralized path never builds HCP groups; an unsigned flat report may only count against the run.
  if (f.decentralized.grid !== null || f.probe.untrustedFlat !== null) return true;
  if (f.probe.ranks.length > 0 || f.groups.hierarchicalLines > 0) return false;
  // Flat group named but no hierarchical one: only conclusive once the run got past the
  // point where HCP groups would have been named (a training step, a clean exit, teardown).
  // Case g (rank 1 died before the first CP collective) stays unknown.
  const it = f.iterations;
  const ranFarEnough = it.count > 0 || exitCode === 0 || f.groups.flatTornDown || it.trainingDone;
  if (f.groups.flatLines > 0 && ranFarEnough) return true;
  const c = f.config.config;
  // Bridge before #2665 accepted these and silently ran flat CP (docs/domain.md 3.1, issue #2667).
  return Boolean(c.cpCommType?.includes("a2a+p2p") && (c.hierarchicalSizesState === "none" || c.useDecentralizedPg === true));
}

function hcpActive(f: VerdictFacts, layout: Layout, flat: boolean): boolean | null {
  if (flat) return false;
  if (layout.degenerate) return false; // a level of size 1 is not hierarchical (HCP004)
  if (f.probe.ranks.length > 0 || f.groups.hierarchicalLines > 0) return true;
  return null;
}

function pickCause(f: VerdictFacts, exitCode: number | null, extra: VerdictEndExtra, notes: Notes): { cause: Cause | null; others: Cause[] } {
  const all: Cause[] = [...f.candidates];
  if (extra.timedOut || exitCode === 124) {
    const how = extra.signal ? ` (${extra.signal})` : exitCode === 124 ? " (exit status 124 from timeout)" : "";
    all.push({ kind: "timeout", message: `killed by the harness time limit${how}`, line: null, rank: null });
  }
  if (extra.cancelledBy && !all.some((c) => !KILL_ECHO_RE.test(c.message))) {
    all.push({ kind: "nonzero-exit", message: `cancelled: the harness received ${extra.cancelledBy} and stopped the run`, line: null, rank: null });
  }
  if (all.length === 0 && exitCode !== null && exitCode !== 0) {
    const l = f.launcherFailure;
    all.push({
      kind: "nonzero-exit",
      message: `torchrun exited with status ${exitCode}${extra.signal ? ` (${extra.signal})` : ""} and the log names no error${l ? `; the launcher reported local_rank ${l.localRank} failed with exitcode ${l.exitcode}` : ""}`,
      line: l?.line ?? null,
      rank: null,
    });
  } else if (all.length === 0 && exitCode === null && extra.signal) {
    all.push({ kind: "nonzero-exit", message: `torchrun was ended by ${extra.signal}`, line: null, rank: null });
  }
  if (all.length === 0) return { cause: null, others: [] };
  // Prefer failures of the rank torchrun names as the root cause; the others are mostly
  // consequences (SIGTERM'd peers, watchdogs timing out on the dead rank), except a config
  // assertion, which every rank raises. When the harness killed the run, what the kill itself
  // printed (torchrun's SignalException, interrupted ranks) comes after the timeout.
  const rootRank = f.childFailed?.rootCause?.rank ?? null;
  const killed = extra.timedOut === true || exitCode === 124 || extra.cancelledBy !== undefined;
  const score = (c: Cause) =>
    PRIORITY[c.kind] +
    (rootRank !== null && c.rank !== null && c.rank !== rootRank && !EVERY_RANK.has(c.kind) ? 100 : 0) +
    (killed && c.line !== null && KILL_ECHO_RE.test(c.message) ? 50 : 0);
  const sorted = all
    .map((c, i) => ({ c, i }))
    .sort((a, b) => score(a.c) - score(b.c) || a.i - b.i)
    .map(({ c }) => c);
  const cause = sorted[0]!;
  if (rootRank !== null && cause.rank !== null && cause.rank !== rootRank) {
    notes.add(`torchrun names rank ${rootRank} as the first failure; the ${cause.kind} on rank ${cause.rank} is the cause (configuration is validated on every rank)`);
  }
  return { cause, others: sorted.slice(1, 9) };
}

function throughputOf(f: VerdictFacts, opts: Options, notes: Notes): Throughput {
  const it = f.iterations;
  const gpuKey = opts.gpu ? normaliseGpu(opts.gpu) : undefined;
  const peak = gpuKey ? DENSE_BF16_PEAK_TFLOPS[gpuKey]! : null;
  const ratio = peak !== null && it.maxTflops !== null ? it.maxTflops / peak : null;
  if (opts.gpu && !gpuKey) notes.add(`unknown GPU "${opts.gpu}": no TFLOP/s sanity check (known: ${Object.keys(DENSE_BF16_PEAK_TFLOPS).join(", ")})`);
  if (opts.gpu && gpuKey && it.tflopsSamples === 0 && it.count > 0) {
    notes.add("no `throughput per GPU (TFLOP/s/GPU)` in the iteration lines: add logger.log_throughput=true for the TFLOP/s check");
  }
  return {
    gpu: gpuKey ?? opts.gpu ?? null,
    peakTflops: peak,
    maxTflopsPerGpu: it.maxTflops,
    lastTflopsPerGpu: it.last?.tflopsPerGpu ?? null,
    samples: it.tflopsSamples,
    ratioToPeak: ratio === null ? null : Math.round(ratio * 1000) / 1000,
    implausible: ratio !== null && ratio > opts.throughputToleranceFactor,
    suspicious: ratio !== null && ratio > 0.8,
  };
}

/** Why the log shows HCP positively off (flatSeen was true). */
function flatCause(f: VerdictFacts): Cause {
  const flatProbe = f.probe.ranks.find((r) => r.levelSizes === null);
  const evidenceLine = (kinds: Evidence["kind"][]) => f.evidence.find((e) => kinds.includes(e.kind))?.line ?? null;
  if (flatProbe) {
    return { kind: "hcp-flat", message: `HCP was not active: the authenticated HCP probe of rank ${flatProbe.rank} reported no hierarchical CP groups (get_hierarchical_context_parallel_groups returned None)`, line: flatProbe.line, rank: flatProbe.rank };
  }
  const grid = f.decentralized.grid;
  if (grid) {
    return {
      kind: "hcp-flat",
      message:
        `HCP was not active: Bridge built its process groups through HyperCommGrid (tp=${grid.tp}, pp=${grid.pp}, cp=${grid.cp}, dp=${grid.dp}), ` +
        "its decentralized path (dist.use_decentralized_pg=True), which never builds hierarchical CP groups",
      line: grid.line,
      rank: null,
      ruleId: "HCP006",
      fix: "Set dist.use_decentralized_pg=False: only the MPU path (parallel_state.initialize_model_parallel) builds the hierarchical CP groups.",
    };
  }
  const unsigned = f.probe.untrustedFlat;
  if (unsigned && f.groups.flatLines === 0) {
    return {
      kind: "hcp-flat",
      message: `HCP was not active: an HCP-PROBE report of rank ${unsigned.rank} says it has no hierarchical CP groups; it is not authenticated, but a report against the run counts (it can only make the verdict worse)`,
      line: unsigned.line,
      rank: unsigned.rank,
    };
  }
  {
    const groups = f.groups.flatLines > 0;
    const why = groups
      ? `the flat CONTEXT_PARALLEL_GROUP is named ${f.groups.flatLines}× in torch's log prefixes but no HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L* is`
      : f.config.sizesAbsentLine !== null
        ? "the configuration summary shows cp_comm_type a2a+p2p and, in its sorted [model] block, no hierarchical_context_parallel_sizes: they are None and CP is silently disabled (Bridge #2667)"
        : "the configuration has cp_comm_type a2a+p2p with hierarchical_context_parallel_sizes None: CP is silently disabled (Bridge #2667)";
    return { kind: "hcp-flat", message: `HCP was not active: ${why}`, line: groups ? evidenceLine(["flat-cp"]) : (f.config.sizesAbsentLine ?? evidenceLine(["config"])), rank: null, ruleId: groups ? undefined : "HCP001" };
  }
}

/** Reasons the run did not use HCP although it trained (only when HCP is required). */
function inactiveCause(f: VerdictFacts, flat: boolean, throughput: Throughput): Cause | null {
  const { config } = f.config;
  if (flat) return flatCause(f);
  const cpTypes = config.cpCommType;
  if (cpTypes && !cpTypes.includes("a2a+p2p")) {
    const built = f.groups.hierarchicalLines > 0 || f.probe.ranks.length > 0;
    return {
      kind: "config-mismatch",
      message: `the run asked for HCP but the logged cp_comm_type is ${show(cpTypes.length === 1 ? cpTypes[0] : cpTypes)}: attention does not use the hierarchical groups${built ? " even though they were built (HCP005)" : ""}`,
      line: f.evidence.find((e) => e.kind === "config" && e.text.includes("cp_comm_type"))?.line ?? null,
      rank: null,
      ruleId: built ? "HCP005" : undefined,
    };
  }
  if (config.contextParallelSize === 1) {
    return { kind: "config-mismatch", message: "the logged context_parallel_size is 1: no context parallelism at all", line: null, rank: null, ruleId: "HCP020" };
  }
  if (throughput.implausible) {
    return {
      kind: "implausible-throughput",
      message: `${throughput.maxTflopsPerGpu} TFLOP/s/GPU is above the ${throughput.gpu} dense BF16 peak of ${throughput.peakTflops}: CP was very likely off and each rank attended only to its local chunk (Bridge #2667)`,
      line: f.iterations.maxTflopsLine,
      rank: null,
      ruleId: "HCP001",
    };
  }
  return null;
}

/** The run asked for specific values and the log (configuration, probe reports, group sizes) shows others. */
function requestMismatch(f: VerdictFacts, opts: Options): Cause | null {
  const problems: string[] = [];
  const c = f.config.config;
  if (opts.sizes && c.hierarchicalSizes && !sameList(opts.sizes, c.hierarchicalSizes)) problems.push(`hierarchical_context_parallel_sizes ${show(c.hierarchicalSizes)} (asked ${show(opts.sizes)})`);
  if (opts.contextParallelSize && c.contextParallelSize !== null && opts.contextParallelSize !== c.contextParallelSize) problems.push(`context_parallel_size ${c.contextParallelSize} (asked ${opts.contextParallelSize})`);
  if (opts.cpCommType && c.cpCommType && !c.cpCommType.every((t) => t === opts.cpCommType)) problems.push(`cp_comm_type ${show(c.cpCommType)} (asked ${opts.cpCommType})`);
  let line: number | null = null;
  const reportProblem = (rank: number, at: number, text: string) => {
    problems.push(`rank ${rank}'s authenticated probe report: ${text}`);
    line ??= at;
  };
  for (const r of f.probe.ranks) {
    if (opts.contextParallelSize && r.cpSize !== null && r.cpSize !== opts.contextParallelSize) reportProblem(r.rank, r.line, `cp_size ${r.cpSize} (asked ${opts.contextParallelSize})`);
    if (opts.sizes && r.levelSizes && !sameList(opts.sizes, r.levelSizes)) reportProblem(r.rank, r.line, `level sizes ${show(r.levelSizes)} (asked ${show(opts.sizes)})`);
    if (opts.worldSize && r.worldSize !== null && r.worldSize !== opts.worldSize) reportProblem(r.rank, r.line, `world_size ${r.worldSize} (asked ${opts.worldSize})`);
    if (opts.worldSize && r.rank >= opts.worldSize) reportProblem(r.rank, r.line, `a rank outside the requested world size ${opts.worldSize}`);
    if (r.conflicting) reportProblem(r.rank, r.line, "later reports of the same rank show another layout");
    if (r.malformedGroups) reportProblem(r.rank, r.line, "a group that does not hold the rank or whose rank list does not match its size");
  }
  const g = f.groups;
  const wrongLevel = opts.sizes ? g.levels.findIndex((level, i) => g.levelSizes[i] !== null && g.levelSizes[i] !== opts.sizes![level]) : -1;
  if (wrongLevel >= 0) problems.push(`HCP level L${g.levels[wrongLevel]} of size ${g.levelSizes[wrongLevel]} in torch's construction lines (asked ${show(opts.sizes)})`);
  if (problems.length === 0) return null;
  return { kind: "config-mismatch", message: `the log shows another layout than the requested one: ${problems.slice(0, 4).join("; ")}${problems.length > 4 ? `; and ${problems.length - 4} more` : ""}`, line, rank: null };
}

function noStepCause(f: VerdictFacts, exitCode: number | null): Cause {
  const it = f.iterations;
  const staleHint =
    it.startIteration !== null && it.startIteration > 0
      ? ` The loop started at iteration ${it.startIteration}: the run resumed from an existing checkpoint (use checkpoint.load=null checkpoint.save=null, SMOKE1).`
      : it.trainingDone
        ? " `[after training is done]` was printed without any iteration: the loop was skipped (stale checkpoint?) or logger.log_interval is larger than train_iters (SMOKE1)."
        : "";
  if (it.count > 0) return { kind: "no-training-step", message: `${it.count} iteration line(s) but none with a finite lm loss.${staleHint}`, line: null, rank: null };
  return {
    kind: "no-training-step",
    message: `no Bridge iteration line (\` iteration N/M | … | lm loss: … |\`) in the log${exitCode === 0 ? " although torchrun exited 0" : ""}.${staleHint}`,
    line: it.trainingDoneLine,
    rank: null,
  };
}

/** The world size a pass needs a report from every rank of: the request's, else what the authenticated reports say. */
function worldSizeOf(f: VerdictFacts, opts: Options): number | null {
  if (opts.worldSize) return opts.worldSize;
  const sizes = new Set(f.probe.ranks.map((r) => r.worldSize));
  return sizes.size === 1 ? ([...sizes][0] ?? null) : null;
}

/** Why a run that must prove HCP has not (null: every rank's authenticated report is there). */
function unverifiedCause(f: VerdictFacts, opts: Options, active: boolean | null): Cause | null {
  const world = worldSizeOf(f, opts);
  const reported = new Set(f.probe.ranks.map((r) => r.rank));
  const missing = world === null ? null : Array.from({ length: world }, (_, r) => r).filter((r) => !reported.has(r));
  if (missing !== null && missing.length === 0 && f.probe.ranks.length > 0) return unprovenCpSize(f, opts);
  const p = f.probe;
  const why = !p.keyGiven
    ? "no probe key was given, so no HCP-PROBE report can be authenticated"
    : p.ranks.length === 0
      ? `no authenticated HCP-PROBE report${p.untrusted > 0 ? ` (${p.untrusted} without a valid MAC)` : ""}`
      : missing === null
        ? "the authenticated reports disagree on the world size and none was requested"
        : `no authenticated HCP-PROBE report from rank${missing.length === 1 ? "" : "s"} ${clip(missing.join(", "), 80)} of ${world}`;
  const seen =
    active === true && f.groups.hierarchicalLines > 0
      ? "torch's log names the hierarchical groups, but a pass needs the probe's report from every rank"
      : "the log cannot tell whether HCP was on (torch names groups only with TORCH_CPP_LOG_LEVEL=INFO, on NCCL, and not under TORCH_DISTRIBUTED_DEBUG=DETAIL)";
  return { kind: "hcp-unverified", message: `the run trained but HCP is not proven: ${why}; ${seen}`, line: null, rank: null };
}

/**
 * Every rank reported, but the requested CP size is shown nowhere: no configuration line
 * prints it and a report lacks cp_size (the probe could not read it). The level sizes alone
 * do not prove the layout (item 11): inconclusive.
 */
function unprovenCpSize(f: VerdictFacts, opts: Options): Cause | null {
  if (!opts.contextParallelSize || f.config.config.contextParallelSize !== null) return null;
  const without = f.probe.ranks.filter((r) => r.cpSize === null).map((r) => r.rank);
  if (without.length === 0) return null;
  return {
    kind: "hcp-unverified",
    message:
      `the run trained but its CP size is not proven: the authenticated HCP-PROBE report${without.length === 1 ? "" : "s"} of rank${without.length === 1 ? "" : "s"} ` +
      `${clip(without.join(", "), 80)} give${without.length === 1 ? "s" : ""} no cp_size and the log prints no context_parallel_size (asked ${opts.contextParallelSize})`,
    line: null,
    rank: null,
  };
}

function hcpEvidence(f: VerdictFacts, active: boolean | null): Evidence[] {
  if (f.hcpEvidence.length > 0) return [...f.hcpEvidence];
  const flat = f.evidence.filter((e) => e.kind === "flat-cp" || e.kind === "decentralized-pg").slice(0, 3);
  if (flat.length > 0 || active !== false) return flat;
  return f.evidence.filter((e) => e.kind === "config").slice(0, 3);
}

function evidenceNotes(f: VerdictFacts, notes: Notes, hcpRequired: boolean, layout: Layout): void {
  const { config, configSummary, finalConfiguration } = f.config;
  if (f.probe.untrusted > 0) {
    notes.add(`${f.probe.untrusted} HCP-PROBE report(s) ${f.probe.keyGiven ? "without a valid MAC" : "read without the run's probe key"}: listed as untrusted, never evidence`);
  }
  if (f.groups.unlinkedLines > 0) notes.add(`${f.groups.unlinkedLines} line(s) name a CP group without its ProcessGroupNCCL construction line on the same rank: not evidence`);
  if (hcpRequired && f.iterations.count > 0 && !configSummary && !finalConfiguration && config.sources.length === 0) {
    notes.add("no Bridge configuration summary in the log: cp_comm_type and the hierarchical sizes could not be checked");
  }
  if (layout.degenerate && (f.probe.ranks.length > 0 || f.groups.hierarchicalLines > 0)) {
    notes.add(`a hierarchical level has size 1 (${layout.degenerate.from}: ${show(layout.degenerate.sizes)}): a2a+p2p degenerates to a single level (HCP004)`);
  }
}

/** The CP size the degenerate sizes belong to: the request's, the log's, the reports', else their product. */
function cpOf(f: VerdictFacts, opts: Options, sizes: readonly number[]): number | null {
  const reported = f.probe.ranks.find((r) => r.cpSize !== null)?.cpSize;
  const product = sizes.reduce((a, b) => a * b, 1);
  return opts.contextParallelSize ?? f.config.config.contextParallelSize ?? reported ?? (product > 0 ? product : null);
}

export function decide(f: VerdictFacts, opts: Options, exitCode: number | null, extra: VerdictEndExtra): Verdict {
  const notes = new Notes(f.notes);
  const layout = layoutOf(f, opts);
  const flat = flatSeen(f, exitCode);
  const active = hcpActive(f, layout, flat);
  const throughput = throughputOf(f, opts, notes);
  const { config, configSummary, finalConfiguration } = f.config;
  const it = f.iterations;
  if (throughput.suspicious && !throughput.implausible) notes.add(`TFLOP/s/GPU at ${Math.round((throughput.ratioToPeak ?? 0) * 100)} % of the ${throughput.gpu} peak: unusually high for a smoke run`);
  // The run asked for HCP when the caller says so, or when its overrides or the configuration
  // it printed say cp_comm_type a2a+p2p: then a flat run must not pass.
  const hcpRequired = opts.expectHcp || Boolean(opts.cpCommType?.includes("a2a+p2p")) || Boolean(config.cpCommType?.includes("a2a+p2p"));
  if (hcpRequired && !opts.expectHcp) notes.add("the run's configuration asks for cp_comm_type a2a+p2p: HCP must be proven, although it was not expected");
  if (throughput.implausible && !hcpRequired) notes.add(`TFLOP/s/GPU above the ${throughput.gpu} peak: CP may be off`);
  evidenceNotes(f, notes, hcpRequired, layout);

  let { cause, others } = pickCause(f, exitCode, extra, notes);
  let status: Verdict["status"] = "fail";
  if (!cause) {
    const inactive = hcpRequired ? inactiveCause(f, flat, throughput) : null;
    const degenerate = hcpRequired && layout.degenerate ? degenerateCause(layout.degenerate, cpOf(f, opts, layout.degenerate.sizes)) : null;
    const mismatch = requestMismatch(f, opts);
    const unverified = hcpRequired ? unverifiedCause(f, opts, active) : null;
    if (inactive) {
      status = "hcp-inactive";
      cause = inactive;
    } else if (mismatch) cause = mismatch;
    else if (exitCode === null && !it.trainingDone && !extra.timedOut) {
      cause = { kind: "truncated", message: "the log ends without an exit status and without `[after training is done]`: the run was cut short or the log is incomplete", line: null, rank: null };
    } else if (it.finiteLossCount === 0) cause = noStepCause(f, exitCode);
    else if (degenerate) {
      status = "hcp-degenerate";
      cause = degenerate;
    } else if (exitCode === null) {
      status = "inconclusive";
      cause = { kind: "exit-unknown", message: "the run's exit status is unknown (no runner facts): a run that is not shown to have exited 0 does not pass", line: null, rank: null };
    } else if (unverified) {
      status = "inconclusive";
      cause = unverified;
    } else status = "pass";
  }
  if (status !== "pass" && it.count === 0 && cause && cause.kind !== "no-training-step" && cause.kind !== "truncated") notes.add("no Bridge iteration line in the log");

  const levels = [...new Set([...f.probe.levels, ...f.groups.levels])].sort((a, b) => a - b);
  return {
    status,
    expectHcp: hcpRequired,
    cause,
    hcp: {
      active,
      hierarchicalLines: f.groups.hierarchicalLines,
      flatLines: f.groups.flatLines,
      unlinkedLines: f.groups.unlinkedLines,
      levels,
      levelSizes: layout.probeSizes ?? layout.groupSizes,
      probeReports: f.probe.trusted,
      ranksReported: f.probe.ranks.map((r) => r.rank),
      untrustedReports: f.probe.untrusted,
      evidence: hcpEvidence(f, active),
    },
    iterations: {
      count: it.count,
      finiteLossCount: it.finiteLossCount,
      nanIterations: it.nanIterations,
      skippedIterations: it.skippedIterations,
      first: it.first,
      last: it.last,
      startIteration: it.startIteration,
    },
    throughput,
    config,
    childFailed: f.childFailed,
    otherFailures: others,
    markers: { trainingDone: it.trainingDone, configSummary, finalConfiguration },
    notes: notes.list,
    evidence: [...f.evidence].sort((a, b) => a.line - b.line),
    exitCode,
    timedOut: extra.timedOut === true || exitCode === 124,
    signal: extra.signal ?? null,
    stats: f.stats,
  };
}
