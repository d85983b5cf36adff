// The smoke-run verdict: what the log parser concludes about one `torchrun` training run.
// Every field is bounded (capped lists, truncated texts) so a verdict over a multi-GB log
// stays small enough for a PR comment or a job summary.
// Schemas are built on first use (z.lazy): zod schemas built at module load cost every
// CLI start and edge cold start, most of them before any request needs them.
import * as z from "zod";
import { ProbeKeySchema } from "./probe.ts";

export const VerdictStatusSchema = z.enum([
  /** Exit 0 (when known), ≥1 finite lm loss, no NaN iteration, HCP proven active when expected. */
  "pass",
  /** The run failed: a crash, a NaN, no training step, a truncated log. */
  "fail",
  /** The run trained, but HCP was positively off (flat CP groups, flat config, impossible TFLOP/s). */
  "hcp-inactive",
  /**
   * The run trained with CP on, but not hierarchically: a level of the sizes is 1 ([1, N] is
   * plain p2p, [N, 1] plain a2a). Not a pass, and not "CP silently off" either.
   */
  "hcp-degenerate",
  /** Nothing failed, but the log cannot tell whether HCP was on (default torch verbosity, no probe). */
  "inconclusive",
]);
export type VerdictStatus = z.infer<typeof VerdictStatusSchema>;

export const CauseKindSchema = z.enum([
  "config-assertion",
  "hydra-override",
  "child-failed",
  "nccl",
  "cuda-oom",
  "te-assertion",
  "nan-loss",
  "timeout",
  "no-training-step",
  "truncated",
  "python-exception",
  /** Non-zero exit status with nothing in the log that explains it. */
  "nonzero-exit",
  /** The run asked for HCP but flat CP groups (or a flat config) were seen. */
  "hcp-flat",
  /** A hierarchical level of size 1: a2a+p2p degenerates to one level (HCP004). */
  "hcp-degenerate",
  /** The logged configuration is not what the run asked for (e.g. cp_comm_type p2p). */
  "config-mismatch",
  /** TFLOP/s/GPU above the GPU's dense BF16 peak: CP was very likely off (Bridge #2667). */
  "implausible-throughput",
  /** The run trained but left no HCP evidence that counts (no authenticated probe report from every rank). */
  "hcp-unverified",
  /** The run's exit status is unknown (no runner facts): a run not shown to exit 0 never passes. */
  "exit-unknown",
]);
export type CauseKind = z.infer<typeof CauseKindSchema>;

export const GpuSchema = z.string().min(1);

export const VerdictOptionsSchema = z.lazy(() =>
  z.object({
    /** The run asked for cp_comm_type a2a+p2p with hierarchical sizes: HCP must be proven. */
    expectHcp: z.boolean(),
    /** "H100", "H200", "B200", "GB200", … for the TFLOP/s sanity check. Unknown names skip it. */
    gpu: GpuSchema.optional(),
    /** What the run asked for, compared with the configuration the log prints. */
    cpCommType: z.string().optional(),
    sizes: z.array(z.number().int().positive()).optional(),
    contextParallelSize: z.number().int().positive().optional(),
    /** Ranks the run was started with (torchrun's world size): a pass needs a report from each. */
    worldSize: z.number().int().positive().optional(),
    /**
     * The run's probe key (smoke-run makes one per run and reveals it once the run has exited).
     * Without it no HCP-PROBE report can be authenticated, so none is evidence.
     */
    probeKey: ProbeKeySchema.optional(),
    /**
     * TFLOP/s/GPU above `peak × factor` is implausible. 1.0 (the peak itself) is already
     * generous: real runs reach 40-60 % MFU, and CP FLOP accounting is imprecise (Bridge PR #4446).
     */
    throughputToleranceFactor: z.number().positive().default(1),
    /**
     * "auto": byte input is searched with the WebAssembly scanner where the runtime allows it;
     * "regex": always the JS regex (same verdict; for comparisons and benchmarks).
     */
    anchorScan: z.enum(["auto", "regex"]).default("auto"),
  }),
);
export type VerdictOptions = z.input<typeof VerdictOptionsSchema>;

export const EvidenceSchema = z.lazy(() =>
  z.object({
    /** 1-based physical line number in the log. */
    line: z.number().int().positive(),
    /** The line, ANSI codes removed, truncated to a few hundred characters. */
    text: z.string(),
    kind: z.enum(["hcp", "flat-cp", "probe", "untrusted-probe", "decentralized-pg", "config", "iteration", "failure", "child-failed", "marker", "throughput"]),
  }),
);
export type Evidence = z.infer<typeof EvidenceSchema>;

export const ChildFailureSchema = z.lazy(() =>
  z.object({
    /** Global rank (`rank      : 1 (local_rank: 1)`). */
    rank: z.number().int().nullable(),
    localRank: z.number().int().nullable(),
    /** Negative for a signal (`-15` = SIGTERM), as torchrun prints it. */
    exitcode: z.number().int().nullable(),
    /** "SIGTERM", "SIGABRT", "SIGKILL" when the child died of a signal. */
    signal: z.string().nullable(),
    pid: z.number().int().nullable(),
  }),
);
export type ChildFailure = z.infer<typeof ChildFailureSchema>;

export const ChildFailedSchema = z.lazy(() =>
  z.object({
    /** `probe_hcp.py` from `probe_hcp.py FAILED`. */
    script: z.string().nullable(),
    /** The `Root Cause (first observed failure)` entry. */
    rootCause: ChildFailureSchema.nullable(),
    /** The other entries under `Failures:` (capped). */
    failures: z.array(ChildFailureSchema),
    line: z.number().int().positive(),
  }),
);
export type ChildFailed = z.infer<typeof ChildFailedSchema>;

export const CauseSchema = z.lazy(() =>
  z.object({
    kind: CauseKindSchema,
    message: z.string(),
    /** Where the cause was seen; null when it comes from the exit status or the harness. */
    line: z.number().int().positive().nullable(),
    /** The hcp-bot rule that would have caught this before the run (HCP001 …). */
    ruleId: z.string().optional(),
    /** The upstream check in docs/domain.md section 3 (B6, M4, T1, …). */
    upstream: z.string().optional(),
    /** Global rank the error came from (`[rankN]:` prefix), when known. */
    rank: z.number().int().nullable(),
    text: z.string().optional(),
    /** What to change so the next run does what was meant (the bot's own words, never log text). */
    fix: z.string().optional(),
  }),
);
export type Cause = z.infer<typeof CauseSchema>;

export const IterationSchema = z.lazy(() =>
  z.object({
    iteration: z.number().int(),
    total: z.number().int(),
    consumedSamples: z.number().nullable(),
    elapsedMs: z.number().nullable(),
    tflopsPerGpu: z.number().nullable(),
    learningRate: z.number().nullable(),
    globalBatchSize: z.number().nullable(),
    /** null when the loss was not finite (NaN/inf) or not printed; see lmLossText. */
    lmLoss: z.number().nullable(),
    lmLossText: z.string().nullable(),
    lossScale: z.number().nullable(),
    gradNorm: z.number().nullable(),
    skippedIterations: z.number().int(),
    nanIterations: z.number().int(),
    line: z.number().int().positive(),
  }),
);
export type Iteration = z.infer<typeof IterationSchema>;

export const IterationsSchema = z.lazy(() =>
  z.object({
    /** Bridge iteration lines seen (` iteration   N/   M | … |`). */
    count: z.number().int(),
    /** Lines whose lm loss parsed as a finite number. */
    finiteLossCount: z.number().int(),
    /** Sum of `number of nan iterations` counters plus lines with a non-finite lm loss. */
    nanIterations: z.number().int(),
    skippedIterations: z.number().int(),
    first: IterationSchema.nullable(),
    last: IterationSchema.nullable(),
    /** `Starting training loop at iteration N`: N > 0 means the run resumed from a checkpoint. */
    startIteration: z.number().int().nullable(),
  }),
);
export type Iterations = z.infer<typeof IterationsSchema>;

export const ThroughputSchema = z.lazy(() =>
  z.object({
    gpu: z.string().nullable(),
    /** Dense BF16 peak of that GPU, TFLOP/s; null when the GPU is unknown. */
    peakTflops: z.number().nullable(),
    maxTflopsPerGpu: z.number().nullable(),
    lastTflopsPerGpu: z.number().nullable(),
    /** Iteration lines that carried `throughput per GPU (TFLOP/s/GPU)`. */
    samples: z.number().int(),
    ratioToPeak: z.number().nullable(),
    /** Above peak × tolerance: CP was very likely off. */
    implausible: z.boolean(),
    /** Above 80 % of peak: possible but unusual for a smoke run. */
    suspicious: z.boolean(),
  }),
);
export type Throughput = z.infer<typeof ThroughputSchema>;

export const ConfigSchema = z.lazy(() =>
  z.object({
    /** `cp_comm_type`, normalised to a list (a per-layer list stays a list); null when not printed. */
    cpCommType: z.array(z.string()).nullable(),
    contextParallelSize: z.number().int().nullable(),
    /** null when not printed or printed as None/null; see hierarchicalSizesState. */
    hierarchicalSizes: z.array(z.number()).nullable(),
    /** "none" when the log printed None/null explicitly (a2a+p2p then runs flat on old Bridge). */
    hierarchicalSizesState: z.enum(["set", "none", "unknown"]),
    useDecentralizedPg: z.boolean().nullable(),
    evalContextParallelSize: z.number().int().nullable(),
    /** Where the values came from: Bridge non-default summary, `Final configuration:` YAML, Megatron-LM args. */
    sources: z.array(z.enum(["summary", "yaml", "mlm-args"])),
  }),
);
export type VerdictConfig = z.infer<typeof ConfigSchema>;

export const HcpSchema = z.lazy(() =>
  z.object({
    /**
     * true: an authenticated HCP-PROBE report with levels, or hierarchical group names in torch
     * PG log prefixes linked to their ProcessGroupNCCL construction lines.
     * false: any of those showing flat CP (after the run got far enough to name HCP groups), a
     * level of size 1 (not hierarchical, HCP004), or a flat config.
     * null: the log cannot tell.
     */
    active: z.boolean().nullable(),
    /** Lines naming HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L* in a torch `[PG ID … PG GUID n(desc) …]` prefix, linked to a construction line. */
    hierarchicalLines: z.number().int(),
    /** Lines naming the flat CONTEXT_PARALLEL_GROUP in such a prefix, linked likewise. */
    flatLines: z.number().int(),
    /** Group-name lines with no matching `ProcessGroupNCCL initialization options` line of the same rank: not evidence. */
    unlinkedLines: z.number().int(),
    /** HCP levels seen (0, 1). */
    levels: z.array(z.number().int()),
    /** Level sizes as the evidence shows them (authenticated reports, else linked construction lines); null when unknown. */
    levelSizes: z.array(z.number().int()).nullable(),
    /** Authenticated HCP-PROBE reports (MAC verified with the run's key). */
    probeReports: z.number().int(),
    /** Ranks with an authenticated report, sorted. */
    ranksReported: z.array(z.number().int()),
    /** HCP-PROBE reports without a valid MAC (or read without the run's key): listed, never evidence. */
    untrustedReports: z.number().int(),
    evidence: z.array(EvidenceSchema),
  }),
);
export type HcpEvidence = z.infer<typeof HcpSchema>;

export const VerdictSchema = z.lazy(() =>
  z.object({
    status: VerdictStatusSchema,
    expectHcp: z.boolean(),
    cause: CauseSchema.nullable(),
    hcp: HcpSchema,
    iterations: IterationsSchema,
    throughput: ThroughputSchema,
    config: ConfigSchema,
    childFailed: ChildFailedSchema.nullable(),
    /** Other failures seen besides the cause (capped), e.g. the SIGTERM'd ranks' errors. */
    otherFailures: z.array(CauseSchema),
    markers: z.object({
      trainingDone: z.boolean(),
      configSummary: z.boolean(),
      finalConfiguration: z.boolean(),
    }),
    /** Secondary findings that did not decide the status. */
    notes: z.array(z.string()),
    evidence: z.array(EvidenceSchema),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
    signal: z.string().nullable(),
    stats: z.object({ bytes: z.number().int(), lines: z.number().int(), examinedLines: z.number().int() }),
  }),
);
export type Verdict = z.infer<typeof VerdictSchema>;
