// Which dataset configurations are fine-tuning data. Bridge's fine-tuning checks (B2/B3,
// HCP022) test `isinstance(self.dataset, (GPTSFTDatasetConfig, DirectHFSFTDatasetConfig,
// EnergonDatasetConfig, MockVLMSFTDatasetConfig))` (training/config.py validate, Bridge HEAD
// 067f987); FinetuningDatasetConfig subclasses GPTSFTDatasetConfig. The dataset type alone
// decides: a recipe named *_pretrain_* over MockVLMSFTDatasetConfig is checked, a recipe
// named *_sft_* over a diffusion data module is not.
import type { ConfigUnit } from "./settings.ts";

const FINETUNING_DATASETS: ReadonlySet<string> = new Set([
  "GPTSFTDatasetConfig",
  "DirectHFSFTDatasetConfig",
  "EnergonDatasetConfig",
  "MockVLMSFTDatasetConfig",
  "FinetuningDatasetConfig",
]);

/** `GPTSFTDatasetConfig`, `builders.GPTSFTDatasetConfig`: the class name as written. */
const className = (written: string): string => written.slice(written.lastIndexOf(".") + 1);

/** True only when the dataset's class (or an analyzed base class of it) is a fine-tuning type. */
export function isFinetuningDataset(unit: Pick<ConfigUnit, "datasetType" | "datasetBases">): boolean {
  const classes = [unit.datasetType, ...(unit.datasetBases ?? [])].filter((c): c is string => c !== undefined);
  return classes.some((c) => FINETUNING_DATASETS.has(className(c)));
}
