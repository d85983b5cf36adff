// The advisor's numbers read from an analyzed recipe (`hcp-bot advise FILE::FUNCTION`):
// CP, TP, PP and the head counts, each with where it came from. A number the analyzer
// cannot know stays unknown; CP and TP are required, so their absence is a refusal.
import type { ConfigUnit } from "../model/settings.ts";
import type { SettingKey } from "../model/settings.ts";
import { headsPerRank, knownInt, type KnownInt } from "../rules/effective.ts";

export interface UnitNumbers {
  cp: number;
  tp: number;
  pp: number;
  numAttentionHeads?: number;
  numQueryGroups?: number;
  /** "context_parallel_size 16 (recipe.py:12)" for each number read. */
  sources: string[];
  /** What the recipe sets today, for "the recipe has …" lines. */
  current: { cpCommType?: string; sizes?: number[] };
}

export type UnitNumbersResult = { ok: true; numbers: UnitNumbers } | { ok: false; error: string };

function source(key: SettingKey, known: KnownInt): string {
  const name = key.split(".").pop()!;
  const at = known.setting ? `${known.setting.origin.location.file}:${known.setting.origin.location.range.start.line}` : "the upstream default";
  return `${name} ${known.value} (${at})`;
}

function currentLayout(unit: ConfigUnit): UnitNumbers["current"] {
  const out: UnitNumbers["current"] = {};
  const type = unit.settings["model.cp_comm_type"]?.value;
  if (type?.known && typeof type.value === "string") out.cpCommType = type.value;
  const sizes = unit.settings["model.hierarchical_context_parallel_sizes"]?.value;
  if (sizes?.known && Array.isArray(sizes.value) && sizes.value.every((v) => typeof v === "number")) out.sizes = sizes.value as number[];
  return out;
}

export function adviseNumbersOf(unit: ConfigUnit): UnitNumbersResult {
  const cp = knownInt(unit, "model.context_parallel_size");
  const tp = knownInt(unit, "model.tensor_model_parallel_size");
  const pp = knownInt(unit, "model.pipeline_model_parallel_size");
  if (!cp) return { ok: false, error: `the context_parallel_size of ${unit.name} is not known from the analyzed files` };
  if (!tp) return { ok: false, error: `the tensor_model_parallel_size of ${unit.name} is not known from the analyzed files` };
  const numbers: UnitNumbers = {
    cp: cp.value,
    tp: tp.value,
    pp: pp?.value ?? 1,
    sources: [source("model.context_parallel_size", cp), source("model.tensor_model_parallel_size", tp)],
    current: currentLayout(unit),
  };
  if (pp) numbers.sources.push(source("model.pipeline_model_parallel_size", pp));
  const heads = headsPerRank(unit);
  if (heads) {
    numbers.numAttentionHeads = heads.q * heads.tp;
    numbers.numQueryGroups = heads.kv * heads.tp;
    numbers.sources.push(`num_attention_heads ${heads.q * heads.tp}, num_query_groups ${heads.kv * heads.tp}`);
  }
  return { ok: true, numbers };
}
