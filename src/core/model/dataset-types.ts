// Which dataset configurations are fine-tuning data. Bridge's fine-tuning checks (B2/B3,
// HCP022) and run_recipe's fine-tuning sync apply only to these; a recipe named *_sft_*
// over some other dataset (e.g. a diffusion data module) is not checked upstream.
const FINETUNING_DATASET =
  /^(?:GPTSFTDatasetConfig|DirectHFSFTDatasetConfig|EnergonDatasetConfig|MockVLMSFTDatasetConfig|FinetuningDatasetConfig|default_squad_config\(\)|_(?:sft|peft)_common(?:_vlm)?\(\)\.dataset)$/;

/** True only when the dataset type is known to be fine-tuning data (never a guess from names). */
export function isFinetuningDataset(datasetType: string | undefined): boolean {
  return datasetType !== undefined && FINETUNING_DATASET.test(datasetType);
}
