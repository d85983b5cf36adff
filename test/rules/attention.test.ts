// HCP009, HCP010, HCP011, HCP014, HCP016: attention-side constraints.
import { describe, expect, it } from "vitest";
import { applyFix, hydraLaunch, mlmLaunch, project, pythonRecipe, yamlOverride } from "../support/units.ts";
import { check, only } from "./run.ts";

const recipe = (body: string, name = "llama3_8b_pretrain_config") => `def ${name}():
    cfg = _pretrain_common()
${body}    return cfg
`;
const HEADS = "    cfg.model.num_attention_heads = 32\n    cfg.model.num_query_groups = 8\n";

describe("HCP009 a2a heads divisibility", () => {
  it("python pure a2a: Llama-3-8B TP4 CP4 → T10 error, fix switches to a2a+p2p [2, 2]", () => {
    const t = recipe(`${HEADS}    cfg.model.tensor_model_parallel_size = 4\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a"\n`);
    const f = only("HCP009", pythonRecipe(t));
    expect(f.severity).toBe("error");
    expect(f.message).toContain("cp_comm_type='a2a' requires num_heads % cp_size == 0 for Q, K, V. Found num_heads_q = 8, num_heads_kv = 2, cp_size = 4.");
    expect(f.message).toContain("8 Q and 2 KV heads per TP rank (num_attention_heads 32, num_query_groups 8, TP 4)");
    expect(f.related.map((r) => r.location.range.start.line)).toEqual([6, 3, 4]);
    const fixed = applyFix("recipes/example.py", t, f.fix);
    expect(fixed).toContain('cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n');
    expect(check("HCP009", pythonRecipe(fixed))).toEqual([]);
  });

  it("python a2a+p2p: a2a 4 with 2 KV heads per rank → error, fix picks [2, 2]", () => {
    const t = recipe(`${HEADS}    cfg.model.tensor_model_parallel_size = 4\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [4, 1]\n`);
    const f = only("HCP009", pythonRecipe(t));
    expect(f.message).toContain("puts 4 ranks in each a2a group");
    expect(f.message).toContain("view/shape RuntimeError");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain("hierarchical_context_parallel_sizes = [2, 2]");
  });

  it("num_query_groups None means MHA", () => {
    const t = recipe(`    cfg.model.num_attention_heads = 12\n    cfg.model.num_query_groups = None\n    cfg.model.context_parallel_size = 8\n    cfg.model.cp_comm_type = "a2a"\n`);
    expect(only("HCP009", pythonRecipe(t)).message).toContain("num_heads_q = 12, num_heads_kv = 12, cp_size = 8");
  });

  it("heads unknown → info, never an error", () => {
    const f = only("HCP009", yamlOverride("model:\n  context_parallel_size: 8\n  cp_comm_type: a2a\n"));
    expect(f.severity).toBe("info");
    expect(f.message).toContain("cannot be checked");
    const hydra = only("HCP009", hydraLaunch('run_recipe.py model.cp_comm_type=a2a+p2p "model.hierarchical_context_parallel_sizes=[4,2]"'));
    expect(hydra.severity).toBe("info");
  });

  it("negative: divisible heads, CP 1 pure a2a, p2p, unknown CP", () => {
    expect(check("HCP009", pythonRecipe(recipe(`${HEADS}    cfg.model.tensor_model_parallel_size = 2\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a"\n`)))).toEqual([]);
    expect(check("HCP009", pythonRecipe(recipe(`${HEADS}    cfg.model.cp_comm_type = "a2a"\n`)))).toEqual([]);
    expect(check("HCP009", pythonRecipe(recipe(`${HEADS}    cfg.model.context_parallel_size = 16\n    cfg.model.cp_comm_type = "p2p"\n`)))).toEqual([]);
    expect(check("HCP009", yamlOverride("model:\n  cp_comm_type: a2a\n  num_attention_heads: 32\n"))).toEqual([]);
  });

  it("mlm: pure a2a with known heads → error", () => {
    const line = "pretrain_gpt.py --num-attention-heads 32 --num-query-groups 8 --tensor-model-parallel-size 1 --context-parallel-size 16 --cp-comm-type a2a";
    const f = only("HCP009", mlmLaunch(line));
    expect(f.severity).toBe("error");
    expect(applyFix("scripts/pretrain_gpt.sh", line, f.fix)).toBe(
      "pretrain_gpt.py --num-attention-heads 32 --num-query-groups 8 --tensor-model-parallel-size 1 --context-parallel-size 16 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 8 2",
    );
  });
});

describe("HCP010 a2a+p2p with THD", () => {
  const packed = recipe(`    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    cfg.dataset.packed_sequence = True\n`, "llama3_8b_sft_config");

  it("python: TE 2.15 pinned → error at the packing flag quoting T2, TE pin related", () => {
    const f = only("HCP010", pythonRecipe(packed), project("2.15.0+42b84005"));
    expect(f.severity).toBe("error");
    expect(f.location.range.start.line).toBe(6);
    expect(f.message).toContain('"thd format is not supported with hierarchical CP implementation yet!"');
    expect(f.message).toContain("Transformer Engine 2.15.0+42b84005 (uv.lock, uv.lock:3)");
    expect(f.related.some((r) => r.location.file === "uv.lock")).toBe(true);
    expect(f.fix).toBeUndefined();
  });

  it("TE >= 2.19 → silent; TE unknown → info", () => {
    expect(check("HCP010", pythonRecipe(packed), project("2.19.0"))).toEqual([]);
    expect(only("HCP010", pythonRecipe(packed), project()).severity).toBe("info");
  });

  it("a recipe's name says nothing about packing: an SFT name without packing settings is silent", () => {
    const sft = recipe(`    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n`, "qwen3_8b_sft_config");
    expect(check("HCP010", pythonRecipe(sft), project("2.18.0"))).toEqual([]);
    const inBatch = sft.replace("    return cfg", "    cfg.dataset.enable_in_batch_packing = True\n    return cfg");
    expect(only("HCP010", pythonRecipe(inBatch), project("2.18.0")).severity).toBe("error");
  });

  it("yaml qkv_format thd and hydra packed_sequence → error with old TE", () => {
    expect(only("HCP010", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n  qkv_format: thd\n"), project("2.4.0")).severity).toBe("error");
    expect(only("HCP010", hydraLaunch("run_recipe.py model.cp_comm_type=a2a+p2p dataset.packed_sequence=true"), project("2.4")).severity).toBe("error");
  });

  it("negative: packing without a2a+p2p", () => {
    expect(check("HCP010", yamlOverride("model:\n  cp_comm_type: a2a\ndataset:\n  packed_sequence: true\n"), project("2.4.0"))).toEqual([]);
  });
});

describe("HCP011 a2a+p2p with unsupported attention", () => {
  it("T5's relative position bias is refused by a2a+p2p; 'alibi' is not a Megatron-Core position embedding and is not read as a bias", () => {
    const body = (pos: string) => recipe(`${HEADS}    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    cfg.model.position_embedding_type = "${pos}"\n`);
    expect(only("HCP011", pythonRecipe(body("relative"))).message).toContain("post_scale_bias");
    expect(check("HCP011", pythonRecipe(body("alibi")))).toEqual([]);
  });
  it("python sliding window: error quoting T8, fix → a2a and drop sizes", () => {
    const t = recipe(`    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    cfg.model.window_size = (4096, 0)\n`);
    const f = only("HCP011", pythonRecipe(t));
    expect(f.message).toContain("model.window_size is [4096, 0] (recipes/example.py:6) (sliding-window attention)");
    expect(f.message).toContain("Context parallelism does not support sliding window attention with cp_comm_type='a2a+p2p'!");
    const fixed = applyFix("recipes/example.py", t, f.fix);
    expect(fixed).toContain('cfg.model.cp_comm_type = "a2a"');
    expect(fixed).toContain("hierarchical_context_parallel_sizes = None");
  });

  it("gpt-oss learnable softmax in yaml: T9", () => {
    const yaml = "model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n  softmax_type: learnable\n";
    const f = only("HCP011", yamlOverride(yaml));
    expect(f.message).toContain("Context parallelism only supports softmax_type='learnable' with cp_comm_type = 'a2a'!");
    expect(applyFix("conf/override.yaml", yaml, f.fix)).toBe("model:\n  cp_comm_type: a2a\n  hierarchical_context_parallel_sizes: null\n  softmax_type: learnable\n");
  });

  it("sliding window with heads that a2a cannot split → all_gather", () => {
    const t = recipe(`${HEADS}    cfg.model.context_parallel_size = 16\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.window_size = [128, 0]\n`);
    expect(applyFix("recipes/example.py", t, only("HCP011", pythonRecipe(t)).fix)).toContain('cfg.model.cp_comm_type = "all_gather"');
  });

  it("negative: no window (None / [-1, -1]), vanilla softmax, unknown window, or plain a2a", () => {
    for (const w of ["None", "[-1, -1]", "get_window()"]) {
      expect(check("HCP011", pythonRecipe(recipe(`    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.window_size = ${w}\n`)))).toEqual([]);
    }
    expect(check("HCP011", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  softmax_type: vanilla\n"))).toEqual([]);
    expect(check("HCP011", yamlOverride("model:\n  cp_comm_type: a2a\n  softmax_type: learnable\n"))).toEqual([]);
  });

  it("hydra and mlm: window flags", () => {
    expect(only("HCP011", hydraLaunch('run_recipe.py model.cp_comm_type=a2a+p2p "model.window_size=[4096,0]"')).severity).toBe("error");
    expect(only("HCP011", mlmLaunch("pretrain_gpt.py --context-parallel-size 4 --cp-comm-type a2a+p2p --window-size 4096 0")).severity).toBe("error");
    // TE's CP path runs only with CP > 1: a Megatron-LM line without CP (default 1) is silent.
    expect(check("HCP011", mlmLaunch("pretrain_gpt.py --cp-comm-type a2a+p2p --window-size 4096 0"))).toEqual([]);
  });
});

describe("HCP014 a2a+p2p needs TE >= 1.12", () => {
  it("TE 1.11 → error quoting M8 verbatim (with its typo)", () => {
    const f = only("HCP014", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n"), project("1.11.0"));
    expect(f.message).toContain('"Transformer-Engine v1.11.0 must be >= 1.12.0 to supporthierarchical cp commucation."');
    expect(f.related[0]?.location.file).toBe("uv.lock");
  });
  it("python and hydra: TE 1.12, 2.15 or unknown → silent; old TE without a2a+p2p → silent", () => {
    const py = pythonRecipe(recipe(`    cfg.model.cp_comm_type = "a2a+p2p"\n`));
    expect(check("HCP014", py, project("1.12.0"))).toEqual([]);
    expect(check("HCP014", py, project("2.15.0"))).toEqual([]);
    expect(check("HCP014", py, project())).toEqual([]);
    expect(check("HCP014", hydraLaunch("run_recipe.py model.cp_comm_type=p2p"), project("1.9"))).toEqual([]);
    expect(check("HCP014", hydraLaunch("run_recipe.py model.cp_comm_type=a2a+p2p"), project("1.10"))).toHaveLength(1);
  });
});

describe("HCP016 CP needs transformer_engine", () => {
  it("python: local impl with CP 2 → error quoting M6, fix sets transformer_engine", () => {
    const t = recipe(`    cfg.model.context_parallel_size = 2\n    cfg.model.transformer_impl = "local"\n`);
    const f = only("HCP016", pythonRecipe(t));
    expect(f.message).toContain('"Context parallelism is only supported by TEDotProductAttention!"');
    expect(f.message).toContain("model.transformer_impl is 'local' (recipes/example.py:4)");
    expect(applyFix("recipes/example.py", t, f.fix)).toContain('cfg.model.transformer_impl = "transformer_engine"');
  });
  it("hydra with -cp, yaml unknown CP, defaults", () => {
    const line = "run_recipe.py -cp 4 model.transformer_impl=local";
    expect(applyFix("scripts/launch.sh", line, only("HCP016", hydraLaunch(line)).fix)).toBe("run_recipe.py -cp 4 model.transformer_impl=transformer_engine");
    expect(check("HCP016", yamlOverride("model:\n  transformer_impl: local\n"))).toEqual([]);
    expect(check("HCP016", pythonRecipe(recipe("    cfg.model.context_parallel_size = 4\n")))).toEqual([]);
    expect(check("HCP016", pythonRecipe(recipe('    cfg.model.transformer_impl = "local"\n')))).toEqual([]);
  });
  it("mlm: --transformer-impl local", () => {
    expect(only("HCP016", mlmLaunch("pretrain_gpt.py --context-parallel-size 2 --transformer-impl local")).severity).toBe("error");
  });
});

describe("HCP009 with TP unknown (incomplete units)", () => {
  it("raw heads not divisible by the a2a size → error whatever TP is", () => {
    const f = only("HCP009", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [4, 2]\n  num_attention_heads: 32\n  num_query_groups: 2\n"));
    expect(f.severity).toBe("error");
    expect(f.message).toContain("not divisible by 4 for any tensor_model_parallel_size");
  });
  it("raw heads divisible but TP unknown → info naming what is missing", () => {
    const f = only("HCP009", yamlOverride("model:\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 4]\n  num_attention_heads: 32\n  num_query_groups: 2\n"));
    expect(f.severity).toBe("info");
    expect(f.message).toContain("but tensor_model_parallel_size is not known here");
  });
});
