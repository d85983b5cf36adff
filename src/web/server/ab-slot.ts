// Integration point for the A/B comparison of two smoke runs (issue 11, not built yet).
// When a request belongs to an A/B pair, /runs/ID shows what this returns in an
// "A/B comparison" section after the audit trail; undefined shows nothing. Until the A/B
// runs exist, no request has a comparison.
import type { SmokeRequest } from "../../store/types.ts";
import type { Html } from "./html.ts";

export function abComparisonFor(_request: SmokeRequest): Html | undefined {
  return undefined;
}
