// Issue 10, items 1-10: each rule judged on what upstream actually does, through the real
// extractors (tree-sitter Python, YAML, the launch lexer) and the composition, with the
// counter-examples that must stay silent.
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import type { Finding } from "../../src/core/model/finding.ts";
import type { SourceFile } from "../../src/core/model/source.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

const pin = (version: string): SourceFile => ({ path: "uv.lock", text: `[[package]]\nname = "transformer-engine"\nversion = "${version}"\n` });
const recipe = (name: string, body: string, path = "src/megatron/bridge/recipes/fam/h100/fam.py", head = "    cfg = _pretrain_common()\n"): SourceFile => ({
  path,
  text: `def ${name}():\n${head}${body
    .trim()
    .split("\n")
    .map((l) => `    ${l.trim()}`)
    .join("\n")}\n    return cfg\n`,
});
function run(files: SourceFile[], rule?: string): Finding[] {
  return analyze(files, { python }).findings.filter((f) => rule === undefined || f.ruleId === rule);
}
const HCP = 'cfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]';

/** Bridge's recipes/common.py, reduced to what the checks read (HEAD 067f987 sets these). */
const COMMON: SourceFile = {
  path: "src/megatron/bridge/recipes/common.py",
  text: `def _pretrain_common() -> ConfigContainer:
    cfg = ConfigContainer(
        model=None,
        ddp=DistributedDataParallelConfig(check_for_nan_in_grad=True, average_in_collective=True),
        dataset=GPTDatasetConfig(seq_length=4096),
        dist=DistributedInitConfig(),
    )
    return cfg


def _sft_common() -> ConfigContainer:
    cfg = ConfigContainer(
        model=None,
        ddp=DistributedDataParallelConfig(check_for_nan_in_grad=True),
        dataset=GPTSFTDatasetConfig(seq_length=2048, enable_offline_packing=True),
    )
    return cfg
`,
};
const IMPORTS = "from megatron.bridge.recipes.common import _pretrain_common, _sft_common\n\n\n";
const withImports = (f: SourceFile): SourceFile => ({ ...f, text: IMPORTS + f.text });

describe("1. fine-tuning checks follow the dataset type, never the recipe name", () => {
  it("a pre-training recipe over MockVLMSFTDatasetConfig with CP 2 gets HCP022", () => {
    const f = run([recipe("qwen3_vl_pretrain_config", "cfg.dataset = MockVLMSFTDatasetConfig(seq_length=4096)\ncfg.model.context_parallel_size = 2\ncfg.model.calculate_per_token_loss = False")], "HCP022");
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toContain('"When finetuning with CP>1, calculate_per_token_loss must be True"');
    expect(f[0]!.message).toContain("fine-tuning dataset (MockVLMSFTDatasetConfig)");
  });

  it("reads average_in_collective=True from _pretrain_common in the analyzed tree (the fix adds an override in the recipe)", () => {
    const r = withImports(recipe("x_pretrain_config", "cfg.model = GPTModelProvider()\ncfg.dataset = GPTSFTDatasetConfig(seq_length=4096)\ncfg.model.context_parallel_size = 2"));
    const f = run([COMMON, r], "HCP022");
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toContain("ddp.average_in_collective is True (src/megatron/bridge/recipes/common.py:4");
    expect(f[0]!.fix?.edits[0]).toMatchObject({ file: r.path, newText: expect.stringContaining("cfg.ddp.average_in_collective = False") });
  });

  it("silent: an *_sft_* name over pre-training data, and a fine-tuning dataset that is not known", () => {
    expect(run([recipe("x_sft_config", "cfg.dataset = GPTDatasetConfig(seq_length=4096)\ncfg.model.context_parallel_size = 2\ncfg.ddp.average_in_collective = True")], "HCP022")).toEqual([]);
    expect(run([recipe("x_sft_config", "cfg.model.context_parallel_size = 2\ncfg.ddp.average_in_collective = True", undefined, "    cfg = _sft_common()\n")], "HCP022")).toEqual([]);
  });

  it("HCP010 reads packing from the settings (_sft_common's offline packing), not from a name", () => {
    const sft = withImports(recipe("x_sft_config", `cfg.model = GPTModelProvider()\n${HCP}`, undefined, "    cfg = _sft_common()\n"));
    const f = run([COMMON, sft, pin("2.18.0")], "HCP010");
    expect(f).toHaveLength(1);
    expect(f[0]!.severity).toBe("error");
    expect(f[0]!.message).toContain("dataset.enable_offline_packing is True (src/megatron/bridge/recipes/common.py:15, via from _sft_common()");
    // The same SFT name without the builder in the tree: nothing says the data is packed.
    expect(run([recipe("x_sft_config", HCP, undefined, "    cfg = _sft_common()\n"), pin("2.18.0")], "HCP010")).toEqual([]);
  });
});

describe("2. run_recipe's seq_length sync on launch lines", () => {
  const base = recipe("r_pretrain_config", "cfg.dataset.seq_length = 8192\ncfg.model.seq_length = 8192\ncfg.model.tensor_model_parallel_size = 1\ncfg.model.context_parallel_size = 4");
  it("an override of model.seq_length alone: HCP008 says it is discarded, and HCP007 is not judged on it", () => {
    const launch = { path: "run.sh", text: "torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe r_pretrain_config model.seq_length=8190\n" };
    const findings = run([base, launch]).filter((f) => f.location.file === "run.sh" || f.unitId.startsWith("run.sh"));
    expect(findings.map((f) => [f.ruleId, f.severity])).toEqual([["HCP008", "warning"]]);
    expect(findings[0]!.message).toContain("silently discarded");
  });
  it("what run_recipe validates is judged: -sl 8190 sets dataset.seq_length, which the model follows → HCP007", () => {
    const launch = { path: "run.sh", text: "torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe r_pretrain_config -sl 8190\n" };
    const f = run([base, launch], "HCP007").filter((x) => x.unitId.startsWith("run.sh"));
    expect(f).toHaveLength(1);
    expect(run([base, launch], "HCP008").filter((x) => x.unitId.startsWith("run.sh"))).toEqual([]);
  });
  it("a launch line whose recipe was not analyzed: the discarded override is not judged by HCP007 either", () => {
    const launch = { path: "run.sh", text: "python scripts/training/run_recipe.py --recipe other_pretrain_config -cp 4 model.seq_length=8190\n" };
    expect(run([launch]).map((f) => f.ruleId)).toEqual(["HCP008"]);
  });
});

describe("3. sliding window as Transformer Engine and Megatron-Core define it", () => {
  it("(-1, 0) and (-1, -1) are no window", () => {
    for (const w of ["(-1, 0)", "(-1, -1)", "None"]) expect(run([recipe("w_pretrain_config", `${HCP}\ncfg.model.window_size = ${w}`)], "HCP011")).toEqual([]);
  });
  it("only the layers window_attn_skip_freq marks get the window: a2a there and a2a+p2p on the full layers is fine", () => {
    // freq 2: layers 1 and 3 are window layers (layer % 2 != 0), 2 and 4 full.
    const ok = `cfg.model.num_layers = 4\ncfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = ["a2a", "a2a+p2p", "a2a", "a2a+p2p"]\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\ncfg.model.window_size = (4096, 0)\ncfg.model.window_attn_skip_freq = 2`;
    expect(run([recipe("w_pretrain_config", ok)], "HCP011")).toEqual([]);
    const list = ok.replace("window_attn_skip_freq = 2", "window_attn_skip_freq = [1, 0, 1, 0]");
    expect(run([recipe("w_pretrain_config", list)], "HCP011")).toEqual([]);
    const flipped = ok.replace('["a2a", "a2a+p2p", "a2a", "a2a+p2p"]', '["a2a+p2p", "a2a", "a2a+p2p", "a2a"]');
    const f = run([recipe("w_pretrain_config", flipped), pin("2.18.0")], "HCP011");
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toContain("sliding-window attention on layers 1, 3");
    expect(f[0]!.message).toContain(`"Context parallelism does not support sliding window attention with cp_comm_type='a2a+p2p'!"`);
    expect(f[0]!.fix?.edits[0]?.newText).toBe('["a2a", "a2a", "a2a", "a2a"]');
  });
  it("quotes TE's softmax message with the real softmax_type, as the pinned release prints it", () => {
    const body = `${HCP}\ncfg.model.softmax_type = "off-by-one"`;
    const new_ = run([recipe("s_pretrain_config", body), pin("2.18.0")], "HCP011")[0]!;
    expect(new_.message).toContain(`"Context parallelism only supports softmax_type='off-by-one' with cp_comm_type = 'a2a'!"`);
    const old = run([recipe("s_pretrain_config", body), pin("2.10.0")], "HCP011")[0]!;
    expect(old.message).toContain(`"Context parallelism only supports {softmax_type=} with cp_comm_type = 'a2a'!"`);
  });
});

describe("4. DSA is a setting", () => {
  // A generic provider: its unset fields are Megatron-Core's defaults (cp_comm_type None).
  const dsa = 'cfg.model = GPTModelProvider()\ncfg.model.experimental_attention_variant = "dsa"\ncfg.model.context_parallel_size = 2';
  it("a2a, p2p, a2a+p2p and an unset type on DSA with CP > 1 are errors quoting M3; allgather is right", () => {
    for (const t of ['"a2a"', '"p2p"', '"a2a+p2p"']) {
      const f = run([recipe("d_pretrain_config", `${dsa}\ncfg.model.cp_comm_type = ${t}`)], "HCP013");
      expect(f.map((x) => x.severity)).toEqual(["error"]);
      expect(f[0]!.message).toContain('"DSAttention context parallelism currently supports cp_comm_type=allgather only."');
    }
    expect(run([recipe("d_pretrain_config", dsa)], "HCP013").map((x) => x.severity)).toEqual(["error"]);
    expect(run([recipe("d_pretrain_config", `${dsa}\ncfg.model.cp_comm_type = "allgather"`)], "HCP013")).toEqual([]);
  });
  it("a GLM-5 name adds an info, never decides", () => {
    const glm = recipe("glm5_pretrain_config", 'cfg.model = AutoBridge.from_hf_pretrained("zai-org/GLM-5").to_megatron_provider()\ncfg.model.context_parallel_size = 2\ncfg.model.cp_comm_type = "allgather"', "src/megatron/bridge/perf_recipes/glm_moe_dsa/h100/glm5.py");
    const f = run([glm], "HCP013");
    expect(f.map((x) => x.severity)).toEqual(["info"]);
    expect(f[0]!.message).toContain("cfg.model comes from AutoBridge.from_hf_pretrained");
  });
});

describe("5. eval_context_parallel_size", () => {
  it("an error only where upstream fails (decentralized PG with hierarchical sizes), else a warning without an upstream quote", () => {
    const mpu = run([recipe("e_pretrain_config", `${HCP}\ncfg.dist.eval_context_parallel_size = 2`)], "HCP023");
    expect(mpu.map((f) => f.severity)).toEqual(["warning"]);
    expect(mpu[0]!.message).not.toContain("NotImplementedError");
    const dpg = run([recipe("e_pretrain_config", `${HCP}\ncfg.dist.eval_context_parallel_size = 2\ncfg.dist.use_decentralized_pg = True`)], "HCP023");
    expect(dpg.map((f) => f.severity)).toEqual(["error"]);
    expect(dpg[0]!.message).toContain("NotImplementedError: Decentralized process groups");
  });
});

describe("6. transformer_impl", () => {
  it("inference_optimized builds TE attention: no HCP016; local does not", () => {
    expect(run([recipe("i_pretrain_config", 'cfg.model.context_parallel_size = 2\ncfg.model.transformer_impl = "inference_optimized"')], "HCP016")).toEqual([]);
    expect(run([recipe("i_pretrain_config", 'cfg.model.context_parallel_size = 2\ncfg.model.transformer_impl = "local"')], "HCP016")).toHaveLength(1);
  });
});

describe("7. unknown stays unknown", () => {
  it("an unset cp_comm_type in a YAML override or behind AutoBridge is not called plain p2p", () => {
    const yaml = { path: "conf/o.yaml", text: "model:\n  context_parallel_size: 4\n  hierarchical_context_parallel_sizes: [2, 2]\n" };
    const y = run([yaml], "HCP005")[0]!;
    expect(y.message).toContain("model.cp_comm_type is not set here");
    expect(y.message).not.toContain("plain p2p");
    const auto = recipe("m_pretrain_config", 'cfg.model = AutoBridge.from_hf_pretrained("mistralai/Mistral-7B-v0.1").to_megatron_provider()\ncfg.model.context_parallel_size = 4\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]');
    const a = run([auto], "HCP005")[0]!;
    expect(a.message).toContain("cfg.model comes from AutoBridge.from_hf_pretrained");
    expect(a.message).not.toContain("plain p2p");
    // A generic provider has Megatron-Core's default: there it is p2p.
    const generic = recipe("g_pretrain_config", "cfg.model = GPTModelProvider()\ncfg.model.context_parallel_size = 4\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]");
    expect(run([generic], "HCP005")[0]!.message).toContain("plain p2p");
  });
});

describe("8. the messages upstream prints", () => {
  it("Megatron-LM launch lines quote Megatron-LM's own checks", () => {
    const m = run([{ path: "mlm.sh", text: "torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size 4 --cp-comm-type a2a+p2p\n" }], "HCP001")[0]!;
    expect(m.message).toContain('"--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm"');
    expect(m.message).not.toContain("hierarchical_context_parallel_sizes must be set when cp_comm_type contains");
    const p = run([{ path: "mlm.sh", text: "pretrain_gpt.py --context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 4\n" }], "HCP002")[0]!;
    expect(p.message).toContain("bare AssertionError");
    expect(p.message).not.toContain("Product of hierarchical_context_parallel_sizes");
  });
  it("Transformer Engine 1.12-2.7 and 2.8+ word the two-group assertion differently", () => {
    const body = 'cfg.model.context_parallel_size = 8\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2, 2]';
    expect(run([recipe("t_pretrain_config", body), pin("2.7.0")], "HCP003")[0]!.message).toContain('"Current implementation only supports two-level CP groups!"');
    expect(run([recipe("t_pretrain_config", body), pin("2.18.0")], "HCP003")[0]!.message).toContain('"CP implementation a2a+p2p requires cp_group = [a2a_cp_group, p2p_cp_group]!"');
    const unknown = run([recipe("t_pretrain_config", body)], "HCP003")[0]!.message;
    expect(unknown).toContain("two-level CP groups!");
    expect(unknown).toContain("[a2a_cp_group, p2p_cp_group]!");
  });
  it("B5 only for a value that is not a list; HCP014's assertion only from TE 1.10", () => {
    const list = run([recipe("b_pretrain_config", "cfg.model.context_parallel_size = 2\ncfg.model.cp_comm_type = [1, 2]")], "HCP013")[0]!;
    expect(list.message).not.toContain("cp_comm_type must be a str or list of str");
    const int = run([recipe("b_pretrain_config", "cfg.model.context_parallel_size = 2\ncfg.model.cp_comm_type = 3")], "HCP013")[0]!;
    expect(int.message).toContain("\"cp_comm_type must be a str or list of str, got <class 'int'>.\"");
    const body = `${HCP}`;
    expect(run([recipe("v_pretrain_config", body), pin("1.11.0")], "HCP014")[0]!.message).toContain("to supporthierarchical cp commucation.");
    const old = run([recipe("v_pretrain_config", body), pin("1.9.0")], "HCP014")[0]!.message;
    expect(old).toContain("nothing asserts");
    expect(old).not.toContain("supporthierarchical");
  });
  it("HCP017 exists for the world-size assertion (the verdict catalogue's B12)", () => {
    const bad = { path: "run.sh", text: "torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe x_pretrain_config -tp 2 -pp 1 -cp 4\n" };
    const f = run([bad], "HCP017")[0]!;
    expect(f.message).toContain('"world_size (4) is not divisible by 8"');
    expect(run([{ ...bad, text: bad.text.replace("-tp 2", "-tp 1") }], "HCP017")).toEqual([]);
    // A GPU count in a recipe name is not a world size.
    expect(run([recipe("x_pretrain_4gpu_h100_bf16_config", "cfg.model.tensor_model_parallel_size = 2\ncfg.model.context_parallel_size = 4")], "HCP017")).toEqual([]);
  });
});

describe("9. GPUs per NVLink domain from the hardware folder", () => {
  const wide = 'cfg.model.tensor_model_parallel_size = 8\ncfg.model.context_parallel_size = 16\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [8, 2]';
  it("TP 8 × a2a 9 = 72 GPUs fits a GB200 NVL72 rack; TP 8 × a2a 8 = 64 fits in size but not in place; the message says where the number came from", () => {
    const rack = wide.replace("= 16", "= 18").replace("[8, 2]", "[9, 2]");
    expect(run([recipe("n_pretrain_config", rack, "src/megatron/bridge/recipes/llama/gb200/llama3.py")], "HCP018")).toEqual([]);
    // Megatron-Core's a2a groups are runs of 64 consecutive ranks: ranks 64..127 cross from the first rack into the second.
    const straddle = run([recipe("n_pretrain_config", wide, "src/megatron/bridge/recipes/llama/gb200/llama3.py")], "HCP018")[0]!;
    expect(straddle.message).toContain("64 does not divide the 72 GPUs of one NVLink domain (GB200 NVL72");
    const h100 = run([recipe("n_pretrain_config", wide, "src/megatron/bridge/perf_recipes/llama/h100/llama3.py")], "HCP018")[0]!;
    expect(h100.message).toContain("more than the 8 GPUs of one NVLink domain (H100 (8-GPU NVLink node), from the hardware folder perf_recipes/llama/h100/)");
    const tooWide = wide.replace("= 16", "= 32").replace("[8, 2]", "[16, 2]");
    const gb = run([recipe("n_pretrain_config", tooWide, "src/megatron/bridge/perf_recipes/llama/gb300/llama3.py")], "HCP018")[0]!;
    expect(gb.message).toContain("more than the 72 GPUs of one NVLink domain (GB300 NVL72, from the hardware folder perf_recipes/llama/gb300/)");
  });
  it("every sizes fix names its domain, and a launch line takes its recipe's", () => {
    const r = recipe("n_pretrain_config", 'cfg.model.tensor_model_parallel_size = 4\ncfg.model.context_parallel_size = 16\ncfg.model.cp_comm_type = "a2a+p2p"', "src/megatron/bridge/recipes/llama/gb200/llama3.py");
    const f = run([r], "HCP001")[0]!;
    expect(f.fix?.description).toContain("GB200 NVL72, from the hardware folder recipes/llama/gb200/");
    const launch = { path: "examples/run.sh", text: "torchrun scripts/training/run_recipe.py --recipe n_pretrain_config -cp 32\n" };
    const viaLaunch = run([r, launch], "HCP001").find((x) => x.unitId.startsWith("examples/run.sh"))!;
    expect(viaLaunch.message).toContain("GB200 NVL72");
  });
});

describe("10. builders in other modules of the analyzed tree", () => {
  const common = {
    path: "src/megatron/bridge/recipes/llama/common.py",
    text: `from megatron.bridge.recipes.common import _pretrain_common


def _llama3_common(context_parallel_size: int = 1, cp_comm_type=None, seq_length: int = 4096, **kwargs):
    cfg = _pretrain_common()
    cfg.model = Llama3ModelProvider8B()
    cfg.model.context_parallel_size = context_parallel_size
    cfg.model.cp_comm_type = cp_comm_type
    cfg.dataset.seq_length = seq_length
    cfg.model.seq_length = seq_length
    return cfg
`,
  };
  const kwargs = {
    path: "src/megatron/bridge/recipes/llama/llama3.py",
    text: `from .common import _llama3_common


def llama3_8b_64k_pretrain_config(**user_kwargs):
    recommended_kwargs = {"context_parallel_size": 4, "cp_comm_type": "a2a+p2p", "seq_length": 65536}
    return _llama3_common(**{**recommended_kwargs, **user_kwargs})
`,
  };
  it("a kwargs-style recipe is judged as if its builder were in the same file", () => {
    const report = analyze([COMMON, common, kwargs], { python });
    const unit = report.units.find((u) => u.name === "llama3_8b_64k_pretrain_config")!;
    expect(unit.settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 4 });
    expect(unit.settings["model.cp_comm_type"]?.origin.location.file).toBe(kwargs.path); // the dict value, editable in place
    const f = report.findings.filter((x) => x.ruleId === "HCP001" && x.unitId === unit.id);
    expect(f).toHaveLength(1);
    expect(f[0]!.location.range.start.line).toBe(5);
  });
  it("recipes sharing a builder of another module each get their own copy of its result", () => {
    const two = {
      path: "src/megatron/bridge/recipes/llama/h100/two.py",
      text: `from megatron.bridge.recipes.common import _pretrain_common


def a_pretrain_config():
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider()
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    return cfg


def b_pretrain_config():
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider()
    return cfg
`,
    };
    const report = analyze([COMMON, two], { python });
    const b = report.units.find((u) => u.name === "b_pretrain_config")!;
    expect(b.settings["model.cp_comm_type"]).toBeUndefined();
    expect(b.settings["ddp.average_in_collective"]?.value).toEqual({ known: true, value: true });
    expect(report.findings.filter((f) => f.ruleId === "HCP001").map((f) => f.unitName)).toEqual(["a_pretrain_config"]);
  });

  it("without the builder in the tree the kwargs handed to it are judged (issue 27.10); what it may set itself stays unknown", () => {
    const report = analyze([kwargs], { python });
    const unit = report.units[0]!;
    // a2a+p2p handed with no sizes: nothing upstream sets the sizes, so the kwargs alone decide.
    expect(unit.settings["model.cp_comm_type"]?.value).toEqual({ known: true, value: "a2a+p2p" });
    expect(report.findings.filter((f) => f.ruleId === "HCP001").map((f) => f.location.range.start.line)).toEqual([5]);
    // The unseen builder may set the rest: no upstream default is assumed for it.
    expect(unit.complete).toBe(false);
    expect(unit.settings["model.tensor_model_parallel_size"]).toBeUndefined();
  });
});
