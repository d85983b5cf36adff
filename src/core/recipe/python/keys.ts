// How Python spellings map onto the analyzer's SettingKeys.
import { SETTING_KEYS, SECTIONS, fieldOf, isSettingKey, sectionOf, type Section, type SettingKey } from "../../model/settings.ts";

export const SECTION_NAMES: ReadonlySet<string> = new Set<string>(SECTIONS);

export function isSection(name: string): name is Section {
  return SECTION_NAMES.has(name);
}

/** Nested dataset objects whose `pad_seq_to_mult` is the `dataset.pad_seq_to_mult` setting. */
export const PACKING_SPEC_FIELDS: ReadonlySet<string> = new Set(["packed_sequence_specs", "offline_packing_specs"]);

/** `cfg.<section>.<field>` to a key, including the spellings that mean the same key. */
export function sectionFieldKey(section: Section, field: string): SettingKey | undefined {
  if (section === "dataset" && field === "sequence_length") return "dataset.seq_length";
  const key = `${section}.${field}`;
  return isSettingKey(key) ? key : undefined;
}

function buildFlatKeys(): Map<string, SettingKey> {
  // Flat objects (perf WorkloadBaseConfig, provider dataclasses) name fields without a
  // section; a field name that exists in two sections (seq_length) is ambiguous and left out.
  const seen = new Map<string, SettingKey | null>();
  for (const key of SETTING_KEYS) {
    const field = fieldOf(key);
    seen.set(field, seen.has(field) ? null : key);
  }
  const out = new Map<string, SettingKey>();
  for (const [field, key] of seen) if (key) out.set(field, key);
  return out;
}

/** Field name of a flat config object (workload constant) to its key. */
export const FLAT_FIELD_KEYS: ReadonlyMap<string, SettingKey> = buildFlatKeys();

/** Model fields a provider dataclass may default. */
export function modelFieldKey(field: string): SettingKey | undefined {
  const key = `model.${field}`;
  return isSettingKey(key) ? key : undefined;
}

/**
 * Recipe parameters whose default is the setting even when the body hands it to code we
 * do not analyze (pre-Nov-2025 recipes used `context_parallelism` and friends).
 */
export const PARAMETER_KEYS: ReadonlyMap<string, SettingKey> = new Map<string, SettingKey>([
  ["context_parallel_size", "model.context_parallel_size"],
  ["context_parallelism", "model.context_parallel_size"],
  ["tensor_model_parallel_size", "model.tensor_model_parallel_size"],
  ["tensor_parallelism", "model.tensor_model_parallel_size"],
  ["pipeline_model_parallel_size", "model.pipeline_model_parallel_size"],
  ["pipeline_parallelism", "model.pipeline_model_parallel_size"],
  ["expert_model_parallel_size", "model.expert_model_parallel_size"],
  ["expert_parallelism", "model.expert_model_parallel_size"],
  ["expert_tensor_parallel_size", "model.expert_tensor_parallel_size"],
  ["expert_tensor_parallelism", "model.expert_tensor_parallel_size"],
  ["sequence_parallel", "model.sequence_parallel"],
  ["sequence_parallelism", "model.sequence_parallel"],
  ["cp_comm_type", "model.cp_comm_type"],
  ["hierarchical_context_parallel_sizes", "model.hierarchical_context_parallel_sizes"],
]);

/**
 * Attribute names whose assignment can matter. An assignment statement to any other
 * attribute (`cfg.train.global_batch_size = 512`) is skipped without being walked, which
 * is most of a recipe body and most of the extraction cost.
 */
export const RELEVANT_ATTRIBUTES: ReadonlySet<string> = new Set<string>([
  ...SETTING_KEYS.map(fieldOf),
  ...SECTIONS,
  "transformer",
  "sequence_length",
  ...PACKING_SPEC_FIELDS,
  // cfg.env_vars = {..., "NVLINK_DOMAIN_SIZE": 72}: the NVLink domain a perf recipe states (HCP018).
  "env_vars",
]);

export { sectionOf };
