// The smoke-run log verdict (pure: no I/O; callers stream bytes in).
export { createVerdictParser, verdictOf, ANCHORS, MAX_LINE, type VerdictParser, type VerdictEndExtra } from "./parser.ts";
export { formatVerdict, formatVerdictText, formatVerdictMarkdown, type VerdictFormat } from "./render.ts";
export {
  HCP_PROBE_PREFIX,
  HCP_PROBE_VERSION,
  HcpProbeReportSchema,
  ProbeKeySchema,
  formatProbeLine,
  parseProbeLine,
  parseProbeReports,
  probeMac,
  verifyProbeMac,
  type HcpProbeReport,
} from "./probe.ts";
export { DENSE_BF16_PEAK_TFLOPS, SIGNATURES, normaliseGpu } from "./catalog.ts";
export { requestedLayout, type RequestedLayout } from "./requested.ts";
export * from "./schema.ts";
