// HCP006, HCP021, HCP022, HCP023.
import { describe, expect, it } from "vitest";
import { applyFix, hydraLaunch, mlmLaunch, pythonRecipe, yamlOverride } from "../support/units.ts";
import { check, only } from "./run.ts";

const recipe = (body: string, name = "llama3_8b_pretrain_config") => `def ${name}():
    cfg = _pretrain_common()
${body}    return cfg
`;
const HCP = '    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n';

describe("HCP006 HCP with decentralized PG", () => {
  it("python: error at use_decentralized_pg quoting B11; fix sets False", () => {
    const t = recipe(`${HCP}    cfg.dist.use_decentralized_pg = True\n`);
    const f = only("HCP006", pythonRecipe(t));
    expect(f.location.range.start.line).toBe(6);
    expect(f.message).toContain("dist.use_decentralized_pg is True (recipes/example.py:6)");
    expect(f.message).toContain("Decentralized process groups (use_decentralized_pg=True) do not support hierarchical_context_parallel_sizes.");
    expect(f.related[0]?.location.range.start.line).toBe(4);
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("cfg.dist.use_decentralized_pg = False");
  });
  it("yaml: sizes alone (type unset) also count", () => {
    const yaml = "model:\n  hierarchical_context_parallel_sizes: [2, 2]\ndist:\n  use_decentralized_pg: true\n";
    expect(applyFix("conf/override.yaml", yaml, only("HCP006", yamlOverride(yaml)).fix)).toContain("use_decentralized_pg: false");
  });
  it("hydra: flag on the line", () => {
    const line = "run_recipe.py model.cp_comm_type=a2a+p2p dist.use_decentralized_pg=true";
    expect(applyFix("scripts/launch.sh", line, only("HCP006", hydraLaunch(line)).fix)).toBe("run_recipe.py model.cp_comm_type=a2a+p2p dist.use_decentralized_pg=false");
  });
  it("negative: flat CP with decentralized PG, HCP with False, unknown flag value, mlm", () => {
    expect(check("HCP006", pythonRecipe(recipe('    cfg.model.cp_comm_type = "a2a"\n    cfg.dist.use_decentralized_pg = True\n')))).toEqual([]);
    expect(check("HCP006", pythonRecipe(recipe(`${HCP}    cfg.dist.use_decentralized_pg = False\n`)))).toEqual([]);
    expect(check("HCP006", pythonRecipe(recipe(`${HCP}    cfg.dist.use_decentralized_pg = args.dpg\n`)))).toEqual([]);
    expect(check("HCP006", mlmLaunch("pretrain_gpt.py --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 2"))).toEqual([]);
  });
});

describe("HCP021 hybrid/dynamic CP confused with HCP", () => {
  it("python: hybrid_context_parallel in an HCP recipe → warning at the flag", () => {
    const t = recipe(`${HCP}    cfg.model.hybrid_context_parallel = True\n`);
    const f = only("HCP021", pythonRecipe(t));
    expect(f.severity).toBe("warning");
    expect(f.location.range.start.line).toBe(6);
    expect(f.message).toContain("does not enable hierarchical CP");
    expect(f.message).toContain("model.hybrid_context_parallel is True (recipes/example.py:6)");
  });
  it("unit named for hierarchical CP but using the wrong flag → warning", () => {
    expect(only("HCP021", yamlOverride("model:\n  dynamic_context_parallel: true\n", { file: "conf/llama3_hierarchical_cp.yaml" })).ruleId).toBe("HCP021");
    expect(check("HCP021", mlmLaunch("pretrain_gpt.py --hybrid-context-parallel --max-seqlen-per-dp-cp-rank 4096", { name: "hcp smoke" }))).toHaveLength(2);
  });
  it("negative: hybrid flag for packed SFT without HCP; 'hybrid' in a name is not HCP intent; flag false", () => {
    expect(check("HCP021", pythonRecipe(recipe("    cfg.model.hybrid_context_parallel = True\n", "qwen3_hybrid_cp_sft_config")))).toEqual([]);
    expect(check("HCP021", hydraLaunch("run_recipe.py model.cp_comm_type=a2a+p2p model.hybrid_context_parallel=false"))).toEqual([]);
  });
});

describe("HCP022 SFT with CP > 1", () => {
  const sft = { datasetType: "GPTSFTDatasetConfig" };
  it("python SFT: average_in_collective True → B3 error, fix False", () => {
    const t = recipe("    cfg.model.context_parallel_size = 2\n    cfg.ddp.average_in_collective = True\n", "qwen3_8b_sft_config");
    const f = only("HCP022", pythonRecipe(t, sft));
    expect(f.message).toContain('"When finetuning with CP>1, average_in_collective must be False"');
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("cfg.ddp.average_in_collective = False");
  });
  it("python PEFT: both wrong → two findings", () => {
    const t = recipe("    cfg.model.context_parallel_size = 2\n    cfg.model.calculate_per_token_loss = False\n    cfg.ddp.average_in_collective = True\n", "llama3_8b_peft_config");
    const findings = check("HCP022", pythonRecipe(t, { datasetType: "GPTSFTDatasetConfig" }));
    expect(findings.map((f) => f.location.range.start.line)).toEqual([4, 5]);
    expect(findings[0]?.message).toContain('"When finetuning with CP>1, calculate_per_token_loss must be True"');
  });
  it("the dataset type decides, not the name: a pretrain recipe over MockVLMSFTDatasetConfig is checked", () => {
    const t = recipe("    cfg.model.context_parallel_size = 2\n    cfg.ddp.average_in_collective = True\n", "qwen3_vl_8b_pretrain_config");
    expect(only("HCP022", pythonRecipe(t, { datasetType: "MockVLMSFTDatasetConfig" })).ruleId).toBe("HCP022");
  });
  it("negative: an *_sft_* recipe over other data (e.g. a diffusion data module) is not checked upstream", () => {
    const t = recipe("    cfg.model.context_parallel_size = 2\n    cfg.ddp.average_in_collective = True\n", "wan_1_3b_sft_config");
    expect(check("HCP022", pythonRecipe(t, { datasetType: "WanDataModuleConfig" }))).toEqual([]);
    expect(check("HCP022", pythonRecipe(t))).toEqual([]);
  });
  it("negative: pretraining data, CP 1, unset values, unknown dataset", () => {
    expect(check("HCP022", pythonRecipe(recipe("    cfg.model.context_parallel_size = 2\n    cfg.ddp.average_in_collective = True\n"), { datasetType: "GPTDatasetConfig" }))).toEqual([]);
    expect(check("HCP022", pythonRecipe(recipe("    cfg.model.context_parallel_size = 1\n    cfg.ddp.average_in_collective = True\n", "x_sft_config"), sft))).toEqual([]);
    expect(check("HCP022", pythonRecipe(recipe("    cfg.model.context_parallel_size = 2\n", "x_sft_config"), sft))).toEqual([]);
    expect(check("HCP022", pythonRecipe(recipe("    cfg.model.context_parallel_size = 2\n    cfg.ddp.average_in_collective = True\n", "x_sft_config")))).toEqual([]);
    expect(check("HCP022", mlmLaunch("pretrain_gpt.py --context-parallel-size 2"))).toEqual([]);
  });
});

describe("HCP023 eval CP with HCP", () => {
  it("python: a warning without an upstream quote on the MPU path, fix unsets it", () => {
    const t = recipe(`${HCP}    cfg.dist.eval_context_parallel_size = 2\n`);
    const f = only("HCP023", pythonRecipe(t));
    expect(f.severity).toBe("warning");
    expect(f.message).toContain("dist.eval_context_parallel_size is 2 (recipes/example.py:6)");
    expect(f.message).toContain("requiring dist.use_decentralized_pg = True");
    expect(f.message).not.toContain("NotImplementedError");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("cfg.dist.eval_context_parallel_size = None");
  });
  it("yaml and hydra", () => {
    expect(only("HCP023", yamlOverride("model:\n  cp_comm_type: a2a+p2p\ndist:\n  eval_context_parallel_size: 1\n")).ruleId).toBe("HCP023");
    const line = "run_recipe.py model.cp_comm_type=a2a+p2p dist.eval_context_parallel_size=2";
    expect(applyFix("scripts/launch.sh", line, only("HCP023", hydraLaunch(line)).fix)).toBe(line.replace("=2", "=null"));
  });
  it("negative: eval CP without HCP, None, or HCP unknown", () => {
    expect(check("HCP023", yamlOverride("model:\n  cp_comm_type: a2a\ndist:\n  eval_context_parallel_size: 2\n"))).toEqual([]);
    expect(check("HCP023", pythonRecipe(recipe(`${HCP}    cfg.dist.eval_context_parallel_size = None\n`)))).toEqual([]);
    expect(check("HCP023", pythonRecipe(recipe("    cfg.model.cp_comm_type = pick()\n    cfg.dist.eval_context_parallel_size = 2\n")))).toEqual([]);
  });
});
