// Launch lines and recipes judged over the base they name: aliases, run_recipe's sync
// steps, and recipes built on recipes of other modules.
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { recipeAliases } from "../../src/core/analyze/compose.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

const H100 = {
  path: "src/megatron/bridge/recipes/llama/h100/llama3.py",
  text: `def llama3_8b_pretrain_32gpu_h100_bf16_64k_config():
    cfg = _pretrain_common()
    cfg.dataset.seq_length = 65536
    cfg.model.seq_length = 65536
    cfg.model.tensor_model_parallel_size = 4
    cfg.model.context_parallel_size = 4
    return cfg
`,
};
const ALIASES = {
  path: "src/megatron/bridge/recipes/llama/llama3.py",
  text: `"""Compatibility aliases for legacy recipe names."""
from megatron.bridge.recipes.llama.h100.llama3 import (
    llama3_8b_pretrain_32gpu_h100_bf16_64k_config as llama3_8b_64k_pretrain_config,
)
legacy_llama3_config = llama3_8b_64k_pretrain_config
`,
};

describe("recipe aliases", () => {
  it("reads import aliases and module-level re-assignments", () => {
    const aliases = recipeAliases([H100, ALIASES, { path: "x.sh", text: "a_config as b_config" }]);
    expect(Object.fromEntries(aliases)).toEqual({
      llama3_8b_64k_pretrain_config: "llama3_8b_pretrain_32gpu_h100_bf16_64k_config",
      legacy_llama3_config: "llama3_8b_64k_pretrain_config",
    });
  });

  it("judges a launch line naming a legacy recipe over the current one", () => {
    const launch = {
      path: "scripts/run.sh",
      text: 'torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_64k_pretrain_config model.cp_comm_type=a2a+p2p\n',
    };
    const report = analyze([H100, ALIASES, launch], { python });
    const unit = report.units.find((u) => u.location.file === "scripts/run.sh")!;
    expect(unit.complete).toBe(true);
    expect(unit.settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 4 });
    const hcp001 = report.findings.find((f) => f.ruleId === "HCP001" && f.location.file === "scripts/run.sh")!;
    // TP 4 × a2a 2 stays within one 8-GPU node: [2, 2].
    expect(hcp001.fix?.edits[0]?.newText).toContain("model.hierarchical_context_parallel_sizes=[2,2]");
  });
});

describe("run_recipe's sync steps", () => {
  it("copies dataset.seq_length into model.seq_length, so a recipe-level mismatch is not a launch error", () => {
    const recipe = { path: "r.py", text: H100.text.replace("cfg.model.seq_length = 65536", "cfg.model.seq_length = 131072") };
    const launch = { path: "l.sh", text: "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_32gpu_h100_bf16_64k_config -sl 32768\n" };
    const report = analyze([recipe, launch], { python });
    const unit = report.units.find((u) => u.location.file === "l.sh")!;
    expect(unit.settings["model.seq_length"]?.value).toEqual({ known: true, value: 32768 });
    expect(report.findings.filter((f) => f.ruleId === "HCP008" && f.unitId === unit.id)).toEqual([]);
    // The recipe itself, used without run_recipe, still mismatches.
    expect(report.findings.some((f) => f.ruleId === "HCP008" && f.location.file === "r.py")).toBe(true);
  });

  it("keeps an override of model.seq_length alone visible, so HCP008 warns that it is discarded", () => {
    const launch = { path: "l.sh", text: "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_32gpu_h100_bf16_64k_config model.seq_length=16384\n" };
    const report = analyze([H100, launch], { python });
    const warning = report.findings.find((f) => f.ruleId === "HCP008" && f.location.file === "l.sh")!;
    expect(warning.severity).toBe("warning");
    expect(warning.message).toMatch(/silently discarded/);
  });

  it("forces the fine-tuning loss settings for SFT data with CP > 1", () => {
    const sft = {
      path: "s.py",
      text:
        "def x_sft_config():\n    cfg = _sft_common()\n    cfg.dataset = GPTSFTDatasetConfig(seq_length=2048)\n" +
        "    cfg.model.context_parallel_size = 1\n    cfg.ddp.average_in_collective = True\n    return cfg\n",
    };
    const launch = { path: "l.sh", text: "python scripts/training/run_recipe.py --recipe x_sft_config -cp 2\n" };
    const report = analyze([sft, launch], { python });
    expect(report.findings.filter((f) => f.ruleId === "HCP022")).toEqual([]);
    // The same recipe with CP 2 written into it, used directly, is rejected by Bridge.
    const direct = analyze([{ path: "s.py", text: sft.text.replace("context_parallel_size = 1", "context_parallel_size = 2") }], { python });
    expect(direct.findings.map((f) => f.ruleId)).toContain("HCP022");
  });
});

describe("recipes built on recipes of other modules", () => {
  it("judges the derived recipe over its base when the base was analyzed", () => {
    const derived = {
      path: "src/megatron/bridge/perf_recipes/llama/h100/llama3.py",
      text: `from megatron.bridge.recipes.llama.h100.llama3 import llama3_8b_pretrain_32gpu_h100_bf16_64k_config


def llama3_8b_perf_config():
    cfg = llama3_8b_pretrain_32gpu_h100_bf16_64k_config()
    cfg.model.cp_comm_type = "a2a+p2p"
    return cfg
`,
    };
    const report = analyze([H100, derived], { python });
    const unit = report.units.find((u) => u.name === "llama3_8b_perf_config")!;
    expect(unit.complete).toBe(true);
    expect(unit.settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 4 });
    expect(report.findings.some((f) => f.ruleId === "HCP001" && f.unitId === unit.id)).toBe(true);
    const alone = analyze([derived], { python });
    expect(alone.units[0]!.complete).toBe(false);
  });
});
