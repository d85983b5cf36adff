// AB001: the HCP leg is faster than a2a+p2p can possibly be over the reference layout.
import { MAX_COMM_SHARE, TIMING_NOISE, type SpeedupBound } from "../bound.ts";
import { defineCheck } from "./check.ts";

export const check = defineCheck({
  id: "AB001",
  name: "implausible-speedup",
  severity: "error",
  doc: {
    checks:
      "In `/hcp smoke compare=p2p|a2a`, the HCP leg's throughput over the reference leg's (the median time per iteration after the first) " +
      "is above the most a2a+p2p can buy at that CP degree and sizes: 1 / (1 − f·r) × (1 + noise).",
    why:
      "Both legs run the same recipe, CP degree, world size, seed, batch and iterations; only the CP attention communication differs. " +
      "Of the reference step T = C + E (E: CP communication not hidden behind compute), HCP can at best remove the share r of E that its layout no longer does " +
      "(p2p: r = 1 − (p − 1)/(c − 1), since HCP still runs a ring over its p groups; a2a: r = 1 − ((a − 1)/a)/((c − 1)/c)), and nothing of C. " +
      `The bound assumes f = E/T = ${MAX_COMM_SHARE} (more than a one-node smoke run exposes) and adds ${Math.round(TIMING_NOISE * 100)} % for timing noise: ` +
      "CP 4 [2, 2] against p2p gives 1.65x, against a2a 1.32x. A larger speedup is the signature of CP silently off in the HCP leg " +
      "(each rank attends only to its own chunk: attention compute falls by about c and no CP communication is left; Bridge #2667 saw 3.5x) — " +
      "flagged even when the TFLOP/s stay below the GPU's peak.",
    example: "/hcp smoke compare=p2p   →   HCP 3.40x the p2p throughput (the bound at CP 4 [2, 2] is 1.65x)",
    fix:
      "Check that the HCP leg really built hierarchical groups (its probe reports, hierarchical_context_parallel_sizes in the config summary) and that Megatron-Core " +
      "received the sizes (Bridge #2665); see HCP001 and HCP006.",
  },
});

export function implausibleSpeedupMessage(speedup: number, bound: SpeedupBound): string {
  return (
    `HCP ${speedup.toFixed(2)}x the ${bound.reference} throughput, beyond the ${bound.maxSpeedup.toFixed(2)}x that a2a+p2p can buy over ${bound.reference} ` +
    `at CP ${bound.cp} [${bound.sizes.join(", ")}] (1 / (1 − ${bound.commShare} × ${bound.removable}) + ${Math.round(TIMING_NOISE * 100)} % noise): ` +
    "the signature of CP silently off in the HCP leg"
  );
}
