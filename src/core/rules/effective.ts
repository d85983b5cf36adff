// What a unit's settings mean once upstream defaults are taken into account.
//
// A rule never guesses. Every key resolves to one of:
//   set      the unit (or a source merged into it) wrote it; the value may still be unknown
//   default  unset, and we know what upstream then uses
//   unknown  unset, and something we did not analyze may set it
//
// Which unset keys have a known value (docs/domain.md 1.3, 1.4, 3.5; Megatron-Core
// ModelParallelConfig / TransformerConfig and Bridge DistributedInitConfig defaults):
//
// * Always, whatever the unit: no upstream recipe, provider, bridge or common builder
//   (`_pretrain_common`, `_sft_common`, `_peft_common`) sets
//   `hierarchical_context_parallel_sizes`, `use_decentralized_pg`,
//   `eval_context_parallel_size` or `hybrid_context_parallel`/`dynamic_context_parallel`,
//   so an unset key there has the MCore/Bridge default even in a launch line whose recipe
//   we never saw. Likewise nothing upstream sets a cp_comm_type containing `a2a+p2p`,
//   so "cp_comm_type unset" implies "no a2a+p2p" everywhere (see `commTypes`).
// * Only when `unit.complete` (every source analyzed): parallel sizes default to 1,
//   cp_comm_type to None (Transformer Engine then uses p2p), transformer_impl to
//   "transformer_engine", experimental_attention_variant to None. For an incomplete unit
//   the unseen recipe may set them. The model-builder keys (cp_comm_type, transformer_impl,
//   experimental_attention_variant) also stay unknown when cfg.model comes from a builder
//   we did not see through (`unit.modelBuilder`): bridges set them (Mistral's sets
//   cp_comm_type "a2a" with sliding window, GLM-5's "allgather" and variant "dsa",
//   Falcon-H1's provider transformer_impl "local").
// * Never: seq lengths, head counts (except num_query_groups of a model built in the file,
//   see `headCountDefault`), num_layers, calculate_per_token_loss,
//   average_in_collective (the common builders set it True!), packing (Bridge's
//   `_sft_common` enables offline packing by default), qkv_format, window_size,
//   softmax_type. Unset means unknown.
import type { ProjectFacts } from "../model/finding.ts";
import type { ConfigUnit, Known, Setting, SettingKey } from "../model/settings.ts";

export type Resolution =
  | { state: "set"; known: true; value: Known; setting: Setting }
  | { state: "set"; known: false; reason: string; setting: Setting }
  | { state: "default"; value: Known; why: string }
  | { state: "unknown"; reason: string };

/** Defaults that hold for every unit: nothing upstream ever sets these keys (docs/domain.md 1.4). */
const UNIVERSAL_DEFAULTS: Partial<Record<SettingKey, Known>> = {
  "model.hierarchical_context_parallel_sizes": null,
  "dist.use_decentralized_pg": false,
  "dist.eval_context_parallel_size": null,
  "model.hybrid_context_parallel": false,
  "model.dynamic_context_parallel": false,
  // Megatron-Core DistributedDataParallelConfig defaults (distributed_data_parallel_config.py
  // at Bridge's pin 2a75ac1); no upstream recipe or launcher sets either.
  "ddp.megatron_fsdp_version": 1,
  "ddp.disable_symmetric_registration": false,
};

/** Defaults that hold only when every source of the unit was analyzed. */
const COMPLETE_UNIT_DEFAULTS: Partial<Record<SettingKey, Known>> = {
  "model.context_parallel_size": 1,
  "model.tensor_model_parallel_size": 1,
  "model.pipeline_model_parallel_size": 1,
  "model.expert_model_parallel_size": 1,
  "model.cp_comm_type": null,
  "model.transformer_impl": "transformer_engine",
  "model.experimental_attention_variant": null,
  "model.window_attn_skip_freq": null,
  // Some recipes turn Megatron-FSDP on (nemotron_3_nano gb200, qwen35_vl), so only a complete unit knows it is off.
  "ddp.use_megatron_fsdp": false,
  "dist.use_megatron_fsdp": false,
};

/** Model fields providers and bridges set themselves (docs/domain.md 1.3; models/**). */
const BUILDER_KEYS: ReadonlySet<SettingKey> = new Set<SettingKey>([
  "model.cp_comm_type",
  "model.transformer_impl",
  "model.experimental_attention_variant",
  "model.window_attn_skip_freq",
]);

export function resolve(unit: ConfigUnit, key: SettingKey): Resolution {
  const setting = unit.settings[key];
  if (setting) {
    return setting.value.known
      ? { state: "set", known: true, value: setting.value.value, setting }
      : { state: "set", known: false, reason: setting.value.reason, setting };
  }
  const heads = headCountDefault(unit, key);
  if (heads) return heads;
  if (key in UNIVERSAL_DEFAULTS) {
    return { state: "default", value: UNIVERSAL_DEFAULTS[key] ?? null, why: "no upstream recipe or builder sets it" };
  }
  if (unit.complete && unit.modelBuilder !== undefined && BUILDER_KEYS.has(key)) {
    return { state: "unknown", reason: `not set here, and cfg.model comes from ${unit.modelBuilder}, which may set it` };
  }
  if (unit.complete && key in COMPLETE_UNIT_DEFAULTS) {
    return { state: "default", value: COMPLETE_UNIT_DEFAULTS[key] ?? null, why: "upstream default" };
  }
  return {
    state: "unknown",
    reason: unit.complete ? "not set, and it has no fixed upstream default" : "not set here, and the base recipe was not analyzed",
  };
}

/**
 * Unset num_query_groups is the head count: Megatron-Core TransformerConfig.__post_init__
 * (megatron/core/transformer/transformer_config.py, pin 2a75ac1) does
 * `if self.num_query_groups is None: self.num_query_groups = self.num_attention_heads`.
 * Only for a model built in the unit's own file by a generic config class (`unit.modelClass`)
 * with num_attention_heads written: a provider from elsewhere may set its own groups.
 */
function headCountDefault(unit: ConfigUnit, key: SettingKey): Resolution | undefined {
  if (key !== "model.num_query_groups" || !unit.complete || unit.modelClass === undefined || unit.modelBuilder !== undefined) return undefined;
  const q = unit.settings["model.num_attention_heads"];
  if (!q?.value.known || !isInt(q.value.value)) return undefined;
  return { state: "default", value: q.value.value, why: `${unit.modelClass} sets num_query_groups = num_attention_heads when it is unset` };
}

/** The value when it is known, either because it was written or because the default applies. */
export function valueOf(res: Resolution): Known | undefined {
  if (res.state === "set") return res.known ? res.value : undefined;
  if (res.state === "default") return res.value;
  return undefined;
}

export function settingOf(res: Resolution): Setting | undefined {
  return res.state === "set" ? res.setting : undefined;
}

/** An exact integer: one past 2^53 is not (HCP024 reports it; every other rule treats it as unknown). */
export function isInt(value: Known | undefined): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

/** An integer setting with its source; undefined when not known to be an integer. */
export interface KnownInt {
  value: number;
  setting?: Setting;
  res: Resolution;
}

export function knownInt(unit: ConfigUnit, key: SettingKey): KnownInt | undefined {
  const res = resolve(unit, key);
  const value = valueOf(res);
  if (!isInt(value)) return undefined;
  const setting = settingOf(res);
  return setting ? { value, setting, res } : { value, res };
}

export const contextParallel = (unit: ConfigUnit): KnownInt | undefined => knownInt(unit, "model.context_parallel_size");
export const tensorParallel = (unit: ConfigUnit): KnownInt | undefined => knownInt(unit, "model.tensor_model_parallel_size");

/** A known boolean (a Python bool, or 0/1 as some YAML files write it). */
export function knownBool(unit: ConfigUnit, key: SettingKey): boolean | undefined {
  const value = valueOf(resolve(unit, key));
  if (typeof value === "boolean") return value;
  if (value === 0 || value === 1) return value === 1;
  return undefined;
}

// ---------------------------------------------------------------------------------
// cp_comm_type

export const VALID_CP_COMM_TYPES = ["p2p", "all_gather", "a2a", "a2a+p2p"] as const;
export const A2A_P2P = "a2a+p2p";

export type CommTypes =
  /** None (set or defaulted): Transformer Engine falls back to p2p. */
  | { state: "none"; setting?: Setting }
  /** A str (normalised to one element) or a per-layer list of str. */
  | { state: "types"; types: string[]; perLayer: boolean; setting: Setting }
  /** Neither str nor list of str (B5/M2). */
  | { state: "malformed"; raw: Known; setting: Setting }
  /** Unset in an incomplete unit (`setting` absent) or set to an unknown value. */
  | { state: "unknown"; reason: string; setting?: Setting };

export function commTypes(unit: ConfigUnit): CommTypes {
  const res = resolve(unit, "model.cp_comm_type");
  if (res.state === "unknown") return { state: "unknown", reason: res.reason };
  if (res.state === "set" && !res.known) return { state: "unknown", reason: res.reason, setting: res.setting };
  const value = valueOf(res) ?? null;
  const setting = settingOf(res);
  if (value === null) return setting ? { state: "none", setting } : { state: "none" };
  if (!setting) return { state: "unknown", reason: "cp_comm_type default is not a string" }; // unreachable: defaults are None
  if (typeof value === "string") return { state: "types", types: [value], perLayer: false, setting };
  if (Array.isArray(value) && value.every((v): v is string => typeof v === "string")) {
    return { state: "types", types: value, perLayer: true, setting };
  }
  return { state: "malformed", raw: value, setting };
}

export type Tri = "yes" | "no" | "unknown";

/**
 * Whether any layer's type contains "a2a+p2p" (Bridge B6 tests `"a2a+p2p" in t`).
 * Unset cp_comm_type means "no" even in an incomplete unit: no upstream recipe,
 * provider or bridge sets a2a+p2p (docs/domain.md 1.4).
 */
export function usesA2aP2p(types: CommTypes): Tri {
  switch (types.state) {
    case "none":
    case "malformed":
      return "no";
    case "types":
      return types.types.some((t) => t.includes(A2A_P2P)) ? "yes" : "no";
    case "unknown":
      return types.setting ? "unknown" : "no";
  }
}

/** Replace every a2a+p2p entry, keeping the str/list shape the unit wrote. */
export function replaceA2aP2p(types: Extract<CommTypes, { state: "types" }>, by: string | null): Known {
  if (!types.perLayer) return by;
  return types.types.map((t) => (t.includes(A2A_P2P) ? (by ?? "p2p") : t));
}

// ---------------------------------------------------------------------------------
// hierarchical_context_parallel_sizes

export type HcpSizes =
  /** None, set or defaulted (nothing upstream sets it). */
  | { state: "none"; setting?: Setting }
  | { state: "list"; values: Known[]; setting: Setting }
  | { state: "malformed"; raw: Known; setting: Setting }
  | { state: "unknown"; reason: string; setting: Setting };

export function hcpSizes(unit: ConfigUnit): HcpSizes {
  const res = resolve(unit, "model.hierarchical_context_parallel_sizes");
  if (res.state !== "set") return { state: "none" };
  if (!res.known) return { state: "unknown", reason: res.reason, setting: res.setting };
  if (res.value === null) return { state: "none", setting: res.setting };
  if (Array.isArray(res.value)) return { state: "list", values: res.value, setting: res.setting };
  return { state: "malformed", raw: res.value, setting: res.setting };
}

/** The sizes as positive integers, or undefined when any entry is not one (HCP004's business). */
export function positiveIntSizes(sizes: HcpSizes): number[] | undefined {
  if (sizes.state !== "list") return undefined;
  const ints = sizes.values.filter((v): v is number => isInt(v) && v >= 1);
  return ints.length === sizes.values.length ? ints : undefined;
}

export const product = (xs: readonly number[]): number => xs.reduce((a, b) => a * b, 1);

/**
 * Whether the unit asks for hierarchical CP: a type containing a2a+p2p, or sizes given.
 * Unknown only when neither is "yes" and one of them is unknown.
 */
export function hcpContext(unit: ConfigUnit): Tri {
  const a2aP2p = usesA2aP2p(commTypes(unit));
  const sizes = hcpSizes(unit);
  if (a2aP2p === "yes" || sizes.state === "list" || sizes.state === "malformed") return "yes";
  if (a2aP2p === "unknown" || sizes.state === "unknown") return "unknown";
  return "no";
}

/** The setting that makes the unit hierarchical, for `related` entries and locations. */
export function hcpTrigger(unit: ConfigUnit): Setting | undefined {
  const types = commTypes(unit);
  if (usesA2aP2p(types) === "yes" && types.state === "types") return types.setting;
  const sizes = hcpSizes(unit);
  return sizes.state === "list" || sizes.state === "malformed" ? sizes.setting : undefined;
}

// ---------------------------------------------------------------------------------
// Attention heads per tensor-parallel rank (TE splits heads after TP: docs/domain.md 3.3)

export interface HeadsPerRank {
  q: number;
  kv: number;
  tp: number;
  qSetting?: Setting;
  kvSetting?: Setting;
}

/**
 * Q and KV heads per TP rank, when the head counts and TP are known and TP divides them.
 * `num_query_groups` explicitly None means MHA (KV heads = Q heads); unset is unknown unless
 * the model is built in the file (`headCountDefault`).
 */
export function headsPerRank(unit: ConfigUnit): HeadsPerRank | undefined {
  const q = knownInt(unit, "model.num_attention_heads");
  const tp = tensorParallel(unit);
  if (!q || !tp || tp.value < 1) return undefined;
  const kvRes = resolve(unit, "model.num_query_groups");
  const kvValue = valueOf(kvRes);
  const kv = kvValue === null && kvRes.state === "set" ? q.value : kvValue;
  if (!isInt(kv)) return undefined;
  if (q.value % tp.value !== 0 || kv % tp.value !== 0) return undefined;
  const out: HeadsPerRank = { q: q.value / tp.value, kv: kv / tp.value, tp: tp.value };
  if (q.setting) out.qSetting = q.setting;
  const kvSetting = settingOf(kvRes);
  if (kvSetting) out.kvSetting = kvSetting;
  return out;
}

// ---------------------------------------------------------------------------------
// Model families and project facts

/**
 * Whether attention is DeepSeek Sparse Attention: Megatron-Core keys it on
 * `experimental_attention_variant == "dsa"` (TransformerConfig.__post_init__, MCore pin
 * 2a75ac1 and HEAD). Unknown when the variant is not known (a model from a bridge).
 */
export function dsaAttention(unit: ConfigUnit): Tri {
  const res = resolve(unit, "model.experimental_attention_variant");
  const value = valueOf(res);
  if (value === undefined) return "unknown";
  return value === "dsa" ? "yes" : "no";
}

/**
 * Names of the DeepSeek Sparse Attention families (GLM-5 `glm_moe_dsa`, DeepSeek-V3.2):
 * only ever used to add a hint to an INFO finding, never to decide.
 */
const DSA_NAME = /glm_moe_dsa|glm-?5(?![0-9])|(?<![a-z])dsa(?![a-z])|deepseek[_-]?v3[._-]?2|deepseek[_-]?v32|(?<![a-z])dsv32/;

export function namedLikeDsa(unit: ConfigUnit): boolean {
  return DSA_NAME.test(`${unit.id} ${unit.location.file} ${unit.name}`.toLowerCase());
}

/** GPUs in one NVLink domain for this unit, and where the number came from. */
export function nvlinkDomain(unit: ConfigUnit, project: ProjectFacts): { gpus: number; source: string } {
  return unit.nvlinkDomain ?? { gpus: project.gpusPerNode, source: project.gpusPerNodeSource ?? "the default for 8-GPU H100/H200 nodes" };
}

// ---------------------------------------------------------------------------------
// Sliding-window layers (Megatron-Core transformer/utils.py is_layer_window_attention)

/**
 * Transformer Engine's test for a window: not None and neither (-1, 0) nor (-1, -1)
 * (attn_forward_func_with_cp, TE 2.8 and later). Undefined when the value is not a pair.
 */
export function isSlidingWindow(value: Known): boolean | undefined {
  if (value === null || value === false) return false;
  if (!Array.isArray(value) || value.length !== 2 || !value.every(isInt)) return undefined;
  const [left, right] = value as [number, number];
  return !(left === -1 && (right === 0 || right === -1));
}

/**
 * Which 1-based layers Megatron-Core gives the window to: every layer without
 * window_attn_skip_freq; with an int N every layer whose number is not a multiple of N;
 * with a list the layers whose entry is truthy. Undefined when that cannot be known.
 */
export function windowLayers(unit: ConfigUnit, layers: number | undefined): ((layer: number) => boolean) | undefined {
  const freq = valueOf(resolve(unit, "model.window_attn_skip_freq"));
  if (freq === null) return () => true;
  if (isInt(freq) && freq > 0) return (layer) => layer % freq !== 0;
  if (Array.isArray(freq)) {
    if (layers !== undefined && freq.length !== layers) return undefined;
    return (layer) => {
      const v = freq[layer - 1];
      return v !== undefined && v !== 0 && v !== false && v !== null;
    };
  }
  return undefined;
}

/** "2.15.0+42b84005" -> [2, 15, 0]; undefined when no leading version number. */
export function parseVersion(version: string): number[] | undefined {
  const m = /(\d+(?:\.\d+)*)/.exec(version);
  return m?.[1] ? m[1].split(".").map(Number) : undefined;
}

/** Negative when a < b, like `packaging.Version` for plain release numbers. */
export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether the pinned Transformer Engine is older than `min`; "unknown" without a readable pin. */
export function teOlderThan(project: ProjectFacts, min: string): Tri {
  const pin = project.transformerEngine && parseVersion(project.transformerEngine.version);
  const floor = parseVersion(min);
  if (!pin || !floor) return "unknown";
  return compareVersions(pin, floor) < 0 ? "yes" : "no";
}

/** A flag that switches a feature on: true, a positive number, a non-empty string. */
export function isEnabled(value: Known | undefined): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value > 0;
  if (typeof value === "string") return value.length > 0 && !/^(false|none|null|0)$/i.test(value);
  return false;
}
