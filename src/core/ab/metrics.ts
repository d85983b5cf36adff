// One leg's numbers: its verdict's HCP evidence in words, and the median time and TFLOP/s of
// the iterations after the first (the first carries start-up: compilation, NCCL set-up,
// allocator warm-up).
import type { Verdict } from "../verdict/index.ts";
import type { Leg } from "./schema.ts";
import type { IterationPoint } from "./series.ts";

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The iterations the medians use: every one after the first seen. */
export function steadyIterations(series: readonly IterationPoint[]): IterationPoint[] {
  return series.slice(1);
}

function finite(values: (number | null)[]): number[] {
  return values.filter((v): v is number => v !== null && Number.isFinite(v) && v > 0);
}

export function hcpEvidenceWords(v: Verdict): string {
  const h = v.hcp;
  if (h.active === true) {
    const parts = [h.probeReports ? `${h.probeReports} signed probe report(s)` : "", h.hierarchicalLines ? `${h.hierarchicalLines} HCP group line(s)` : ""].filter(Boolean);
    return `HCP on${h.levelSizes ? ` [${h.levelSizes.join(", ")}]` : ""}${parts.length ? `: ${parts.join(", ")}` : ""}`;
  }
  if (h.active === false) {
    if (h.probeReports) return `flat CP: ${h.probeReports} signed probe report(s) without hierarchical levels`;
    return `flat CP${h.flatLines ? `: ${h.flatLines} flat CP group line(s)` : ""}`;
  }
  return h.untrustedReports ? `not shown (${h.untrustedReports} unsigned probe report(s) do not count)` : "not shown";
}

export function legOf(layout: string, verdict: Verdict, series: readonly IterationPoint[]): Leg {
  const steady = steadyIterations(series);
  return {
    layout,
    verdictStatus: verdict.status,
    hcpEvidence: hcpEvidenceWords(verdict),
    tflopsPerGpu: round(median(finite(steady.map((p) => p.tflopsPerGpu)))),
    msPerIteration: round(median(finite(steady.map((p) => p.elapsedMs)))),
    iterations: series.length,
  };
}

function round(x: number | null): number | null {
  return x === null ? null : Math.round(x * 1000) / 1000;
}
