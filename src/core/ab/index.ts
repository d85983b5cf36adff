// The A/B smoke comparison (`/hcp smoke compare=p2p|a2a`): pure, one module per concern.
export { COMPARE_MODES, CompareModeSchema, legLabel, referenceOverrides, type CompareMode, type ReferenceMode } from "./mode.ts";
export { createSeriesCollector, seriesOf, MAX_POINTS, type IterationPoint, type SeriesCollector } from "./series.ts";
export { speedupBound, MAX_COMM_SHARE, TIMING_NOISE, type SpeedupBound } from "./bound.ts";
export { legOf, median, hcpEvidenceWords } from "./metrics.ts";
export { compareLegs, missing as missingComparison, applyComparison, lossPoints, speedupSummary, type CompareInput, type LegInput } from "./compare.ts";
export { COMPARISON_CHECKS, LOSS_TOLERANCE, type ComparisonCheck } from "./checks/index.ts";
export { comparisonMarkdown, comparisonHeadline } from "./render.ts";
export * from "./schema.ts";
