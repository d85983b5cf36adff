// The effective settings of one configuration unit (a recipe function, a YAML override
// file, a launch line), each with the place its value came from.
// Schemas are built on first use (deferred.ts): on the lint path they only give types, and
// building zod schemas at module load costs every CLI start and edge cold start (bench:cli).
import * as z from "zod";
import { deferred } from "./deferred.ts";
import { LocationSchema } from "./source.ts";

/**
 * The settings the rules read, as dotted ConfigContainer paths. Extractors map every
 * spelling they meet (Megatron-LM flags, run_recipe convenience flags, legacy
 * parameter names) onto these keys.
 */
export const SETTING_KEYS = [
  "model.context_parallel_size",
  "model.cp_comm_type",
  "model.hierarchical_context_parallel_sizes",
  "model.seq_length",
  "dataset.seq_length",
  "model.tensor_model_parallel_size",
  "model.pipeline_model_parallel_size",
  "model.expert_model_parallel_size",
  "model.expert_tensor_parallel_size",
  "model.sequence_parallel",
  "model.num_layers",
  "model.num_attention_heads",
  "model.num_query_groups",
  "model.transformer_impl",
  "model.window_size",
  "model.window_attn_skip_freq",
  "model.experimental_attention_variant",
  "model.qkv_format",
  "model.softmax_type",
  "model.position_embedding_type",
  "model.multi_latent_attention",
  "model.calculate_per_token_loss",
  "model.hybrid_context_parallel",
  "model.dynamic_context_parallel",
  "model.max_seqlen_per_dp_cp_rank",
  "dist.use_decentralized_pg",
  "dist.use_gloo_process_groups",
  "dist.eval_context_parallel_size",
  "ddp.average_in_collective",
  "ddp.use_megatron_fsdp",
  "dist.use_megatron_fsdp",
  "ddp.megatron_fsdp_version",
  "ddp.disable_symmetric_registration",
  "dataset.packed_sequence",
  "dataset.enable_offline_packing",
  "dataset.enable_in_batch_packing",
  "dataset.packed_sequence_specs",
  "dataset.offline_packing_specs",
  "dataset.pad_seq_to_mult",
] as const;

export const SettingKeySchema = deferred(() => z.enum(SETTING_KEYS));
export type SettingKey = z.infer<ReturnType<typeof SettingKeySchema>>;

export function isSettingKey(key: string): key is SettingKey {
  return (SETTING_KEYS as readonly string[]).includes(key);
}

/** A value the analyzer could compute exactly: what Python/YAML literals evaluate to. */
export type Known = number | string | boolean | null | Known[] | { [key: string]: Known };
export const KnownSchema = deferred((): z.ZodType<Known> => {
  const knownValue: z.ZodType<Known> = z.lazy(() =>
    z.union([z.number(), z.string(), z.boolean(), z.null(), z.array(knownValue), z.record(z.string(), knownValue)]),
  );
  return knownValue;
});

export const ValueSchema = deferred(() =>
  z.discriminatedUnion("known", [
    z.object({ known: z.literal(true), value: KnownSchema() }),
    // Unknown values carry why (a call result, an unresolved name...), so INFO findings can say it.
    z.object({ known: z.literal(false), reason: z.string() }),
  ]),
);
export type Value = z.infer<ReturnType<typeof ValueSchema>>;

export const known = (value: Known): Value => ({ known: true, value });
export const unknown = (reason: string): Value => ({ known: false, reason });

/** How a value is spelled where it was found; the fix renderer writes new text in the same style. */
export const SyntaxSchema = deferred(() => z.enum(["python", "yaml", "hydra", "mlm", "text"]));
export type Syntax = z.infer<ReturnType<typeof SyntaxSchema>>;

export const OriginKindSchema = deferred(() =>
  z.enum([
    "assignment", // cfg.model.x = v
    "keyword", // Provider(x=v), replace(BASE, x=v), builder(**{"x": v})
    "parameter-default", // def recipe(x: int = 4)
    "yaml", // model: {x: v}
    "hydra-override", // model.x=v on a run_recipe command line
    "cli-flag", // run_recipe -cp 4
    "mlm-flag", // Megatron-LM --context-parallel-size 4
    "pin", // a dependency version pin
  ]),
);
export type OriginKind = z.infer<ReturnType<typeof OriginKindSchema>>;

export const OriginSchema = deferred(() =>
  z.object({
    kind: OriginKindSchema(),
    /** Covers exactly the value text, so a fix can replace it. */
    location: LocationSchema(),
    /** The value as written (`SEQUENCE_LENGTH_64K`, `"a2a+p2p"`, `[2,2]`). */
    text: z.string(),
    syntax: SyntaxSchema(),
    /** Human description of the path the value took, e.g. "from llama3_8b_base() line 40". */
    via: z.string().optional(),
  }),
);
export type Origin = z.infer<ReturnType<typeof OriginSchema>>;

export const SettingSchema = deferred(() =>
  z.object({
    key: SettingKeySchema(),
    value: ValueSchema(),
    origin: OriginSchema(),
    /**
     * True when the value was written in this unit's own text (its function body, its
     * YAML file, its launch line), so replacing it there changes only this unit.
     * Inherited values (a base recipe, a module constant shared by other recipes) are
     * fixed by adding an override at the unit's anchor instead.
     */
    local: z.boolean(),
    /**
     * For an inherited value (not local): the call in the unit's own text during which it
     * was made (`cfg = base_recipe()`, `_apply_common(cfg)`), where it entered this unit.
     */
    site: LocationSchema().optional(),
    /**
     * One level further in, for a value inherited through a base recipe: the call in the
     * base's own code during which it was made (where the base's own unit reports it).
     */
    baseSite: LocationSchema().optional(),
  }),
);
export type Setting = z.infer<ReturnType<typeof SettingSchema>>;

export const SECTIONS = ["model", "dataset", "dist", "ddp"] as const;
export type Section = (typeof SECTIONS)[number];

export function sectionOf(key: SettingKey): Section {
  return key.slice(0, key.indexOf(".")) as Section;
}

export function fieldOf(key: SettingKey): string {
  return key.slice(key.indexOf(".") + 1);
}

/**
 * Where a fix may add a setting the unit does not set yet. `receiver` is the text that
 * precedes a field name in this unit (`cfg.model.` in Python, `model.` for Hydra,
 * empty for YAML inside its section), `indent` the line's leading white space.
 */
export const AnchorStyleSchema = deferred(() => z.enum(["python-attr", "yaml", "hydra", "mlm"]));
export type AnchorStyle = z.infer<ReturnType<typeof AnchorStyleSchema>>;

export const AnchorSchema = deferred(() =>
  z.object({
    style: AnchorStyleSchema(),
    /** Zero-width location where the new text is inserted. */
    at: LocationSchema(),
    indent: z.string(),
    receiver: z.string(),
  }),
);
export type Anchor = z.infer<ReturnType<typeof AnchorSchema>>;

export const UnitKindSchema = deferred(() => z.enum(["recipe", "yaml", "launch", "mlm-launch"]));
export type UnitKind = z.infer<ReturnType<typeof UnitKindSchema>>;

/** The entry point that runs a launch line (see rules/launchers.ts). */
export const LAUNCHER_IDS = ["training", "performance", "performance-recipes"] as const;
export type LauncherId = (typeof LAUNCHER_IDS)[number];

export const ModeSchema = deferred(() => z.enum(["pretrain", "sft", "peft", "unknown"]));
export type Mode = z.infer<ReturnType<typeof ModeSchema>>;

/**
 * The mode scripts/training/run_recipe.py infers from a recipe name when --mode is not
 * given (recipe_metadata.infer_recipe_mode, Bridge HEAD 067f987): `_pretrain_` first, then
 * `_sft_`/`_finetune_`, then `_dora_`, `_peft_`/`_lora_` (dora and lora are PEFT here).
 */
export function runRecipeMode(name: string | undefined): Mode {
  if (!name) return "unknown";
  const n = `_${name.toLowerCase().replace(/^_+|_+$/g, "")}_`;
  if (n.includes("_pretrain_")) return "pretrain";
  if (n.includes("_sft_") || n.includes("_finetune_")) return "sft";
  if (n.includes("_dora_") || n.includes("_peft_") || n.includes("_lora_")) return "peft";
  return "unknown";
}

export const ConfigUnitSchema = deferred(() =>
  z.object({
    /** Stable id: `path::function` for recipes, `path:line` for launch lines, `path` for YAML. */
    id: z.string(),
    kind: UnitKindSchema(),
    /** Recipe function name, or a short description of the launch line. */
    name: z.string(),
    /** The def line, the YAML file start or the launch line. */
    location: LocationSchema(),
    settings: z.partialRecord(SettingKeySchema(), SettingSchema()),
    anchors: z.partialRecord(z.enum(SECTIONS), AnchorSchema()),
    /**
     * The training mode scripts/training/run_recipe.py runs the unit in: `--mode`, else what
     * run_recipe infers from the recipe name (`_pretrain_` before `_sft_`/`_finetune_`, then
     * `_dora_`, `_peft_`/`_lora_`). Only run_recipe's own sync reads it; Bridge's checks
     * depend on the dataset type, never on a name.
     */
    mode: ModeSchema(),
    /**
     * The class that built cfg.dataset (`GPTSFTDatasetConfig`), or the call whose result it
     * is when that call was not analyzed. Bridge's fine-tuning checks (HCP022) apply only to
     * fine-tuning dataset types.
     */
    datasetType: z.string().optional(),
    /** Base classes of datasetType when its class was analyzed (isinstance also matches them). */
    datasetBases: z.array(z.string()).optional(),
    /**
     * What built cfg.model when its unset fields may differ from Megatron-Core's defaults:
     * an unanalyzed call (`AutoBridge.from_hf_pretrained(...).to_megatron_provider()`, whose
     * bridge may set cp_comm_type, as Mistral's does) or a provider class.
     */
    modelBuilder: z.string().optional(),
    /**
     * The generic Megatron-Core config class (`GPTModelProvider`, `TransformerConfig`) whose
     * constructor call in the unit's own file built cfg.model, with no `**kwargs` we cannot see:
     * its unset fields then get TransformerConfig.__post_init__'s defaults.
     */
    modelClass: z.string().optional(),
    /**
     * The world size, from a launch line's `--nproc_per_node * --nnodes`. Not from a recipe's
     * name (`_32gpu_`), nor from a perf workload's `num_gpus`, which upstream documents as
     * "for representation purposes only".
     */
    gpus: z.number().int().positive().optional(),
    /**
     * GPUs in one NVLink domain, with where it came from: the NVLINK_DOMAIN_SIZE the unit
     * states (cfg.env_vars, a launch script's export), its recipe name, or the hardware
     * namespace of its path (`recipes/<family>/gb200/…`, `perf_recipes/<family>/<gpu>/…`).
     */
    nvlinkDomain: z
      .object({
        gpus: z.number().int().positive(),
        source: z.string(),
        /** Stated by a base the unit starts from (its env_vars), not by the unit's own code: the unit's name outranks it. */
        inherited: z.boolean().optional(),
      })
      .optional(),
    /**
     * Overrides the entry point throws away before validating: run_recipe copies
     * dataset.seq_length over model.seq_length, so a launch line's model.seq_length alone
     * never reaches the run (HCP008 says so; the other rules judge what runs).
     */
    discarded: z.array(SettingSchema()).optional(),
    /**
     * True when every source of the unit's values was analyzed (a recipe function, or a
     * launch line merged with its analyzed recipe): an unset key then has the upstream
     * default. False for a launch line or override file whose recipe was not analyzed:
     * that recipe may set any key the unit leaves unset.
     */
    complete: z.boolean(),
    /** The launcher a launch line runs (its script); recipes get theirs from their folder (rules/launchers.ts). */
    launcher: z.enum(LAUNCHER_IDS).optional(),
    /** Recipe named by a launch line (`--recipe NAME`), so overrides apply on top of it. */
    baseRecipe: z.string().optional(),
    /**
     * The base recipe was imported from megatron.bridge (a user's script starting from an
     * upstream recipe): its upstream name, the module, where it is called, and whether the call
     * has no arguments (what an index of upstream recipes describes).
     */
    upstreamBase: z.object({ name: z.string(), module: z.string(), plainCall: z.boolean(), at: LocationSchema() }).optional(),
    /** Notes from extraction (unresolvable constructs), shown as INFO diagnostics. */
    notes: z.array(z.object({ message: z.string(), location: LocationSchema() })),
  }),
);
export type ConfigUnit = z.infer<ReturnType<typeof ConfigUnitSchema>>;
