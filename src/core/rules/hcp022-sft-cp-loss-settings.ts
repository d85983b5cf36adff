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
      "An SFT or PEFT unit over a fine-tuning dataset (GPTSFTDatasetConfig, DirectHFSFTDatasetConfig, EnergonDatasetConfig, " +
      "MockVLMSFTDatasetConfig, or Bridge's _sft_common/_peft_common builders) with context_parallel_size > 1 that sets " +
      "model.calculate_per_token_loss = False or ddp.average_in_collective = True. Unset values are not judged (the common " +
      "builders set them), and run_recipe launch lines are not judged (run_recipe sets both before validation).",
    why: `Megatron-Bridge rejects both for finetuning: ${quote(UPSTREAM.B2)} and ${quote(UPSTREAM.B3)}`,
    example: "cfg = _sft_common()\ncfg.model.context_parallel_size = 2\ncfg.ddp.average_in_collective = True",
    fix: "Set cfg.model.calculate_per_token_loss = True and cfg.ddp.average_in_collective = False.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    if (unit.mode !== "sft" && unit.mode !== "peft") return [];
    // Bridge checks only fine-tuning dataset types (a diffusion *_sft_* recipe is not checked).
    if (!isFinetuningDataset(unit.datasetType)) return [];
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
    `${describe(setting)} in a ${unit.mode.toUpperCase()} unit with ${describeResolution("model.context_parallel_size", cp.res)}. ` +
    `Megatron-Bridge rejects this: ${quote(req.upstream)}. Set ${req.key} = ${repr(req.required)}.`;
  const fix = fixOf(`Set ${req.key} to ${repr(req.required)}`, [editFor(unit, req.key, req.required)]);
  return [reportAt(unit, setting, message, { fix, related: relatedTo(cp.setting, "context parallel size") })];
}
