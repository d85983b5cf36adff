// The A/B comparison of a smoke run's two legs (the HCP layout and the reference layout),
// as stored with the request and shown by the check run, Slack and /runs/ID. Bounded: at
// most MAX_POINTS iterations, short texts. Schemas are built on first use (z.lazy): the
// store's module graph imports them, and a cold start answers before any is needed.
import * as z from "zod";
import { CompareModeSchema } from "./mode.ts";

export const LegSchema = z.lazy(() =>
  z.object({
    /** The leg's cp_comm_type, as the plan set it. */
    layout: z.string().max(40),
    /** The leg's own verdict status (src/core/verdict), recomputed by the bot from its log. */
    verdictStatus: z.string().max(40),
    /** What the log shows of hierarchical CP, in words. */
    hcpEvidence: z.string().max(300),
    /** Median TFLOP/s/GPU of the iterations after the first; null when not printed. */
    tflopsPerGpu: z.number().nullable(),
    /** Median elapsed time per iteration (ms) of the iterations after the first. */
    msPerIteration: z.number().nullable(),
    iterations: z.number().int(),
  }),
);
export type Leg = z.infer<typeof LegSchema>;

export const LossPointSchema = z.lazy(() =>
  z.object({
    iteration: z.number().int(),
    hcp: z.number().nullable(),
    reference: z.number().nullable(),
    /** |hcp − reference| / |reference|; null when either is missing. */
    relDiff: z.number().nullable(),
  }),
);
export type LossPoint = z.infer<typeof LossPointSchema>;

export const FlagSchema = z.lazy(() =>
  z.object({
    /** AB001 (implausible speedup), AB002 (loss difference): src/core/ab/checks. */
    id: z.string().regex(/^AB\d{3}$/),
    severity: z.enum(["error", "warning"]),
    message: z.string().max(2000),
  }),
);
export type ComparisonFlag = z.infer<typeof FlagSchema>;

export const BoundSchema = z.lazy(() =>
  z.object({
    maxSpeedup: z.number(),
    commShare: z.number(),
    removable: z.number(),
    cp: z.number().int(),
    sizes: z.tuple([z.number().int(), z.number().int()]),
  }),
);

export const ComparisonSchema = z.lazy(() =>
  z.object({
    mode: CompareModeSchema.exclude(["none"]),
    /** compared: both legs trained and were timed; missing: `why` says what is absent. */
    status: z.enum(["compared", "missing"]),
    why: z.string().max(2000).nullable(),
    hcp: LegSchema.nullable(),
    reference: LegSchema.nullable(),
    /** HCP throughput over the reference's (reference time per iteration / HCP's). */
    speedup: z.number().nullable(),
    bound: BoundSchema.nullable(),
    losses: z.array(LossPointSchema).max(200),
    flags: z.array(FlagSchema).max(8),
    /** "HCP 1.18x the p2p throughput", "HCP slower than p2p by 7 %", or why there is no comparison. */
    summary: z.string().max(500),
  }),
);
export type Comparison = z.infer<typeof ComparisonSchema>;
