// HCP022: finetuning with CP > 1 needs per-token loss and no averaging in the collective.
import type { RuleReport } from "../model/finding.ts";
import { isFinetuningDataset } from "../model/dataset-types.ts";
import type { ConfigUnit, SettingKey } from "../model/settings.ts";
import { contextParallel, knownBool, resolve, valueOf, type KnownInt } from "./effective.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

interface Requirement {
  key: SettingKey;
  required: boolean;
  upstream: string;
}

const REQUIREMENTS: readonly Requirement[] = [
  { key: "model.calculate_per_token_loss", required: true, upstream: UPSTREAM.B2 },
  { key: "ddp.average_in_collective", required: false, upstream: UPSTREAM.B3 },
];

export const rule = defineRule({
  id: "HCP022",
  name: "sft-cp-loss-settings",
  severity: "error",
  summary: "SFT with CP without per-token loss (or with average_in_collective)",
  doc: {
    checks:
      "A unit whose dataset is a fine-tuning type (GPTSFTDatasetConfig, DirectHFSFTDatasetConfig, EnergonDatasetConfig, " +
      "MockVLMSFTDatasetConfig, or a subclass) with context_parallel_size > 1 where model.calculate_per_token_loss is False " +
      "or ddp.average_in_collective is True. The dataset type decides, as in Bridge's validate (HEAD 067f987); the recipe's " +
      "name never does. Values that are not known are not judged. A run_recipe launch line in a fine-tuning mode " +
      "(--mode, or the mode run_recipe infers from the recipe name) is judged after run_recipe's " +
      "sync_finetuning_cp_invariants, which sets both. On Megatron-FSDP, validate first runs the FSDP branch " +
      "(training/config.py:1484-1485, before the check at 1591-1596, HEAD 067f987): with megatron_fsdp_version 1 (the " +
      "default) it sets average_in_collective = False unless ddp.disable_symmetric_registration is True (config.py:1094-1096), " +
      "so average_in_collective = True is judged only where that branch keeps it; where FSDP is not known to be on or off, it is not judged.",
    why: `Megatron-Bridge rejects both for finetuning: ${quote(UPSTREAM.B2)} and ${quote(UPSTREAM.B3)}`,
    example: "cfg = _sft_common()\ncfg.dataset = GPTSFTDatasetConfig(seq_length=2048)\ncfg.model.context_parallel_size = 2\ncfg.ddp.average_in_collective = True",
    fix: "Set cfg.model.calculate_per_token_loss = True and cfg.ddp.average_in_collective = False.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    if (!isFinetuningDataset(unit)) return [];
    const cp = contextParallel(unit);
    if (!cp || cp.value <= 1) return [];
    return REQUIREMENTS.flatMap((req) => violation(unit, cp, req));
  },
});

type Tri = "yes" | "no" | "unknown";

function knownFlag(unit: ConfigUnit, keys: readonly SettingKey[]): Tri {
  const values = keys.map((k) => knownBool(unit, k));
  if (values.includes(true)) return "yes";
  return values.every((v) => v === false) ? "no" : "unknown";
}

/**
 * Whether validate's Megatron-FSDP branch sets ddp.average_in_collective = False before the
 * finetuning check: `_validate_and_apply_megatron_fsdp_v1_configs` does when
 * `average_in_collective and not disable_symmetric_registration`; the V2 path (Megatron-Core
 * at Bridge's pin has FullyShardedDataParallelV2, so megatron_fsdp_version 2 selects it) does not.
 */
export function fsdpClearsAverageInCollective(unit: ConfigUnit): Tri {
  const fsdp = knownFlag(unit, ["ddp.use_megatron_fsdp", "dist.use_megatron_fsdp"]);
  if (fsdp !== "yes") return fsdp;
  const version = valueOf(resolve(unit, "ddp.megatron_fsdp_version"));
  if (version === 2) return "no";
  if (version !== 1) return "unknown";
  const disabled = knownBool(unit, "ddp.disable_symmetric_registration");
  return disabled === undefined ? "unknown" : disabled ? "no" : "yes";
}

function violation(unit: ConfigUnit, cp: KnownInt, req: Requirement): RuleReport[] {
  const setting = unit.settings[req.key];
  const value = knownBool(unit, req.key);
  if (!setting || value === undefined || value === req.required) return [];
  if (req.key === "ddp.average_in_collective" && fsdpClearsAverageInCollective(unit) !== "no") return [];
  const message =
    `${describe(setting)} with a fine-tuning dataset (${unit.datasetType ?? "?"}) and ${describeResolution("model.context_parallel_size", cp.res)}. ` +
    `Megatron-Bridge rejects this: ${quote(req.upstream)}. Set ${req.key} = ${repr(req.required)}.`;
  const fix = fixOf(`Set ${req.key} to ${repr(req.required)}`, [editFor(unit, req.key, req.required)]);
  const summary = `${req.key} is ${repr(value)} with a fine-tuning dataset and CP ${cp.value}; set it to ${repr(req.required)}`;
  return [reportAt(unit, setting, message, { summary, fix, related: relatedTo(cp.setting, "context parallel size") })];
}
