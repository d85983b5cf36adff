// HCP007 and HCP008: sequence lengths.
import { describe, expect, it } from "vitest";
import { applyFix, hydraLaunch, mergeLaunch, mlmLaunch, pythonRecipe, yamlOverride } from "../support/units.ts";
import { analyze } from "../../src/core/analyze/index.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";
import { check, only } from "./run.ts";

const recipe = (body: string) => `def qwen3_600m_sft_8gpu_h100_bf16_128k_config():
    cfg = qwen3_600m_sft_1gpu_h100_bf16_config()
${body}    return cfg
`;

describe("HCP007 seq_length divisible by 2*CP", () => {
  it("python: both lengths off → one error at the model value, B1 quoted, both rounded up", () => {
    const t = recipe(`    cfg.model.context_parallel_size = 4\n    cfg.model.seq_length = 8196\n    cfg.dataset.seq_length = 8196\n`);
    const f = only("HCP007", pythonRecipe(t));
    expect(f.location.range.start.line).toBe(4);
    expect(f.message).toContain("model.seq_length is 8196 (recipes/example.py:4) and dataset.seq_length is 8196 (recipes/example.py:5)");
    expect(f.message).toContain("not divisible by 2 × context_parallel_size = 8");
    expect(f.message).toContain('"Sequence length must be divisible by 2 * context parallel size if context parallel is used."');
    expect(f.message).toContain("Set seq_length = 8200");
    const fixed = applyFix("recipes/example.py", t, f.fix);
    expect(fixed).toContain("cfg.model.seq_length = 8200\n    cfg.dataset.seq_length = 8200");
  });

  it("python: a constant with origin.via is named in the message; the fix adds the model override", () => {
    const t = recipe(`    cfg.model.context_parallel_size = 16\n    cfg.dataset.seq_length = SEQ\n`);
    const f = only("HCP007", pythonRecipe(t, { constants: { SEQ: 65000 } }));
    expect(f.message).toContain("dataset.seq_length is 65000 (recipes/example.py:4, written SEQ, via module constant SEQ)");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("cfg.dataset.seq_length = 65024\n    cfg.model.seq_length = 65024\n");
  });

  it("negative: divisible, CP 1, unknown CP, unknown length", () => {
    expect(check("HCP007", pythonRecipe(recipe(`    cfg.model.context_parallel_size = 8\n    cfg.model.seq_length = 131072\n    cfg.dataset.seq_length = 131072\n`)))).toEqual([]);
    expect(check("HCP007", pythonRecipe(recipe(`    cfg.model.seq_length = 8191\n`)))).toEqual([]);
    expect(check("HCP007", yamlOverride("dataset:\n  seq_length: 8191\n"))).toEqual([]);
    expect(check("HCP007", pythonRecipe(recipe(`    cfg.model.context_parallel_size = 4\n    cfg.model.seq_length = compute_len()\n`)))).toEqual([]);
  });

  it("yaml: fix edits both sections in place", () => {
    const yaml = "model:\n  context_parallel_size: 2\n  seq_length: 4098\ndataset:\n  seq_length: 4098\n";
    const f = only("HCP007", yamlOverride(yaml));
    expect(applyFix("conf/override.yaml", yaml, f.fix)).toBe("model:\n  context_parallel_size: 2\n  seq_length: 4100\ndataset:\n  seq_length: 4100\n");
  });

  it("hydra: -cp 4 on a merged launch line breaks the recipe's 8196; the fix overrides both on the line", () => {
    const r = pythonRecipe(recipe(`    cfg.model.context_parallel_size = 1\n    cfg.model.seq_length = 8196\n    cfg.dataset.seq_length = 8196\n`));
    const line = "run_recipe.py --recipe qwen -cp 4";
    const f = only("HCP007", mergeLaunch(r, hydraLaunch(line, { file: "run.sh" })));
    expect(f.message).toContain("model.context_parallel_size is 4 (run.sh:1)");
    expect(applyFix("run.sh", line, f.fix)).toBe(line + " model.seq_length=8200 dataset.seq_length=8200");
    expect(check("HCP007", mergeLaunch(r, hydraLaunch("run_recipe.py --recipe qwen -cp 2")))).toEqual([]);
  });

  it("mlm: quotes M12 and edits --seq-length only", () => {
    const line = "pretrain_gpt.py --context-parallel-size 4 --seq-length 8190";
    const f = only("HCP007", mlmLaunch(line));
    expect(f.message).toContain("seq-length should be a multiple of 2 * context-parallel-size if context-parallel-size > 1.");
    expect(applyFix("scripts/pretrain_gpt.sh", line, f.fix)).toBe("pretrain_gpt.py --context-parallel-size 4 --seq-length 8192");
  });
});

describe("HCP008 model/dataset seq_length", () => {
  it("python: mismatch is an error at dataset.seq_length quoting B8; fix sets it to the model's value", () => {
    const t = recipe(`    cfg.model.seq_length = 16384\n    cfg.dataset.seq_length = 8192\n`);
    const f = only("HCP008", pythonRecipe(t));
    expect(f.severity).toBe("error");
    expect(f.location.range.start.line).toBe(4);
    expect(f.message).toContain("Sequence length in model config: 16384, Sequence length in dataset config: 8192");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("cfg.dataset.seq_length = 16384");
  });

  it("hydra: overriding only model.seq_length is a warning; fix adds dataset.seq_length", async () => {
    const line = "torchrun scripts/training/run_recipe.py --recipe llama32_1b_pretrain_config model.seq_length=16384";
    // Through the extractor and the composition, where run_recipe's sync discards the override.
    const report = analyze([{ path: "scripts/launch.sh", text: line }], { python: await loadPythonLanguage(), select: ["HCP008"] });
    expect(report.findings).toHaveLength(1);
    const f = report.findings[0]!;
    expect(f.severity).toBe("warning");
    expect(f.message).toContain("silently discarded");
    expect(f.message).toContain("model.seq_length is 16384 (scripts/launch.sh:1)");
    expect(applyFix("scripts/launch.sh", line, f.fix)).toBe(line + " dataset.seq_length=16384");
  });

  it("yaml: overriding only model.seq_length warns; with dataset too it is silent", () => {
    expect(only("HCP008", yamlOverride("model:\n  seq_length: 4096\n")).severity).toBe("warning");
    expect(check("HCP008", yamlOverride("model:\n  seq_length: 4096\ndataset:\n  seq_length: 4096\n"))).toEqual([]);
  });

  it("merged launch: override equal to the recipe's dataset value is harmless", () => {
    const r = pythonRecipe(recipe(`    cfg.dataset.seq_length = 8192\n    cfg.model.seq_length = 8192\n`));
    expect(check("HCP008", mergeLaunch(r, hydraLaunch("run_recipe.py model.seq_length=8192")))).toEqual([]);
    expect(only("HCP008", mergeLaunch(r, hydraLaunch("run_recipe.py model.seq_length=4096"))).message).toContain(
      "dataset.seq_length is 8192 (recipes/example.py:3)",
    );
  });

  it("negative: recipe with equal values, mlm single --seq-length", () => {
    expect(check("HCP008", pythonRecipe(recipe(`    cfg.model.seq_length = 8192\n    cfg.dataset.seq_length = 8192\n`)))).toEqual([]);
    expect(check("HCP008", mlmLaunch("pretrain_gpt.py --seq-length 8192"))).toEqual([]);
  });
});
