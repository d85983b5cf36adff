// Generates a deterministic benchmark corpus shaped like Megatron-Bridge: recipe modules
// in the three historical styles (attribute assignment, kwargs dict + common builder,
// legacy `context_parallelism` parameter), perf workload constants built with
// dataclasses.replace, YAML override files and launch scripts. Some configurations carry
// deliberate HCP mistakes so the rules do real work.
import type { SourceFile } from "../src/core/model/source.ts";

/** Small seeded PRNG (mulberry32) so every run analyzes the same text. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CPS = [1, 2, 4, 8, 16];
const SEQS = ["4096", "8192", "SEQUENCE_LENGTH_32K", "SEQUENCE_LENGTH_64K", "131072", "8190"];
const COMM = [undefined, '"p2p"', '"a2a"', '"a2a+p2p"', '"all_gather"'];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function header(r: () => number, family: string): string[] {
  return [
    `"""Recipes for the ${family} family (generated for benchmarking)."""`,
    "",
    "from dataclasses import replace",
    "",
    "import torch",
    "",
    "from megatron.bridge.models import AutoBridge",
    "from megatron.bridge.recipes.common import COMMON_RECIPE_ENV_VARS, DEFAULT_NULL_TOKENIZER_VOCAB_SIZE",
    "from megatron.bridge.recipes.common import _pretrain_common, _sft_common",
    "from megatron.bridge.training.config import ConfigContainer, DistributedInitConfig, GPTDatasetConfig",
    "",
    "SEQUENCE_LENGTH_32K = 32 * 1024",
    "SEQUENCE_LENGTH_64K: int = 65536",
    `HF_PATH = "example-org/${family}-${Math.floor(r() * 70) + 1}b"`,
    "",
  ];
}

/**
 * The settings real recipes spell out besides parallelism (tokenizer, training, optimizer,
 * DDP, logging, checkpoints), with their comments: Megatron-Bridge recipes run 80-100 lines
 * each, about one recipe per 100-150 lines of module (measured on the HEAD checkout).
 */
function everydaySettings(r: () => number): string[] {
  return [
    "",
    "    # Tokenizer - uses NullTokenizer by default",
    '    cfg.tokenizer.tokenizer_type = "NullTokenizer"',
    "    cfg.tokenizer.tokenizer_model = None",
    "    cfg.tokenizer.vocab_size = DEFAULT_NULL_TOKENIZER_VOCAB_SIZE",
    "",
    "    # Dataset config - mock data by default",
    "    cfg.dataset.blend = None  # Pass the path to the dataset here if not using mock data, along with weight.",
    `    cfg.dataset.num_workers = ${pick(r, [4, 8])}`,
    "",
    "    # Training config",
    `    cfg.train.train_iters = ${pick(r, [1_168_251, 500_000, 100_000])}`,
    `    cfg.train.global_batch_size = ${pick(r, [128, 256, 512, 768])}`,
    "    cfg.train.micro_batch_size = 1",
    `    cfg.validation.eval_interval = ${pick(r, [500, 1000, 2000])}`,
    "    cfg.train.manual_gc = True",
    "    cfg.train.manual_gc_interval = 100",
    "",
    `    cfg.scheduler.lr_warmup_iters = ${pick(r, [500, 2000])}`,
    "",
    "    cfg.logger.log_timers_to_tensorboard = True",
    "    cfg.logger.log_interval = 10",
    "",
    "    # Mixed precision and communication overlap",
    '    cfg.mixed_precision = "bf16_mixed"',
    "    cfg.comm_overlap.tp_comm_overlap = False",
    "    cfg.comm_overlap.overlap_grad_reduce = True",
    "",
    "    cfg.optimizer.use_precision_aware_optimizer = False",
    "    cfg.optimizer.main_grads_dtype = torch.float32",
    "    cfg.optimizer.main_params_dtype = torch.float32",
    "    cfg.optimizer.exp_avg_dtype = torch.float32",
    "    cfg.optimizer.exp_avg_sq_dtype = torch.float32",
    "",
    `    cfg.checkpoint.save_interval = ${pick(r, [200, 500, 1000])}`,
    "    # cfg.checkpoint.save and cfg.checkpoint.load are set in _pretrain_common. To override them, set them here.Ex:",
    '    # cfg.checkpoint.save = "path/to/save"',
    '    # cfg.checkpoint.load = "path/to/load"',
    "",
    "    cfg.ddp.overlap_grad_reduce = True",
    "    cfg.ddp.overlap_param_gather = True",
    "    cfg.ddp.check_for_nan_in_grad = True",
    "    cfg.ddp.use_distributed_optimizer = True",
    "    cfg.ddp.use_megatron_fsdp = False",
    "    cfg.ddp.grad_reduce_in_fp32 = True",
    "    cfg.ddp.average_in_collective = True",
    '    cfg.ddp.data_parallel_sharding_strategy = "no_shard"',
    "",
    "    # Keep the complete process environment visible on the recipe.",
    "    cfg.env_vars = {",
    "        **COMMON_RECIPE_ENV_VARS,",
    "    }",
  ];
}

function attributeRecipe(r: () => number, name: string): string[] {
  const cp = pick(r, CPS);
  const comm = pick(r, COMM);
  const lines = [
    `def ${name}() -> ConfigContainer:`,
    `    """Return a pre-training config for ${name}.`,
    "",
    "    Recommended parallelism is documented in the model card; see the HCP guide for",
    "    when hierarchical context parallelism pays off.",
    '    """',
    "    cfg = _pretrain_common()",
    "    cfg.model = AutoBridge.from_hf_pretrained(HF_PATH).to_megatron_provider(load_weights=False)",
    "",
    "    # Tokenizer and data",
    '    cfg.tokenizer.tokenizer_model = HF_PATH',
    `    cfg.dataset.seq_length = ${pick(r, SEQS)}`,
    "    cfg.dataset.num_workers = 8",
    "",
    "    # Parallelism",
    `    cfg.model.tensor_model_parallel_size = ${pick(r, [1, 2, 4, 8])}`,
    `    cfg.model.pipeline_model_parallel_size = ${pick(r, [1, 2])}`,
    `    cfg.model.context_parallel_size = ${cp}`,
    `    cfg.model.sequence_parallel = ${r() < 0.5 ? "True" : "False"}`,
  ];
  if (comm) lines.push(`    cfg.model.cp_comm_type = ${comm}`);
  if (comm === '"a2a+p2p"' && r() < 0.7) lines.push(`    cfg.model.hierarchical_context_parallel_sizes = [${cp >= 2 ? 2 : 1}, ${Math.max(1, cp / 2)}]`);
  lines.push("    cfg.model.seq_length = cfg.dataset.seq_length", ...everydaySettings(r), "    return cfg", "", "");
  return lines;
}

function derivedRecipe(r: () => number, name: string, base: string): string[] {
  const cp = pick(r, [2, 4, 8]);
  return [
    `def ${name}() -> ConfigContainer:`,
    `    """Long-context variant of ${base}."""`,
    `    cfg = ${base}()`,
    `    cfg.model.context_parallel_size = ${cp}`,
    `    cfg.model.cp_comm_type = ${pick(r, ['"a2a"', '"a2a+p2p"', '"p2p"'])}`,
    `    cfg.dataset.seq_length = ${pick(r, ["SEQUENCE_LENGTH_64K", "131072", "2 * SEQUENCE_LENGTH_32K"])}`,
    "    cfg.model.seq_length = cfg.dataset.seq_length",
    "    return cfg",
    "",
    "",
  ];
}

function kwargsStyle(r: () => number, family: string, count: number): string[] {
  const lines = [
    `def _${family}_common(`,
    "    hf_path: str,",
    "    tensor_model_parallel_size: int = 1,",
    "    pipeline_model_parallel_size: int = 1,",
    "    context_parallel_size: int = 1,",
    "    sequence_parallel: bool = False,",
    "    seq_length: int = 8192,",
    "    use_decentralized_pg: bool = False,",
    "    **kwargs,",
    ") -> ConfigContainer:",
    '    """Common builder shared by the recipes below."""',
    "    model_cfg = AutoBridge.from_hf_pretrained(hf_path).to_megatron_provider(load_weights=False)",
    "    model_cfg.tensor_model_parallel_size = tensor_model_parallel_size",
    "    model_cfg.pipeline_model_parallel_size = pipeline_model_parallel_size",
    "    model_cfg.context_parallel_size = context_parallel_size",
    "    model_cfg.sequence_parallel = sequence_parallel",
    "    model_cfg.seq_length = seq_length",
    "    cfg = ConfigContainer(",
    "        model=model_cfg,",
    "        dataset=GPTDatasetConfig(sequence_length=seq_length, random_seed=1234),",
    "        dist=DistributedInitConfig(use_decentralized_pg=use_decentralized_pg),",
    "    )",
    ...everydaySettings(r),
    "    return cfg",
    "",
    "",
  ];
  for (let i = 0; i < count; i++) {
    const cp = pick(r, CPS);
    lines.push(
      `def ${family}_kw${i}_pretrain_config(**user_kwargs) -> ConfigContainer:`,
      '    """Kwargs-style recipe.',
      "",
      "    Recommended parallelism is given below; every value can be overridden through user_kwargs,",
      "    e.g. llama3_8b_pretrain_config(context_parallel_size=8, seq_length=65536).",
      '    """',
      "    recommended_kwargs = {",
      "        \"hf_path\": HF_PATH,",
      `        "tensor_model_parallel_size": ${pick(r, [1, 2, 4])},`,
      `        "context_parallel_size": ${cp},`,
      `        "seq_length": ${pick(r, SEQS)},`,
      `        "use_decentralized_pg": ${r() < 0.1 ? "True" : "False"},`,
      "    }",
      "    combined_kwargs = {**recommended_kwargs, **user_kwargs}",
      `    return _${family}_common(**combined_kwargs)`,
      "",
      "",
    );
  }
  return lines;
}

function legacyRecipe(r: () => number, name: string): string[] {
  return [
    `def ${name}(`,
    "    dir: str | None = None,",
    `    tensor_parallelism: int = ${pick(r, [1, 2])},`,
    `    context_parallelism: int = ${pick(r, CPS)},`,
    `    seq_length: int = ${pick(r, ["4096", "8192", "16384"])},`,
    ") -> ConfigContainer:",
    '    """Legacy-style recipe with `context_parallelism`."""',
    "    model_cfg = AutoBridge.from_hf_pretrained(HF_PATH).to_megatron_provider(load_weights=False)",
    "    model_cfg.tensor_model_parallel_size = tensor_parallelism",
    "    model_cfg.context_parallel_size = context_parallelism",
    "    model_cfg.seq_length = seq_length",
    "    cfg = ConfigContainer(model=model_cfg, dataset=GPTDatasetConfig(sequence_length=seq_length))",
    ...everydaySettings(r),
    "    return cfg",
    "",
    "",
  ];
}

function workloads(r: () => number, family: string): string[] {
  const lines = [`BASE_${family.toUpperCase()}_CONFIG = WorkloadBaseConfig(num_gpus=8, global_batch_size=128)`, ""];
  for (let i = 0; i < 8; i++) {
    lines.push(
      `${family.toUpperCase()}_PRETRAIN_CONFIG_H100_V${i} = replace(`,
      `    BASE_${family.toUpperCase()}_CONFIG,`,
      `    tensor_model_parallel_size=${pick(r, [1, 2, 4])},`,
      `    context_parallel_size=${pick(r, CPS)},`,
      `    global_batch_size=${pick(r, [64, 128, 256])},`,
      ")",
      "",
    );
  }
  return lines;
}

function pythonModule(r: () => number, i: number): SourceFile {
  const family = `fam${i}`;
  const lines = header(r, family);
  const style = i % 3;
  if (style === 0) {
    const names: string[] = [];
    for (let k = 0; k < 5; k++) {
      const name = `${family}_${k}b_pretrain_${pick(r, [8, 16, 32])}gpu_h100_bf16_config`;
      names.push(name);
      lines.push(...attributeRecipe(r, name));
    }
    for (let k = 0; k < 2; k++) lines.push(...derivedRecipe(r, `${family}_long${k}_pretrain_config`, pick(r, names)));
  } else if (style === 1) {
    lines.push(...kwargsStyle(r, family, 12));
    lines.push(...workloads(r, family));
  } else {
    for (let k = 0; k < 7; k++) lines.push(...legacyRecipe(r, `${family}_legacy${k}_pretrain_config`));
  }
  return { path: `src/megatron/bridge/recipes/${family}/h100/${family}.py`, text: lines.join("\n") + "\n" };
}

function yamlFile(r: () => number, i: number): SourceFile {
  const cp = pick(r, CPS);
  const lines = [
    "# Override file generated for benchmarking",
    "model:",
    `  context_parallel_size: ${cp}`,
    `  cp_comm_type: ${pick(r, ["p2p", "a2a", "a2a+p2p"])}`,
    ...(r() < 0.5 ? [`  hierarchical_context_parallel_sizes: [2, ${Math.max(1, cp / 2)}]`] : []),
    "  tensor_model_parallel_size: 2",
    `  seq_length: ${pick(r, [8192, 16384, 8190])}`,
    "dataset:",
    `  seq_length: ${pick(r, [8192, 16384])}`,
    "train:",
    "  global_batch_size: 128",
    "  train_iters: 1000",
    "dist:",
    `  use_decentralized_pg: ${r() < 0.2 ? "true" : "false"}`,
  ];
  for (let k = 0; k < 30; k++) lines.push(`  # padding comment ${k}: tuning notes for run ${i}`);
  return { path: `examples/conf/override_${i}.yaml`, text: lines.join("\n") + "\n" };
}

function shellFile(r: () => number, i: number): SourceFile {
  const cp = pick(r, CPS);
  const lines = [
    "#!/usr/bin/env bash",
    "set -euo pipefail",
    `CP=${cp}`,
    `CLI_OVERRIDES="train.train_iters=1000 logger.log_interval=1"`,
    "uv run python -m torch.distributed.run --nproc_per_node=8 scripts/training/run_recipe.py \\",
    `    --recipe fam0_long${i % 4}_pretrain_config \\`,
    "    -cp $CP \\",
    `    model.cp_comm_type=${pick(r, ["a2a+p2p", "p2p", "a2a"])} \\`,
    `    "model.hierarchical_context_parallel_sizes=[2,${Math.max(1, cp / 2)}]" \\`,
    "    $CLI_OVERRIDES",
    "",
    "torchrun --nproc_per_node 8 pretrain_gpt.py \\",
    `    --context-parallel-size ${cp} --cp-comm-type a2a+p2p \\`,
    "    --hierarchical-context-parallel-sizes 2 2 \\",
    "    --seq-length 8192 --num-attention-heads 32 --num-query-groups 8 \\",
    "    --tensor-model-parallel-size 1",
  ];
  for (let k = 0; k < 20; k++) lines.push(`echo "step ${k}"  # filler line ${k}`);
  return { path: `scripts/training/launch_${i}.sh`, text: lines.join("\n") + "\n" };
}

export interface Corpus {
  files: SourceFile[];
  lines: number;
  bytes: number;
}

export function generateCorpus(pythonFiles = 355, yamlFiles = 60, shellFiles = 60, seed = 20261130): Corpus {
  const r = rng(seed);
  const files: SourceFile[] = [];
  for (let i = 0; i < pythonFiles; i++) files.push(pythonModule(r, i));
  for (let i = 0; i < yamlFiles; i++) files.push(yamlFile(r, i));
  for (let i = 0; i < shellFiles; i++) files.push(shellFile(r, i));
  let lines = 0;
  let bytes = 0;
  for (const f of files) {
    bytes += f.text.length;
    for (let i = 0; i < f.text.length; i++) if (f.text.charCodeAt(i) === 10) lines++;
  }
  return { files, lines, bytes };
}
