// The A/B decision: both legs' numbers, the HCP speedup over the reference, its plausibility
// (AB001) and the loss agreement (AB002), and the one-line summary. Pure.
import type { Cause, Verdict } from "../verdict/index.ts";
import { speedupBound } from "./bound.ts";
import { implausibleSpeedupMessage, LOSS_TOLERANCE } from "./checks/index.ts";
import { legOf } from "./metrics.ts";
import { legLabel, type ReferenceMode } from "./mode.ts";
import type { Comparison, ComparisonFlag, Leg, LossPoint } from "./schema.ts";
import type { IterationPoint } from "./series.ts";

export interface LegInput {
  verdict: Verdict;
  series: readonly IterationPoint[];
}

export interface CompareInput {
  mode: ReferenceMode;
  cp: number;
  sizes: [number, number];
  hcp: LegInput;
  /** The reference leg, or why there is none (its files are missing, not the runner's, …). */
  reference: LegInput | { missing: string };
}

/** A comparison that could not be made, and why (neither leg's numbers, or only some). */
export function missing(mode: ReferenceMode, why: string, hcp: Leg | null = null, reference: Leg | null = null): Comparison {
  return { mode, status: "missing", why, hcp, reference, speedup: null, bound: null, losses: [], flags: [], summary: `No ${mode} comparison: ${why}` };
}

export function lossPoints(hcp: readonly IterationPoint[], reference: readonly IterationPoint[]): LossPoint[] {
  const ref = new Map(reference.map((p) => [p.iteration, p.lmLoss]));
  const iterations = [...new Set([...hcp.map((p) => p.iteration), ...reference.map((p) => p.iteration)])].sort((a, b) => a - b).slice(0, 200);
  const own = new Map(hcp.map((p) => [p.iteration, p.lmLoss]));
  return iterations.map((iteration) => {
    const h = own.get(iteration) ?? null;
    const r = ref.get(iteration) ?? null;
    const relDiff = h !== null && r !== null && r !== 0 ? Math.round((Math.abs(h - r) / Math.abs(r)) * 1e6) / 1e6 : null;
    return { iteration, hcp: h, reference: r, relDiff };
  });
}

/** "HCP 1.18x the p2p throughput" / "HCP slower than p2p by 7 %". */
export function speedupSummary(speedup: number, mode: ReferenceMode): string {
  if (speedup >= 1) return `HCP ${speedup.toFixed(2)}x the ${mode} throughput`;
  return `HCP slower than ${mode} by ${Math.max(1, Math.round((1 - speedup) * 100))} %`;
}

/** Throughput ratio from the median times (else the median TFLOP/s, the same FLOPs over the same time). */
function speedupOf(hcp: Leg, reference: Leg): number | null {
  if (hcp.msPerIteration && reference.msPerIteration) return reference.msPerIteration / hcp.msPerIteration;
  if (hcp.tflopsPerGpu && reference.tflopsPerGpu) return hcp.tflopsPerGpu / reference.tflopsPerGpu;
  return null;
}

export function compareLegs(input: CompareInput): Comparison {
  const { mode } = input;
  const hcp = legOf(legLabel("hcp"), input.hcp.verdict, input.hcp.series);
  if ("missing" in input.reference) return missing(mode, input.reference.missing, hcp);
  const reference = legOf(legLabel(mode), input.reference.verdict, input.reference.series);
  const refVerdict = input.reference.verdict;
  if (refVerdict.status === "fail") {
    const cause = refVerdict.cause ? `${refVerdict.cause.kind}: ${refVerdict.cause.message}` : "no cause found";
    return missing(mode, `the ${mode} reference leg failed (${cause.slice(0, 400)})`, hcp, reference);
  }
  if (hcp.iterations < 2 || reference.iterations < 2) {
    return missing(mode, "a leg printed fewer than two iterations; the throughput is the median of the iterations after the first, so run with iters ≥ 2", hcp, reference);
  }
  const raw = speedupOf(hcp, reference);
  if (raw === null) return missing(mode, "the logs print no time per iteration or TFLOP/s after the first iteration", hcp, reference);
  const speedup = Math.round(raw * 1000) / 1000;
  const bound = speedupBound(input.cp, input.sizes, mode) ?? null;
  const losses = lossPoints(input.hcp.series, input.reference.series);
  const flags: ComparisonFlag[] = [];
  if (bound && speedup > bound.maxSpeedup) flags.push({ id: "AB001", severity: "error", message: implausibleSpeedupMessage(speedup, bound) });
  const worst = losses.filter((l) => l.relDiff !== null && l.relDiff > LOSS_TOLERANCE).sort((a, b) => b.relDiff! - a.relDiff!)[0];
  if (worst) {
    flags.push({
      id: "AB002",
      severity: "warning",
      message:
        `lm loss differs by ${(worst.relDiff! * 100).toFixed(1)} % at iteration ${worst.iteration} (${worst.hcp} with HCP, ${worst.reference} with ${mode}), ` +
        `over the ${LOSS_TOLERANCE * 100} % tolerance: a numerics difference between the layouts. A weak signal: ${losses.length} iteration(s) from random initialisation`,
    });
  }
  return {
    mode,
    status: "compared",
    why: null,
    hcp,
    reference,
    speedup,
    bound: bound ? { maxSpeedup: bound.maxSpeedup, commShare: bound.commShare, removable: bound.removable, cp: bound.cp, sizes: bound.sizes } : null,
    losses,
    flags,
    summary: speedupSummary(speedup, mode),
  };
}

/**
 * The HCP leg's verdict after the comparison: an implausible speedup (AB001) turns a pass into
 * hcp-inactive, as the GPU-peak check does; anything else leaves the verdict as it is. A
 * missing comparison never changes the verdict (the HCP leg was judged on its own).
 */
export function applyComparison(verdict: Verdict, comparison: Comparison): Verdict {
  const flag = comparison.flags.find((f) => f.id === "AB001");
  if (!flag) return verdict;
  if (verdict.status !== "pass") return { ...verdict, notes: [...verdict.notes, `AB001: ${flag.message}`].slice(0, 50) };
  const cause: Cause = { kind: "implausible-throughput", message: `AB001: ${flag.message}`, line: null, rank: null };
  return { ...verdict, status: "hcp-inactive", cause, otherFailures: verdict.cause ? [verdict.cause, ...verdict.otherFailures].slice(0, 8) : verdict.otherFailures };
}
