// The HCP probe report: one line per rank that the smoke runner's probe writes right after
// model-parallel initialization. The C++ group names only show with TORCH_CPP_LOG_LEVEL=INFO
// and only once a group's communicator exists (fixtures/logs/README.md), so a probe that asks
// Megatron-Core directly is the one positive signal that survives default verbosity.
//
// Grammar (the probe starts the report on a line of its own; older probes did not, and ranks
// share one pipe, so a report is looked for anywhere in a line, as often as it occurs):
//
//   probe-line  = *text "HCP-PROBE " json-object *text
//   json-object = JSON with the fields of HcpProbeReportSchema, printed on one line; from
//                 version 2 its last member is "mac" (64 lowercase hex digits)
//
// Example (rank 0 of a CP=4, sizes [2, 2] run):
//   HCP-PROBE {"v":2,"rank":0,"world_size":4,"hcp_sizes":[2,2],"cp_size":4,"levels":[{"level":0,"desc":"HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0","size":2,"ranks":[0,1]},{"level":1,"desc":"HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1","size":2,"ranks":[0,2]}],"pid":4242,"mac":"…"}
// and for a flat run `"levels":null` (get_hierarchical_context_parallel_groups returned None).
//
// The MAC: HMAC-SHA256 with the run's key over MAC_CONTEXT followed by the report's JSON text
// as printed up to the `,"mac":` member, closed with `}`. The text itself is signed, not a
// re-serialisation, so Python and TypeScript need not agree on JSON formatting. Any process can
// print a line that looks like a report; only one whose MAC verifies is evidence.
//
// The fixture driver's own `[probe rank N] HCP level L0: … desc=…` lines are annotations of
// those real captures, not this report; the parser does not count them as evidence.
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
// Schemas are built on first use (z.lazy): zod schemas built at module load cost every
// CLI start and edge cold start, most of them before any request needs them.
import * as z from "zod";

export const HCP_PROBE_PREFIX = "HCP-PROBE ";
export const HCP_PROBE_VERSION = 2;
/** Prepended to the signed text (the probe's _MAC_CONTEXT). */
export const MAC_CONTEXT = "hcp-probe-report/v2\n";
/** A probe key: 32 bytes as 64 lowercase hex digits. */
export const ProbeKeySchema = z.string().regex(/^[0-9a-f]{64}$/, "a probe key is 64 lowercase hex digits");

export const HcpProbeLevelSchema = z.lazy(() =>
  z.object({
    level: z.number().int().nonnegative(),
    /** ProcessGroup.group_desc, e.g. HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0 (null on backends without it). */
    desc: z.string().nullable().optional(),
    size: z.number().int().positive(),
    ranks: z.array(z.number().int().nonnegative()).optional(),
  }),
);
export type HcpProbeLevel = z.infer<typeof HcpProbeLevelSchema>;

export const HcpProbeReportSchema = z.lazy(() =>
  z.object({
    /** 1: hcp-bot 0.1.0 (never signed); 2: signed when the run handed the probe a key. */
    v: z.union([z.literal(1), z.literal(2)]),
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
    pid: z.number().int().positive().optional(),
    mac: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  }),
);
export type HcpProbeReport = z.infer<typeof HcpProbeReportSchema>;

const encoder = new TextEncoder();

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function bytesToHex(bytes: Uint8Array): string {
  let hex = "";
  for (const b of bytes) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** HMAC-SHA256 of MAC_CONTEXT + `body` (the report's JSON text without its mac member). */
export function probeMac(keyHex: string, body: string): string {
  return bytesToHex(hmac(sha256, hexToBytes(ProbeKeySchema.parse(keyHex)), encoder.encode(MAC_CONTEXT + body)));
}

/** The exact line the probe writes for a report (compact JSON, no newlines); signed when a key is given. */
export function formatProbeLine(report: HcpProbeReport, keyHex?: string): string {
  const { mac: _ignored, ...unsigned } = HcpProbeReportSchema.parse(report);
  const body = JSON.stringify(unsigned);
  return HCP_PROBE_PREFIX + (keyHex === undefined ? body : `${body.slice(0, -1)},"mac":"${probeMac(keyHex, body)}"}`);
}

export type ProbeParse =
  | { ok: true; report: HcpProbeReport; /** The JSON object's text as printed. */ json: string; /** Where the next report may start. */ end: number }
  | { ok: false; error: string; end: number };

/** Longest JSON object accepted after the prefix; a report is a few hundred bytes. */
const MAX_PROBE_JSON = 16_384;

/** Reads the report that starts at the first HCP_PROBE_PREFIX at or after `from`; text after the object is ignored. */
export function parseProbeLine(text: string, from = 0): ProbeParse | null {
  const at = text.indexOf(HCP_PROBE_PREFIX, from);
  if (at < 0) return null;
  const start = at + HCP_PROBE_PREFIX.length;
  const end = jsonObjectEnd(text, start);
  if (end < 0) return { ok: false, error: "no complete JSON object after HCP-PROBE", end: start };
  const json = text.slice(start, end);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, error: `bad JSON after HCP-PROBE: ${(error as Error).message}`, end };
  }
  const parsed = HcpProbeReportSchema.safeParse(value);
  return parsed.success ? { ok: true, report: parsed.data, json, end } : { ok: false, error: z.prettifyError(parsed.error), end };
}

/** Every report in a line, in order (a merged line can hold several). */
export function parseProbeReports(text: string): ProbeParse[] {
  const out: ProbeParse[] = [];
  for (let p = parseProbeLine(text); p; p = parseProbeLine(text, p.end)) out.push(p);
  return out;
}

const MAC_MEMBER = /,"mac":"([0-9a-f]{64})"\}$/;

/** Whether a report's JSON text (as printed) carries a MAC that `keyHex` verifies. */
export function verifyProbeMac(json: string, keyHex: string): boolean {
  const m = MAC_MEMBER.exec(json);
  if (!m) return false;
  const expected = probeMac(keyHex, `${json.slice(0, m.index)}}`);
  return constantTimeEqual(expected, m[1]!);
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
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
