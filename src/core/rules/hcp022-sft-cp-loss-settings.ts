// HCP022: finetuning with CP > 1 needs per-token loss and no averaging in the collective.
import type { RuleReport } from "../model/finding.ts";
import { isFinetuningDataset } from "../model/dataset-types.ts";
import type { ConfigUnit, SettingKey } from "../model/settings.ts";
import { contextParallel, knownBool, type KnownInt } from "./effective.ts";
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
  doc: {
    checks:
      "A unit whose dataset is a fine-tuning type (GPTSFTDatasetConfig, DirectHFSFTDatasetConfig, EnergonDatasetConfig, " +
      "MockVLMSFTDatasetConfig, or a subclass) with context_parallel_size > 1 where model.calculate_per_token_loss is False " +
      "or ddp.average_in_collective is True. The dataset type decides, as in Bridge's validate (HEAD 067f987); the recipe's " +
      "name never does. Values that are not known are not judged. A run_recipe launch line in a fine-tuning mode " +
      "(--mode, or the mode run_recipe infers from the recipe name) is judged after run_recipe's " +
      "sync_finetuning_cp_invariants, which sets both.",
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

function violation(unit: ConfigUnit, cp: KnownInt, req: Requirement): RuleReport[] {
  const setting = unit.settings[req.key];
  const value = knownBool(unit, req.key);
  if (!setting || value === undefined || value === req.required) return [];
  const message =
    `${describe(setting)} with a fine-tuning dataset (${unit.datasetType ?? "?"}) and ${describeResolution("model.context_parallel_size", cp.res)}. ` +
    `Megatron-Bridge rejects this: ${quote(req.upstream)}. Set ${req.key} = ${repr(req.required)}.`;
  const fix = fixOf(`Set ${req.key} to ${repr(req.required)}`, [editFor(unit, req.key, req.required)]);
  return [reportAt(unit, setting, message, { fix, related: relatedTo(cp.setting, "context parallel size") })];
}
