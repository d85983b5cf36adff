import { check as ab001 } from "./ab001-implausible-speedup.ts";
import { check as ab002 } from "./ab002-loss-difference.ts";
import type { ComparisonCheck } from "./check.ts";

export const COMPARISON_CHECKS: readonly ComparisonCheck[] = [ab001, ab002];
export { implausibleSpeedupMessage } from "./ab001-implausible-speedup.ts";
export { LOSS_TOLERANCE } from "./ab002-loss-difference.ts";
export type { ComparisonCheck, CheckDoc } from "./check.ts";
