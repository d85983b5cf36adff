// HCP012, HCP013, HCP020: cp_comm_type values.
import { describe, expect, it } from "vitest";
import { applyFix, hydraLaunch, mlmLaunch, pythonRecipe, yamlOverride } from "../support/units.ts";
import { check, only } from "./run.ts";

const recipe = (body: string, name = "llama3_8b_pretrain_config") => `def ${name}():
    cfg = _pretrain_common()
${body}    return cfg
`;

describe("HCP012 per-layer list length", () => {
  it("python: 4 entries for 32 layers → B4 quote; uniform list fix collapses to a string", () => {
    const t = recipe(`    cfg.model.num_layers = 32\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = ["a2a", "a2a", "a2a", "a2a"]\n`);
    const f = only("HCP012", pythonRecipe(t));
    expect(f.message).toContain('"Length of cp_comm_type (4) must equal num_layers (32)."');
    expect(f.related[0]?.location.range.start.line).toBe(3);
    expect(applyFix("recipes/example.py", t, f.fix)).toContain('cfg.model.cp_comm_type = "a2a"\n');
  });
  it("yaml mixed list: error without a fix", () => {
    const f = only("HCP012", yamlOverride("model:\n  num_layers: 4\n  context_parallel_size: 2\n  cp_comm_type: [p2p, a2a]\n"));
    expect(f.fix).toBeUndefined();
    expect(f.message).toContain("Give exactly 4 entries");
  });
  it("negative: right length, CP 1, unknown num_layers, a plain string", () => {
    expect(check("HCP012", yamlOverride("model:\n  num_layers: 2\n  context_parallel_size: 2\n  cp_comm_type: [p2p, a2a]\n"))).toEqual([]);
    expect(check("HCP012", yamlOverride("model:\n  num_layers: 4\n  context_parallel_size: 1\n  cp_comm_type: [p2p, a2a]\n"))).toEqual([]);
    expect(check("HCP012", yamlOverride("model:\n  context_parallel_size: 2\n  cp_comm_type: [p2p, a2a]\n"))).toEqual([]);
    expect(check("HCP012", pythonRecipe(recipe(`    cfg.model.num_layers = 32\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a"\n`)))).toEqual([]);
  });
  it("hydra and mlm per-layer lists", () => {
    expect(only("HCP012", hydraLaunch('run_recipe.py -cp 2 model.num_layers=3 "model.cp_comm_type=[p2p,a2a]"')).ruleId).toBe("HCP012");
    expect(only("HCP012", mlmLaunch("pretrain_gpt.py --num-layers 3 --context-parallel-size 2 --cp-comm-type p2p a2a")).ruleId).toBe("HCP012");
  });
});

describe("HCP013 invalid cp_comm_type", () => {
  it("python: 'allgather' on a dense model → T12, fix → all_gather", () => {
    const t = recipe(`    cfg.model.context_parallel_size = 2\n    cfg.model.cp_comm_type = "allgather"\n`);
    const f = only("HCP013", pythonRecipe(t));
    expect(f.severity).toBe("error");
    expect(f.message).toContain('"ValueError: Unsupported communication type: allgather!"');
    expect(f.message).toContain("valid only for DeepSeek Sparse Attention");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain('cfg.model.cp_comm_type = "all_gather"');
  });
  it("yaml per-layer list: fixes each entry in place; case variants fixed", () => {
    const yaml = "model:\n  context_parallel_size: 2\n  cp_comm_type: [P2P, allgather]\n";
    const f = only("HCP013", yamlOverride(yaml));
    expect(applyFix("conf/override.yaml", yaml, f.fix)).toBe("model:\n  context_parallel_size: 2\n  cp_comm_type: [p2p, all_gather]\n");
  });
  it("unfixable value: no fix, lists the valid values; CP 1 grades it a warning", () => {
    const f = only("HCP013", hydraLaunch("run_recipe.py -cp 4 model.cp_comm_type=ring"));
    expect(f.fix).toBeUndefined();
    expect(f.message).toContain("'p2p', 'all_gather', 'a2a' and 'a2a+p2p'");
    const latent = only("HCP013", pythonRecipe(recipe('    cfg.model.cp_comm_type = "ring"\n')));
    expect(latent.severity).toBe("warning");
    expect(latent.message).toContain("fails as soon as context_parallel_size > 1");
  });
  it("non-string value: B5", () => {
    expect(only("HCP013", yamlOverride("model:\n  context_parallel_size: 2\n  cp_comm_type: 4\n")).message).toContain(
      "\"cp_comm_type must be a str or list of str, got <class 'int'>.\"",
    );
  });
  it("DSA is experimental_attention_variant 'dsa': allgather is fine, p2p with CP > 1 → M3, fix → allgather", () => {
    const file = "recipes/example.py";
    const dsa = '    cfg.model.experimental_attention_variant = "dsa"\n';
    const ok = recipe(`${dsa}    cfg.model.context_parallel_size = 2\n    cfg.model.cp_comm_type = "allgather"\n`, "x_pretrain_config");
    expect(check("HCP013", pythonRecipe(ok))).toEqual([]);
    expect(check("HCP013", pythonRecipe(ok.replace('"allgather"', '"all_gather"')))).toEqual([]);
    const bad = ok.replace('"allgather"', '"p2p"');
    const f = only("HCP013", pythonRecipe(bad));
    expect(f.message).toContain('"DSAttention context parallelism currently supports cp_comm_type=allgather only."');
    expect(applyFix(file, bad, f.fix)).toContain('cfg.model.cp_comm_type = "allgather"');
    expect(check("HCP013", pythonRecipe(bad.replace("context_parallel_size = 2", "context_parallel_size = 1")))).toEqual([]);
  });
  it("a GLM-5 path or name never decides: allgather with the variant unknown is an info that mentions the name", () => {
    const glm = recipe(`    cfg.model.context_parallel_size = 2\n    cfg.model.cp_comm_type = "allgather"\n`, "glm5_pretrain_config");
    const f = only("HCP013", pythonRecipe(glm, { file: "src/megatron/bridge/perf_recipes/glm_moe_dsa/h100/glm5.py", complete: false }));
    expect(f.severity).toBe("info");
    expect(f.message).toContain("suggests a DSA family");
    // A known non-DSA variant makes 'allgather' the TE error it is, whatever the name.
    const gdn = glm.replace("    cfg.model.context_parallel_size", '    cfg.model.experimental_attention_variant = "gdn"\n    cfg.model.context_parallel_size');
    expect(only("HCP013", pythonRecipe(gdn, { file: "src/megatron/bridge/perf_recipes/glm_moe_dsa/h100/glm5.py" })).severity).toBe("error");
  });
  it("negative: valid values, unset, None; mlm a2a+p2p", () => {
    for (const v of ['"p2p"', '"all_gather"', '"a2a"', '"a2a+p2p"', "None", '["p2p", "a2a"]']) {
      expect(check("HCP013", pythonRecipe(recipe(`    cfg.model.context_parallel_size = 2\n    cfg.model.cp_comm_type = ${v}\n`)))).toEqual([]);
    }
    expect(check("HCP013", mlmLaunch("pretrain_gpt.py --cp-comm-type a2a+p2p"))).toEqual([]);
    expect(only("HCP013", mlmLaunch("pretrain_gpt.py --context-parallel-size 2 --cp-comm-type allgather")).fix?.edits[0]?.newText).toBe("all_gather");
  });
});

describe("HCP020 a2a+p2p with CP 1", () => {
  it("python: CP written as 1 → B6 quote, fix unsets cp_comm_type", () => {
    const t = recipe(`    cfg.model.context_parallel_size = 1\n    cfg.model.cp_comm_type = "a2a+p2p"\n`);
    const f = only("HCP020", pythonRecipe(t));
    expect(f.message).toContain("model.context_parallel_size is 1 (recipes/example.py:3)");
    expect(f.message).toContain("validates a2a+p2p regardless of the CP size");
    expect(f.message).toContain("hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'.");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("cfg.model.cp_comm_type = None");
    expect(check("HCP001", pythonRecipe(t))).toEqual([]); // not double-reported
  });
  it("python: CP left at the upstream default → still CP 1", () => {
    expect(only("HCP020", pythonRecipe(recipe('    cfg.model.cp_comm_type = "a2a+p2p"\n'))).message).toContain("not set (upstream default 1)");
  });
  it("yaml: explicit CP 1 → fix writes null; incomplete unit with CP unset → silent (HCP001 reports)", () => {
    const yaml = "model:\n  context_parallel_size: 1\n  cp_comm_type: a2a+p2p\n";
    expect(applyFix("conf/override.yaml", yaml, only("HCP020", yamlOverride(yaml)).fix)).toBe("model:\n  context_parallel_size: 1\n  cp_comm_type: null\n");
    expect(check("HCP020", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n"))).toEqual([]);
  });
  it("hydra: -cp 1 on the line; sizes given → silent (HCP002/HCP004)", () => {
    expect(only("HCP020", hydraLaunch("run_recipe.py -cp 1 model.cp_comm_type=a2a+p2p")).severity).toBe("error");
    expect(check("HCP020", hydraLaunch('run_recipe.py -cp 1 model.cp_comm_type=a2a+p2p "model.hierarchical_context_parallel_sizes=[1,1]"'))).toEqual([]);
  });
  it("mlm: error but no fix (argparse cannot spell None)", () => {
    expect(only("HCP020", mlmLaunch("pretrain_gpt.py --context-parallel-size 1 --cp-comm-type a2a+p2p")).fix).toBeUndefined();
  });
});
