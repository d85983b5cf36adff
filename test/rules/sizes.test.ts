// HCP001-HCP005 and HCP018: hierarchical_context_parallel_sizes.
import { describe, expect, it } from "vitest";
import { applyFix, hydraLaunch, mergeLaunch, mlmLaunch, project, pythonRecipe, yamlOverride } from "../support/units.ts";
import { check, only } from "./run.ts";

const LLAMA = (body: string) => `def llama3_8b_pretrain_32gpu_h100_bf16_64k_config() -> ConfigContainer:
    cfg = _pretrain_common()
    cfg.model.num_attention_heads = 32
    cfg.model.num_query_groups = 8
${body}    return cfg
`;
const RECIPE_FILE = "src/megatron/bridge/recipes/llama/h100/llama3.py";

describe("HCP001 a2a+p2p without sizes", () => {
  const text = LLAMA(`    cfg.model.tensor_model_parallel_size = 1
    cfg.model.context_parallel_size = 16
    cfg.model.cp_comm_type = "a2a+p2p"
`);
  const unit = pythonRecipe(text, { file: RECIPE_FILE });

  it("python recipe: error at the cp_comm_type value, quoting B6, with an [8, 2] fix", () => {
    const f = only("HCP001", unit);
    expect(f.severity).toBe("error");
    expect(f.ruleName).toBe("a2a-p2p-without-sizes");
    expect(f.location.range.start.line).toBe(7);
    expect(text.slice(f.location.range.start.offset, f.location.range.end.offset)).toBe('"a2a+p2p"');
    expect(f.message).toContain(`model.cp_comm_type is 'a2a+p2p' (${RECIPE_FILE}:7)`);
    expect(f.message).toContain("hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'.");
    expect(f.message).toContain("Bridge PR #2665");
    expect(f.message).toContain("[8, 2] (a2a 8 × p2p 2 = context_parallel_size 16, placed for 8 GPUs per NVLink domain (the default for 8-GPU H100/H200 nodes))");
    expect(f.related.map((r) => r.location.range.start.line)).toEqual([6]);
    const fixed = applyFix(RECIPE_FILE, text, f.fix);
    expect(fixed).toContain('cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [8, 2]\n    return cfg');
    expect(check("HCP001", pythonRecipe(fixed, { file: RECIPE_FILE }))).toEqual([]);
  });

  it("python recipe: per-layer list containing a2a+p2p counts", () => {
    const t = LLAMA(`    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = ["p2p", "a2a+p2p"]
`);
    expect(only("HCP001", pythonRecipe(t)).message).toContain("['p2p', 'a2a+p2p']");
  });

  it("negative: sizes set, or no a2a+p2p, or CP 1 (HCP020's case)", () => {
    const withSizes = LLAMA(`    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    cfg.model.hierarchical_context_parallel_sizes = [2, 2]
`);
    expect(check("HCP001", pythonRecipe(withSizes))).toEqual([]);
    expect(check("HCP001", pythonRecipe(LLAMA(`    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a"\n`)))).toEqual([]);
    expect(check("HCP001", pythonRecipe(LLAMA(`    cfg.model.cp_comm_type = "a2a+p2p"\n`)))).toEqual([]);
  });

  it("unknown cp_comm_type value stays silent", () => {
    expect(check("HCP001", pythonRecipe(LLAMA(`    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = pick_type()\n`)))).toEqual([]);
  });

  it("yaml override: error, no fix without a known TP (incomplete unit)", () => {
    const yaml = "model:\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n";
    const f = only("HCP001", yamlOverride(yaml, { file: "examples/conf/hcp.yaml" }));
    expect(f.message).toContain("(examples/conf/hcp.yaml:3)");
    expect(f.message).toContain("tensor_model_parallel_size is not known");
    expect(f.fix).toBeUndefined();
  });

  it("yaml override with TP: fix inserts the sizes in the model mapping", () => {
    const yaml = "model:\n  tensor_model_parallel_size: 1\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\ntrain:\n  train_iters: 10\n";
    const f = only("HCP001", yamlOverride(yaml));
    expect(applyFix("conf/override.yaml", yaml, f.fix)).toBe(
      "model:\n  tensor_model_parallel_size: 1\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\ntrain:\n  train_iters: 10\n",
    );
  });

  it("hydra launch merged with its recipe: fix appends a quoted override", () => {
    const recipe = pythonRecipe(LLAMA(`    cfg.model.tensor_model_parallel_size = 1\n    cfg.model.context_parallel_size = 1\n`), { file: RECIPE_FILE });
    const line = "uv run torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config -cp 16 model.cp_comm_type=a2a+p2p\n";
    const unit = mergeLaunch(recipe, hydraLaunch(line, { file: "launch.sh" }));
    const f = only("HCP001", unit);
    expect(f.message).toContain("(launch.sh:1)");
    expect(applyFix("launch.sh", line, f.fix)).toBe(line.trimEnd() + ' "model.hierarchical_context_parallel_sizes=[8,2]"\n');
  });

  it("hydra launch alone: CP unknown → error without sizes", () => {
    const f = only("HCP001", hydraLaunch("python scripts/training/run_recipe.py --recipe x model.cp_comm_type=a2a+p2p"));
    expect(f.message).toContain("context_parallel_size is not known here");
    expect(f.fix).toBeUndefined();
  });

  it("mlm launch: quotes the Megatron-LM assertion and fixes with flag values", () => {
    const line = "torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --context-parallel-size 8 --cp-comm-type a2a+p2p\n";
    const f = only("HCP001", mlmLaunch(line));
    expect(f.message).toContain("--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm");
    expect(applyFix("scripts/pretrain_gpt.sh", line, f.fix)).toBe(line.trimEnd() + " --hierarchical-context-parallel-sizes 4 2\n");
  });

  it("CP 2 has no two-level split: the fix switches to the advisor's type", () => {
    const t = LLAMA(`    cfg.model.context_parallel_size = 2\n    cfg.model.cp_comm_type = "a2a+p2p"\n`);
    const f = only("HCP001", pythonRecipe(t));
    expect(f.message).toContain("use cp_comm_type 'a2a' instead");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain('cfg.model.cp_comm_type = "a2a"');
  });
});

describe("HCP002 sizes product differs from CP", () => {
  it("python: error at the sizes, B7 with values, fix recomputes sizes", () => {
    const t = LLAMA(`    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    cfg.model.hierarchical_context_parallel_sizes = [2, 4]
`);
    const f = only("HCP002", pythonRecipe(t));
    expect(f.message).toContain("Product of hierarchical_context_parallel_sizes [2, 4] (=8) must equal context_parallel_size (=4).");
    expect(f.message).toContain("model.context_parallel_size is 4 (recipes/example.py:5)");
    expect(text(t, f)).toBe("[2, 4]");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("hierarchical_context_parallel_sizes = [2, 2]");
  });

  it("CP left at its default: fix sets context_parallel_size to the product", () => {
    const t = LLAMA(`    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n`);
    const f = only("HCP002", pythonRecipe(t));
    expect(f.message).toContain("model.context_parallel_size is not set (upstream default 1)");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("cfg.model.context_parallel_size = 4\n    return cfg");
  });

  it("CP changed by -cp on a merged launch line: the sizes override goes on the line", () => {
    const recipe = pythonRecipe(
      LLAMA(`    cfg.model.tensor_model_parallel_size = 1\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n`),
      { file: RECIPE_FILE },
    );
    const line = "python scripts/training/run_recipe.py --recipe llama3_8b -cp 16";
    const f = only("HCP002", mergeLaunch(recipe, hydraLaunch(line, { file: "run.sh" })));
    expect(f.location.file).toBe(RECIPE_FILE);
    expect(f.message).toContain("model.context_parallel_size is 16 (run.sh:1)");
    expect(applyFix("run.sh", line, f.fix)).toBe(line + ' "model.hierarchical_context_parallel_sizes=[8,2]"');
  });

  it("yaml and mlm: product mismatch reported; matching product silent", () => {
    expect(only("HCP002", yamlOverride("model:\n  context_parallel_size: 8\n  hierarchical_context_parallel_sizes: [2, 2]\n")).severity).toBe("error");
    expect(check("HCP002", yamlOverride("model:\n  context_parallel_size: 4\n  hierarchical_context_parallel_sizes: [2, 2]\n"))).toEqual([]);
    expect(check("HCP002", mlmLaunch("pretrain_gpt.py --context-parallel-size 4 --hierarchical-context-parallel-sizes 2 2"))).toEqual([]);
  });

  it("unknown CP in an incomplete unit stays silent", () => {
    expect(check("HCP002", yamlOverride("model:\n  hierarchical_context_parallel_sizes: [2, 2]\n"))).toEqual([]);
  });
});

describe("HCP003 a2a+p2p needs two levels", () => {
  it("python: three levels → T1 quote and a two-level fix", () => {
    const t = LLAMA(`    cfg.model.context_parallel_size = 8
    cfg.model.cp_comm_type = "a2a+p2p"
    cfg.model.hierarchical_context_parallel_sizes = [2, 2, 2]
`);
    const f = only("HCP003", pythonRecipe(t));
    expect(f.message).toContain("CP implementation a2a+p2p requires cp_group = [a2a_cp_group, p2p_cp_group]!");
    expect(f.message).toContain("3 level(s)");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("hierarchical_context_parallel_sizes = [4, 2]");
  });
  it("yaml: one level reported; two levels or no a2a+p2p silent", () => {
    expect(only("HCP003", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [4]\n")).fix).toBeUndefined();
    expect(check("HCP003", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n"))).toEqual([]);
    expect(check("HCP003", yamlOverride("model:\n  cp_comm_type: p2p\n  hierarchical_context_parallel_sizes: [2, 2, 2]\n"))).toEqual([]);
  });
  it("hydra: three levels on the command line", () => {
    const line = 'run_recipe.py "model.hierarchical_context_parallel_sizes=[2,2,2]" model.cp_comm_type=a2a+p2p -cp 8';
    expect(only("HCP003", hydraLaunch(line)).location.range.start.column).toBe(line.indexOf("[2,2,2]") + 1);
  });
});

describe("HCP004 invalid size values", () => {
  it("python: non-integers and zero are errors", () => {
    const t = LLAMA(`    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2.5, 0]\n`);
    const f = only("HCP004", pythonRecipe(t));
    expect(f.severity).toBe("error");
    expect(f.message).toContain("2.5, 0 are not positive integers");
  });
  it("yaml: a string entry is an error, a scalar is not a list", () => {
    expect(only("HCP004", yamlOverride("model:\n  hierarchical_context_parallel_sizes: [two, 2]\n")).message).toContain("'two' is not a positive integer");
    expect(only("HCP004", yamlOverride("model:\n  hierarchical_context_parallel_sizes: 4\n")).message).toContain("which is not a list");
  });
  it("python: [4, 1] with a2a+p2p is a warning whose fix switches to a2a and unsets the sizes", () => {
    const t = LLAMA(`    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [4, 1]\n`);
    const f = only("HCP004", pythonRecipe(t));
    expect(f.severity).toBe("warning");
    expect(f.message).toContain("silently runs plain a2a");
    const fixed = applyFix("recipes/example.py", t, f.fix);
    expect(fixed).toContain('cfg.model.cp_comm_type = "a2a"');
    expect(fixed).toContain("cfg.model.hierarchical_context_parallel_sizes = None");
  });
  it("hydra: [1,4] → p2p with null sizes", () => {
    const line = 'run_recipe.py -cp 4 model.cp_comm_type=a2a+p2p "model.hierarchical_context_parallel_sizes=[1,4]"';
    const f = only("HCP004", hydraLaunch(line));
    expect(applyFix("scripts/launch.sh", line, f.fix)).toBe('run_recipe.py -cp 4 model.cp_comm_type=p2p "model.hierarchical_context_parallel_sizes=null"');
  });
  it("mlm: [4, 1] warns but cannot unset a flag → no fix", () => {
    const f = only("HCP004", mlmLaunch("pretrain_gpt.py --context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 4 1"));
    expect(f.severity).toBe("warning");
    expect(f.fix).toBeUndefined();
  });
  it("negative: valid sizes, and a 1 without a2a+p2p (HCP005's business)", () => {
    expect(check("HCP004", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n"))).toEqual([]);
    expect(check("HCP004", yamlOverride("model:\n  cp_comm_type: p2p\n  hierarchical_context_parallel_sizes: [4, 1]\n"))).toEqual([]);
  });
});

describe("HCP005 sizes without a2a+p2p", () => {
  it("python: sizes valid for CP and type unset → warning, fix sets a2a+p2p", () => {
    const t = LLAMA(`    cfg.model.context_parallel_size = 4\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n`);
    const f = only("HCP005", pythonRecipe(t));
    expect(f.severity).toBe("warning");
    expect(f.message).toContain("model.cp_comm_type is not set");
    expect(f.message).toContain("plain p2p");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain('cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg');
  });
  it("yaml: explicit a2a → fix removes the sizes", () => {
    const yaml = "model:\n  cp_comm_type: a2a\n  hierarchical_context_parallel_sizes: [2, 2]\n";
    const f = only("HCP005", yamlOverride(yaml));
    expect(f.message).toContain("as plain 'a2a'");
    expect(applyFix("conf/override.yaml", yaml, f.fix)).toBe("model:\n  cp_comm_type: a2a\n  hierarchical_context_parallel_sizes: null\n");
  });
  it("incomplete launch line leaving cp_comm_type unset still warns: nothing upstream sets a2a+p2p", () => {
    expect(only("HCP005", hydraLaunch('run_recipe.py --recipe r "model.hierarchical_context_parallel_sizes=[2,2]"')).severity).toBe("warning");
  });
  it("negative: a2a+p2p present, sizes absent, or cp_comm_type unknown", () => {
    expect(check("HCP005", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n"))).toEqual([]);
    expect(check("HCP005", yamlOverride("model:\n  cp_comm_type: a2a\n"))).toEqual([]);
    expect(check("HCP005", pythonRecipe(LLAMA(`    cfg.model.cp_comm_type = choose()\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n`)))).toEqual([]);
  });
  it("mlm: p2p with sizes warns", () => {
    expect(only("HCP005", mlmLaunch("pretrain_gpt.py --context-parallel-size 4 --cp-comm-type p2p --hierarchical-context-parallel-sizes 2 2")).ruleId).toBe("HCP005");
  });
});

describe("HCP018 a2a level spans nodes", () => {
  it("python: TP 2 × a2a 8 = 16 > 8 → warning with an in-node fix", () => {
    const t = LLAMA(`    cfg.model.tensor_model_parallel_size = 2
    cfg.model.context_parallel_size = 16
    cfg.model.cp_comm_type = "a2a+p2p"
    cfg.model.hierarchical_context_parallel_sizes = [8, 2]
`);
    const f = only("HCP018", pythonRecipe(t));
    expect(f.severity).toBe("warning");
    expect(f.message).toContain("spans TP 2 × 8 = 16 GPUs, more than the 8 GPUs of one NVLink domain (the default for 8-GPU H100/H200 nodes)");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("hierarchical_context_parallel_sizes = [4, 4]");
  });
  it("respects gpusPerNode (NVL72) and stays silent within a node", () => {
    const t = LLAMA(`    cfg.model.tensor_model_parallel_size = 2\n    cfg.model.context_parallel_size = 16\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [4, 4]\n`);
    // TP 2 × a2a 4 = 8 divides 72; TP 2 × 8 = 16 fits in 72 but does not divide it, so some groups cross racks.
    expect(check("HCP018", pythonRecipe(t), project(undefined, 72))).toEqual([]);
    expect(check("HCP018", pythonRecipe(t.replace("[4, 4]", "[8, 2]")), project(undefined, 72))[0]?.message).toContain("16 does not divide the 72 GPUs");
    expect(check("HCP018", yamlOverride("model:\n  tensor_model_parallel_size: 1\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [8, 2]\n"))).toEqual([]);
  });
  it("yaml/hydra: unknown TP stays silent; known TP on the line warns", () => {
    expect(check("HCP018", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [16, 1]\n"))).toEqual([]);
    expect(only("HCP018", hydraLaunch('run_recipe.py -tp 1 -cp 16 model.cp_comm_type=a2a+p2p "model.hierarchical_context_parallel_sizes=[16,1]"')).severity).toBe("warning");
  });
  it("an a2a level that fits but does not divide the node straddles nodes (Megatron-Core's contiguous runs): TP 1, CP 12, [6, 2] → [4, 3]", () => {
    const t = LLAMA(`    cfg.model.tensor_model_parallel_size = 1\n    cfg.model.context_parallel_size = 12\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [6, 2]\n`);
    const f = only("HCP018", pythonRecipe(t));
    expect(f.message).toContain("6 does not divide the 8 GPUs of one NVLink domain");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("hierarchical_context_parallel_sizes = [4, 3]");
    expect(check("HCP018", pythonRecipe(t.replace("[6, 2]", "[4, 3]")))).toEqual([]);
  });
  it("HCP001 proposes [4, 3] for TP 1, CP 12, not [6, 2]", () => {
    const t = LLAMA(`    cfg.model.tensor_model_parallel_size = 1\n    cfg.model.context_parallel_size = 12\n    cfg.model.cp_comm_type = "a2a+p2p"\n`);
    const f = only("HCP001", pythonRecipe(t));
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("hierarchical_context_parallel_sizes = [4, 3]");
  });
  it("mlm: TP 4 × 4 warns", () => {
    expect(check("HCP018", mlmLaunch("pretrain_gpt.py --tensor-model-parallel-size 4 --context-parallel-size 8 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 4 2"))).toHaveLength(1);
  });
});

function text(source: string, f: { location: { range: { start: { offset: number }; end: { offset: number } } } }): string {
  return source.slice(f.location.range.start.offset, f.location.range.end.offset);
}
