// The most a2a+p2p can buy over the reference layout at a given CP degree, as an explicit
// bound (docs in checks/ab001-implausible-speedup.ts).
//
// The two legs run the same recipe, CP degree, world size, batch and iterations; only the CP
// attention communication differs. Write the reference leg's step time as T_ref = C + E,
// where E is the CP communication it does not hide behind attention compute and C is
// everything else (GEMMs, the attention math itself, TP/DP collectives, the optimizer),
// which the HCP leg does exactly as well. HCP cannot make C smaller, and it still has to do
// part of the reference leg's communication, so at best it removes the share of E that its
// own layout no longer needs:
//
//   T_hcp ≥ C + E·(1 − r)   ⇒   speedup = T_ref / T_hcp ≤ 1 / (1 − f·r)
//
// with f = E / T_ref (the exposed-communication share of the reference step) and r the part
// of the reference leg's CP communication HCP does not have to do:
// - p2p reference, CP = c, sizes [a, p]: the flat ring does c − 1 KV exchanges per attention
//   layer; the hierarchical layout still runs a ring of p − 1 exchanges over its p groups
//   (and an all-to-all inside each group of a, counted here as free, in HCP's favour):
//   r = 1 − (p − 1)/(c − 1).
// - a2a reference: the flat all-to-all moves (c − 1)/c of each rank's heads; HCP's inner
//   all-to-all still moves (a − 1)/a of them (its ring counted as free):
//   r = 1 − ((a − 1)/a)/((c − 1)/c).
// f is not in the log. The bound takes f = 1/2 — half of every reference step is exposed CP
// communication, far more than a smoke run on one NVLink node spends (Transformer Engine
// overlaps the ring with the attention blocks) — and then allows 10 % for timing noise of a
// few iterations. Beating that is not a better layout: it is the signature of CP silently
// off in the HCP leg (each rank attends only to its own chunk, so attention compute drops by
// about c and no CP communication happens at all; Bridge #2667 saw 3.5x).
import type { ReferenceMode } from "./mode.ts";

/** The assumed largest exposed-communication share of a reference step (f above). */
export const MAX_COMM_SHARE = 0.5;
/** Allowance for the timing noise of a few iterations on a shared runner. */
export const TIMING_NOISE = 0.1;

export interface SpeedupBound {
  /** The largest plausible HCP speedup over the reference leg (time ratio), noise included. */
  maxSpeedup: number;
  /** f: the exposed-communication share assumed for the reference step. */
  commShare: number;
  /** r: the part of the reference leg's CP communication the HCP layout does not do. */
  removable: number;
  cp: number;
  sizes: [number, number];
  reference: ReferenceMode;
}

/** The bound for CP degree `cp` with sizes `[a, p]` against `reference`; undefined when the layout is not hierarchical. */
export function speedupBound(cp: number, sizes: readonly [number, number], reference: ReferenceMode): SpeedupBound | undefined {
  const [a, p] = sizes;
  if (!(cp >= 2) || a * p !== cp || a < 1 || p < 1) return undefined;
  const removable = reference === "p2p" ? 1 - (p - 1) / (cp - 1) : 1 - (a - 1) / a / ((cp - 1) / cp);
  const comm = 1 / (1 - MAX_COMM_SHARE * removable);
  return { maxSpeedup: round(comm * (1 + TIMING_NOISE), 3), commShare: MAX_COMM_SHARE, removable: round(removable, 4), cp, sizes: [a, p], reference };
}

function round(x: number, digits: number): number {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}
