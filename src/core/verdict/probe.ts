// The HCP probe report: one line per rank that the smoke runner's probe prints right after
// model-parallel initialization. The C++ group names only show with TORCH_CPP_LOG_LEVEL=INFO
// and only once a group's communicator exists (fixtures/logs/README.md), so a probe that asks
// Megatron-Core directly is the one positive signal that survives default verbosity.
//
// Grammar (one physical line; other text may precede it on the line, e.g. a `[rankN]:` prefix
// or another rank's merged output, and may follow the closing brace):
//
//   probe-line = *text "HCP-PROBE " json-object
//   json-object = JSON with the fields of HcpProbeReportSchema, printed on one line
//
// Example (rank 0 of a CP=4, sizes [2, 2] run):
//   HCP-PROBE {"v":1,"rank":0,"world_size":4,"cp_size":4,"levels":[{"level":0,"desc":"HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0","size":2,"ranks":[0,1]},{"level":1,"desc":"HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1","size":2,"ranks":[0,2]}]}
// and for a flat run `"levels":null` (get_hierarchical_context_parallel_groups returned None).
//
// The fixture driver's own `[probe rank N] HCP level L0: … desc=…` lines are annotations of
// those real captures, not this report; the parser does not count them as evidence.
import * as z from "zod";

export const HCP_PROBE_PREFIX = "HCP-PROBE ";
export const HCP_PROBE_VERSION = 1;

export const HcpProbeLevelSchema = z.object({
  level: z.number().int().nonnegative(),
  /** ProcessGroup.group_desc, e.g. HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0 (null on backends without it). */
  desc: z.string().nullable().optional(),
  size: z.number().int().positive(),
  ranks: z.array(z.number().int().nonnegative()).optional(),
});

export const HcpProbeReportSchema = z.object({
  v: z.literal(HCP_PROBE_VERSION),
  rank: z.number().int().nonnegative(),
  world_size: z.number().int().positive().optional(),
  cp_size: z.number().int().positive().optional(),
  /** What the model config asked for, when the probe can read it. */
  cp_comm_type: z.union([z.string(), z.array(z.string()), z.null()]).optional(),
  hcp_sizes: z.array(z.number().int()).nullable().optional(),
  /** null: no hierarchical groups on this rank (flat CP). */
  levels: z.array(HcpProbeLevelSchema).nullable(),
  /** Set when the probe itself failed; the report then proves nothing. */
  error: z.string().optional(),
});
export type HcpProbeReport = z.infer<typeof HcpProbeReportSchema>;

/** The exact line the runner prints for a report (compact JSON, no trailing newline). */
export function formatProbeLine(report: HcpProbeReport): string {
  return HCP_PROBE_PREFIX + JSON.stringify(HcpProbeReportSchema.parse(report));
}

export type ProbeParse = { ok: true; report: HcpProbeReport } | { ok: false; error: string };

/** Longest JSON object accepted after the prefix; a report is a few hundred bytes. */
const MAX_PROBE_JSON = 16_384;

/** Reads the report that starts at `text.indexOf(HCP_PROBE_PREFIX)`; text after the object is ignored. */
export function parseProbeLine(text: string): ProbeParse | null {
  const at = text.indexOf(HCP_PROBE_PREFIX);
  if (at < 0) return null;
  const start = at + HCP_PROBE_PREFIX.length;
  const end = jsonObjectEnd(text, start);
  if (end < 0) return { ok: false, error: "no complete JSON object after HCP-PROBE" };
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end));
  } catch (error) {
    return { ok: false, error: `bad JSON after HCP-PROBE: ${(error as Error).message}` };
  }
  const parsed = HcpProbeReportSchema.safeParse(value);
  return parsed.success ? { ok: true, report: parsed.data } : { ok: false, error: z.prettifyError(parsed.error) };
}

/**
 * End (exclusive) of the JSON object starting at `start`, by brace depth outside strings,
 * so another rank's text merged after the object does not break the parse.
 */
function jsonObjectEnd(text: string, start: number): number {
  if (text[start] !== "{") return -1;
  let depth = 0;
  let inString = false;
  const limit = Math.min(text.length, start + MAX_PROBE_JSON);
  for (let i = start; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */) depth++;
    else if (c === 0x7d /* } */ && --depth === 0) return i + 1;
  }
  return -1;
}
