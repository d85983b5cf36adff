import { describe, expect, it } from "vitest";
import type { SettingKey } from "../../src/core/model/settings.ts";
import {
  commTypes,
  compareVersions,
  hcpContext,
  dsaAttention,
  namedLikeDsa,
  parseVersion,
  resolve,
  teOlderThan,
  usesA2aP2p,
  valueOf,
} from "../../src/core/rules/effective.ts";
import { hydraLaunch, project, pythonRecipe, yamlOverride } from "../support/units.ts";

const complete = pythonRecipe("def r():\n    cfg = _pretrain_common()\n    return cfg\n");
const incomplete = hydraLaunch("run_recipe.py --recipe r train.train_iters=1");

describe("resolve: the unset-key policy", () => {
  it.each<[SettingKey, unknown]>([
    ["model.context_parallel_size", 1],
    ["model.tensor_model_parallel_size", 1],
    ["model.pipeline_model_parallel_size", 1],
    ["model.cp_comm_type", null],
    ["model.transformer_impl", "transformer_engine"],
  ])("complete unit: %s defaults to %j; incomplete: unknown", (key, value) => {
    expect(resolve(complete, key)).toMatchObject({ state: "default", value });
    expect(resolve(incomplete, key).state).toBe("unknown");
  });

  it.each<[SettingKey, unknown]>([
    ["model.hierarchical_context_parallel_sizes", null],
    ["dist.use_decentralized_pg", false],
    ["dist.eval_context_parallel_size", null],
    ["model.hybrid_context_parallel", false],
    ["model.dynamic_context_parallel", false],
  ])("%s defaults to %j in every unit (nothing upstream sets it)", (key, value) => {
    expect(valueOf(resolve(complete, key))).toEqual(value);
    expect(valueOf(resolve(incomplete, key))).toEqual(value);
  });

  it.each<SettingKey>([
    "model.seq_length",
    "dataset.seq_length",
    "model.num_attention_heads",
    "model.num_query_groups",
    "model.num_layers",
    "model.calculate_per_token_loss",
    "ddp.average_in_collective",
    "dataset.packed_sequence",
    "dataset.enable_offline_packing",
    "model.qkv_format",
    "model.window_size",
    "model.softmax_type",
  ])("%s is never defaulted", (key) => {
    expect(resolve(complete, key).state).toBe("unknown");
  });

  it("a set value wins, known or not", () => {
    const unit = pythonRecipe("def r():\n    cfg.model.context_parallel_size = 4\n    cfg.model.seq_length = n\n");
    expect(resolve(unit, "model.context_parallel_size")).toMatchObject({ state: "set", known: true, value: 4 });
    expect(resolve(unit, "model.seq_length")).toMatchObject({ state: "set", known: false });
  });
});

describe("cp_comm_type normalisation", () => {
  it("str → one type, list → per-layer, None → none, number → malformed", () => {
    expect(commTypes(yamlOverride("model:\n  cp_comm_type: a2a\n"))).toMatchObject({ state: "types", types: ["a2a"], perLayer: false });
    expect(commTypes(yamlOverride("model:\n  cp_comm_type: [p2p, a2a+p2p]\n"))).toMatchObject({ types: ["p2p", "a2a+p2p"], perLayer: true });
    expect(commTypes(yamlOverride("model:\n  cp_comm_type: null\n")).state).toBe("none");
    expect(commTypes(yamlOverride("model:\n  cp_comm_type: 3\n")).state).toBe("malformed");
  });
  it("unset means no a2a+p2p even in an incomplete unit; an unknown value is unknown", () => {
    expect(commTypes(incomplete).state).toBe("unknown");
    expect(usesA2aP2p(commTypes(incomplete))).toBe("no");
    expect(usesA2aP2p(commTypes(pythonRecipe("def r():\n    cfg.model.cp_comm_type = f()\n")))).toBe("unknown");
    expect(hcpContext(pythonRecipe("def r():\n    cfg.model.cp_comm_type = f()\n"))).toBe("unknown");
    expect(hcpContext(incomplete)).toBe("no");
  });
});

describe("versions and model families", () => {
  it("parses pins and compares like packaging.Version for releases", () => {
    expect(parseVersion("2.15.0+42b84005")).toEqual([2, 15, 0]);
    expect(parseVersion("release_v2.19")).toEqual([2, 19]);
    expect(parseVersion("main")).toBeUndefined();
    expect(compareVersions([2, 18, 0], [2, 19])).toBeLessThan(0);
    expect(compareVersions([2, 19], [2, 19, 0])).toBe(0);
    expect(teOlderThan(project("2.18.0"), "2.19")).toBe("yes");
    expect(teOlderThan(project("2.20.0.dev0"), "2.19")).toBe("no");
    expect(teOlderThan(project(), "2.19")).toBe("unknown");
  });
  it.each([
    ["src/megatron/bridge/perf_recipes/glm_moe_dsa/h100/glm5.py", true],
    ["src/megatron/bridge/models/glm_moe_dsa/glm5_bridge.py", true],
    ["recipes/deepseek/deepseek_v3_2.py", true],
    ["recipes/deepseek/deepseek_v32_dsa.py", true],
    ["recipes/deepseek/deepseek_v3.py", false],
    ["recipes/glm/glm45.py", false],
    ["recipes/misc/dsaturn.py", false],
  ])("namedLikeDsa(%s) = %s, and the name never makes it DSA", (file, expected) => {
    const unit = pythonRecipe("def r():\n    return cfg\n", { file });
    expect(namedLikeDsa(unit)).toBe(expected);
    expect(dsaAttention(unit)).toBe("no"); // a complete unit without the setting: MCore's default None
  });

  it("dsaAttention reads experimental_attention_variant: dsa, another variant, unknown", () => {
    expect(dsaAttention(pythonRecipe('def r():\n    cfg.model.experimental_attention_variant = "dsa"\n    return cfg\n'))).toBe("yes");
    expect(dsaAttention(pythonRecipe('def r():\n    cfg.model.experimental_attention_variant = "gdn"\n    return cfg\n'))).toBe("no");
    expect(dsaAttention(yamlOverride("model:\n  cp_comm_type: allgather\n"))).toBe("unknown");
  });
});
