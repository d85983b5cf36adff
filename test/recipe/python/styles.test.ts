// Every way the recipes set CP knobs, on fixtures written for these tests.
import { beforeAll, describe, expect, it } from "vitest";
import type { ExtractResult } from "../../../src/core/recipe/types.ts";
import { extractFixture, lineOf, setting, unitNamed, valueOf } from "./support.ts";

describe("current style: builder + attribute assignment", () => {
  let result: ExtractResult;
  let text: string;
  beforeAll(async () => ({ text, result } = await extractFixture("current_style.py")));

  it("finds public recipes (by *_config name or -> ConfigContainer) and skips private helpers", () => {
    const names = result.units.map((u) => u.name);
    expect(names).toContain("toy_pretrain_8gpu_h100_bf16_config");
    expect(names).toContain("build_everything"); // annotated -> ConfigContainer
    expect(names).not.toContain("_private_helper_config");
    expect(names).not.toContain("apply_overrides"); // -> ConfigContainer but needs arguments
    expect(result.diagnostics).toEqual([]);
    for (const u of result.units) {
      expect(u.kind).toBe("recipe");
      expect(u.complete).toBe(u.name !== "toy_perf_pretrain_8gpu_h100_bf16_config");
      expect(u.id).toBe(`fixtures/recipes/python/current_style.py::${u.name}`);
    }
  });

  it("reads attribute assignments into every section, with constants and arithmetic", () => {
    const u = unitNamed(result, "toy_pretrain_8gpu_h100_bf16_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(4);
    expect(valueOf(u, "model.tensor_model_parallel_size")).toBe(2);
    expect(valueOf(u, "model.cp_comm_type")).toBe("a2a+p2p");
    expect(valueOf(u, "model.hierarchical_context_parallel_sizes")).toEqual([2, 2]);
    expect(valueOf(u, "dataset.seq_length")).toBe(65536); // SEQ_64K = 2 * (32 * 1024)
    expect(valueOf(u, "model.seq_length")).toBe(65536);
    expect(valueOf(u, "dist.use_decentralized_pg")).toBe(false);
    expect(valueOf(u, "ddp.average_in_collective")).toBe(true);
    expect(u.settings["model.num_layers"]).toBeUndefined();
    expect(u.mode).toBe("pretrain");
    expect(u.gpus).toBeUndefined(); // "_8gpu_" in a name is not a world size
    expect(u.location.range.start.line).toBe(lineOf(text, "def toy_pretrain_8gpu_h100_bf16_config"));
    expect(text.slice(u.location.range.start.offset, u.location.range.end.offset)).toBe("toy_pretrain_8gpu_h100_bf16_config");
  });

  it("says how a constant travelled", () => {
    const s = setting(unitNamed(result, "toy_pretrain_8gpu_h100_bf16_config"), "dataset.seq_length");
    expect(s.origin.text).toBe("SEQ_64K");
    expect(s.origin.kind).toBe("assignment");
    expect(s.origin.via).toContain(`SEQ_64K = 2 * SEQ_32K (line ${lineOf(text, "SEQ_64K = 2")})`);
    expect(s.local).toBe(true);
  });

  it("follows a recipe derived from another recipe, and a chain of them", () => {
    const derived = unitNamed(result, "toy_pretrain_16gpu_h100_bf16_128k_config");
    expect(valueOf(derived, "model.context_parallel_size")).toBe(8); // CP_BASE * 2
    expect(valueOf(derived, "model.cp_comm_type")).toBe("a2a");
    expect(valueOf(derived, "dataset.seq_length")).toBe(131072);
    expect(valueOf(derived, "model.seq_length")).toBe(131072); // = cfg.dataset.seq_length
    const inherited = setting(derived, "model.tensor_model_parallel_size");
    expect(inherited.value).toEqual({ known: true, value: 2 });
    expect(inherited.local).toBe(false);
    expect(inherited.origin.via).toBe(`from base recipe toy_pretrain_8gpu_h100_bf16_config() line ${lineOf(text, "cfg.model.tensor_model_parallel_size = 2")}`);
    expect(setting(derived, "model.context_parallel_size").local).toBe(true);

    const chain = unitNamed(result, "toy_pretrain_32gpu_h100_bf16_chain_config");
    expect(valueOf(chain, "model.context_parallel_size")).toBe(8);
    expect(setting(chain, "model.context_parallel_size").local).toBe(false);
    expect(valueOf(chain, "model.hierarchical_context_parallel_sizes")).toEqual([2, 2]);
    expect(setting(chain, "model.hierarchical_context_parallel_sizes").local).toBe(true);
    expect(valueOf(chain, "ddp.average_in_collective")).toBe(true);
  });

  it("follows aliases, the transformer proxy and dataset.sequence_length", () => {
    const u = unitNamed(result, "toy_alias_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(2);
    expect(valueOf(u, "model.cp_comm_type")).toBe("p2p");
    expect(valueOf(u, "model.num_attention_heads")).toBe(32);
    expect(valueOf(u, "dataset.seq_length")).toBe(8192);
  });

  it("decides a condition it can evaluate and reads settings back", () => {
    const u = unitNamed(result, "toy_sft_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(2);
    expect(valueOf(u, "dataset.pad_seq_to_mult")).toBe(4); // cp * 2, under `if cp > 1`
    // A local name is replaced where the recipe uses it; via says where it was bound.
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.origin.text).toBe("cp");
    expect(cp.origin.location.range.start.line).toBe(lineOf(text, "cfg.model.context_parallel_size = cp"));
    expect(cp.origin.via).toBe(`cp = 2 (line ${lineOf(text, "    cp = 2")})`);
    expect(cp.local).toBe(true);
    expect(u.mode).toBe("sft");
    const known = unitNamed(result, "toy_known_branch_config");
    expect(valueOf(known, "model.cp_comm_type")).toBe("a2a+p2p");
    expect(valueOf(known, "model.window_size")).toBe("cp8"); // f-string
  });

  it("keeps what both branches agree on and marks the rest unknown, never guessing", () => {
    const u = unitNamed(result, "toy_branches_config");
    expect(valueOf(u, "model.cp_comm_type")).toBe("p2p");
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.value.known).toBe(false);
    expect(cp.value.known ? "" : cp.value.reason).toMatch(/differs between branches.*flag/);
    expect(setting(u, "model.num_layers").value.known).toBe(false); // set in a loop
    expect(setting(u, "model.qkv_format").value.known).toBe(false); // "thd" if flag else "sbhd"
    const tp = setting(u, "model.tensor_model_parallel_size");
    expect(tp.value.known).toBe(false);
    expect(tp.origin.text).toBe("get_tp()");
    expect(u.notes.some((n) => n.message.includes("model.tensor_model_parallel_size") && n.location.range.start.line === tp.origin.location.range.start.line)).toBe(true);
  });

  it("turns settings made before `cfg.model = <unanalyzed call>` into unknowns that fixes must override", () => {
    const u = unitNamed(result, "toy_reset_model_config");
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.value.known).toBe(false);
    expect(cp.local).toBe(false);
    expect(valueOf(u, "model.num_layers")).toBe(12);
    expect(valueOf(u, "dataset.seq_length")).toBe(65536); // other sections survive
  });

  it("marks a recipe built on another module's recipe incomplete, naming that recipe", () => {
    const u = unitNamed(result, "toy_perf_pretrain_8gpu_h100_bf16_config");
    expect(u.complete).toBe(false);
    expect(u.baseRecipe).toBe("pretrain_from_another_module_config");
    expect(valueOf(u, "model.cp_comm_type")).toBe("p2p");
    expect(unitNamed(result, "toy_alias_config").complete).toBe(true); // _pretrain_common() is not a recipe
    expect(unitNamed(result, "toy_alias_config").baseRecipe).toBeUndefined();
  });

  it("evaluates private helpers a recipe calls, and has no settings for unanalyzed results", () => {
    const u = unitNamed(result, "build_everything");
    expect(valueOf(u, "model.context_parallel_size")).toBe(16);
    expect(setting(u, "model.context_parallel_size").local).toBe(false);
    expect(setting(u, "model.context_parallel_size").origin.via).toMatch(/^from _private_helper_config\(\) line \d+$/);
    expect(unitNamed(result, "toy_direct_return_config").settings).toEqual({});
    expect(unitNamed(result, "toy_direct_return_config").anchors).toEqual({});
  });
});

describe("Nov-2025 style: recommended kwargs dict passed to a common builder", () => {
  let result: ExtractResult;
  let text: string;
  beforeAll(async () => ({ text, result } = await extractFixture("kwargs_style.py")));

  it("binds {**recommended, **user_kwargs} to the builder and evaluates its body", () => {
    const u = unitNamed(result, "toy_8b_64k_pretrain_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(4);
    expect(valueOf(u, "model.tensor_model_parallel_size")).toBe(4);
    expect(valueOf(u, "model.seq_length")).toBe(65536);
    expect(valueOf(u, "dataset.seq_length")).toBe(65536); // GPTDatasetConfig(sequence_length=...)
    expect(valueOf(u, "dist.use_decentralized_pg")).toBe(true);
    expect(valueOf(u, "ddp.average_in_collective")).toBe(true);
    expect(valueOf(u, "model.cp_comm_type")).toBeNull(); // builder default None
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.origin.kind).toBe("keyword");
    expect(cp.origin.text).toBe("4");
    expect(cp.local).toBe(true);
    expect(cp.origin.via).toBe(`recommended_kwargs["context_parallel_size"] line ${lineOf(text, '"context_parallel_size": 4')}`);
    const seq = setting(u, "dataset.seq_length");
    expect(seq.origin.text).toBe("SEQUENCE_LENGTH_64K");
    expect(seq.origin.via).toMatch(/^SEQUENCE_LENGTH_64K = 65536 \(line \d+\); recommended_kwargs\["seq_length"\] line \d+$/);
    expect(setting(u, "ddp.average_in_collective").local).toBe(false);
    expect(u.anchors).toEqual({}); // returns a call, not a named config
  });

  it("follows dict(a, **b) and .update() merges", () => {
    const u = unitNamed(result, "toy_8b_dict_merge_pretrain_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(8);
    expect(valueOf(u, "model.cp_comm_type")).toBe("a2a");
    expect(valueOf(u, "model.hierarchical_context_parallel_sizes")).toEqual([4, 2]);
    expect(valueOf(u, "model.tensor_model_parallel_size")).toBe(1);
  });

  it("constructs the provider class a recipe passes to its builder", () => {
    const u = unitNamed(result, "toy_small_provider_pretrain_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(2);
    expect(setting(u, "model.context_parallel_size").local).toBe(true);
    expect(valueOf(u, "model.seq_length")).toBe(2048);
    expect(valueOf(u, "dataset.seq_length")).toBe(2048);
  });

  it("uses builder parameter defaults as inherited parameter-default origins", () => {
    const u = unitNamed(result, "toy_8b_defaults_pretrain_config");
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.value).toEqual({ known: true, value: 1 });
    expect(cp.origin.kind).toBe("parameter-default");
    expect(cp.local).toBe(false);
    expect(cp.origin.location.range.start.line).toBe(lineOf(text, "context_parallel_size: int = 1"));
    expect(result.units.map((x) => x.name)).not.toContain("_toy_common");
  });
});

describe("pre-Nov-2025 style: context_parallelism parameters", () => {
  let result: ExtractResult;
  let text: string;
  beforeAll(async () => ({ text, result } = await extractFixture("legacy_style.py")));

  it("passes parameter defaults through a helper into the provider constructor", () => {
    const u = unitNamed(result, "pretrain_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(2);
    expect(valueOf(u, "model.tensor_model_parallel_size")).toBe(2);
    expect(valueOf(u, "model.sequence_parallel")).toBe(true);
    expect(valueOf(u, "dataset.seq_length")).toBe(8192);
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.origin.kind).toBe("parameter-default");
    expect(cp.local).toBe(true);
    expect(cp.origin.location.range.start.line).toBe(lineOf(text, "    context_parallelism: int = 2"));
  });

  it("maps a legacy parameter onto its key when the body hands it to code it cannot see", () => {
    const u = unitNamed(result, "forwarded_pretrain_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(4);
    expect(valueOf(u, "model.tensor_model_parallel_size")).toBe(2);
  });

  it("replaces the model section on `cfg.model = Provider(...)`", () => {
    const u = unitNamed(result, "replaced_model_config");
    expect(valueOf(u, "model.context_parallel_size")).toBe(2);
    expect(valueOf(u, "model.num_query_groups")).toBe(8);
    expect(u.settings["model.tensor_model_parallel_size"]).toBeUndefined(); // the new provider's default
    expect(valueOf(u, "dataset.seq_length")).toBe(8192);
  });

  it("records the dataset class (fine-tuning checks key on it); the mode is only what run_recipe infers from a name", () => {
    const u = unitNamed(result, "finetune_dataset_only_config");
    expect(u.datasetType).toBe("FinetuningDatasetConfig");
    expect(u.mode).toBe("sft"); // run_recipe reads `_finetune_` in the name
    expect(unitNamed(result, "replaced_model_config").mode).toBe("unknown");
  });
});

describe("seed-era perf workloads: dataclasses.replace constants", () => {
  let result: ExtractResult;
  beforeAll(async () => ({ result } = await extractFixture("workloads.py")));

  it("makes one unit per constant with base fields inherited", () => {
    const names = result.units.map((u) => u.name);
    expect(names).toEqual(["BASE_TOY_CONFIG", "TOY_PRETRAIN_CONFIG_H100_BF16_V1", "TOY_PRETRAIN_CONFIG_H100_FP8_V1", "TOY_SFT_CONFIG_H100_BF16_V1"]);
    const bf16 = unitNamed(result, "TOY_PRETRAIN_CONFIG_H100_BF16_V1");
    expect(valueOf(bf16, "model.context_parallel_size")).toBe(2);
    expect(setting(bf16, "model.context_parallel_size").origin.kind).toBe("keyword");
    expect(setting(bf16, "model.context_parallel_size").local).toBe(true);
    expect(valueOf(bf16, "model.tensor_model_parallel_size")).toBe(2);
    expect(setting(bf16, "model.tensor_model_parallel_size").local).toBe(false);
    expect(setting(bf16, "model.tensor_model_parallel_size").origin.via).toMatch(/^from BASE_TOY_CONFIG line \d+$/);
    expect(bf16.gpus).toBeUndefined(); // num_gpus is "for representation purposes only" upstream
    expect(bf16.mode).toBe("pretrain");
  });

  it("chains replace() over replace() and dataclasses.replace", () => {
    const fp8 = unitNamed(result, "TOY_PRETRAIN_CONFIG_H100_FP8_V1");
    expect(valueOf(fp8, "model.context_parallel_size")).toBe(4);
    expect(valueOf(fp8, "model.expert_model_parallel_size")).toBe(2);
    expect(valueOf(fp8, "model.tensor_model_parallel_size")).toBe(2);
    const sft = unitNamed(result, "TOY_SFT_CONFIG_H100_BF16_V1");
    expect(sft.mode).toBe("peft"); // peft="lora"
    expect(sft.gpus).toBeUndefined();
  });
});

describe("provider dataclasses", () => {
  let result: ExtractResult;
  beforeAll(async () => ({ result } = await extractFixture("providers.py")));

  it("reads field defaults under model.*, inheriting from a base class of the same file", () => {
    const base = unitNamed(result, "ToyVLModelProvider");
    expect(valueOf(base, "model.cp_comm_type")).toBe("p2p");
    expect(valueOf(base, "model.num_attention_heads")).toBe(16);
    expect(setting(base, "model.cp_comm_type").local).toBe(true);
    const large = unitNamed(result, "ToyVLLargeModelProvider");
    expect(valueOf(large, "model.num_layers")).toBe(48);
    expect(valueOf(large, "model.cp_comm_type")).toBe("p2p");
    expect(setting(large, "model.cp_comm_type").local).toBe(false);
    expect(valueOf(large, "model.hierarchical_context_parallel_sizes")).toBeNull(); // field(default=None)
    expect(result.units.map((u) => u.name)).not.toContain("PlainSettings");
  });
});
