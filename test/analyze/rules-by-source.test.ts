// Every rule, end to end through the real extractors: one positive and one negative case
// in each source kind where the rule applies (Python recipe, YAML override file, Hydra
// overrides in a shell script, the same in a Markdown code block, Megatron-LM flags).
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { renderHydra, renderMlm, renderPython, renderYaml } from "../../src/core/model/edits.ts";
import type { Known } from "../../src/core/model/settings.ts";
import type { SourceFile } from "../../src/core/model/source.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

type Kind = "python" | "yaml" | "hydra" | "markdown" | "mlm";
type Config = Record<string, Known>;

interface Case {
  rule: string;
  kinds: Kind[];
  positive: Config;
  negative: Config;
  /** "sft" puts the case in a fine-tuning recipe / launch. */
  mode?: "sft";
  /** Transformer Engine version pinned in a uv.lock analyzed alongside. */
  te?: string;
}

const ALL: Kind[] = ["python", "yaml", "hydra", "markdown", "mlm"];
const NO_MLM: Kind[] = ["python", "yaml", "hydra", "markdown"];

const HCP = { "model.context_parallel_size": 4, "model.cp_comm_type": "a2a+p2p", "model.hierarchical_context_parallel_sizes": [2, 2] };

const CASES: Case[] = [
  {
    rule: "HCP001",
    kinds: ALL,
    positive: { "model.context_parallel_size": 4, "model.cp_comm_type": "a2a+p2p" },
    negative: HCP,
  },
  { rule: "HCP002", kinds: ALL, positive: { ...HCP, "model.context_parallel_size": 8 }, negative: { ...HCP, "model.context_parallel_size": 8, "model.hierarchical_context_parallel_sizes": [4, 2] } },
  { rule: "HCP003", kinds: ALL, positive: { ...HCP, "model.context_parallel_size": 8, "model.hierarchical_context_parallel_sizes": [2, 2, 2] }, negative: { ...HCP, "model.context_parallel_size": 8, "model.hierarchical_context_parallel_sizes": [4, 2] } },
  { rule: "HCP004", kinds: ALL, positive: { ...HCP, "model.context_parallel_size": 2, "model.hierarchical_context_parallel_sizes": [2, 1] }, negative: HCP },
  { rule: "HCP005", kinds: ALL, positive: { ...HCP, "model.cp_comm_type": "p2p" }, negative: HCP },
  { rule: "HCP006", kinds: NO_MLM, positive: { ...HCP, "dist.use_decentralized_pg": true }, negative: { ...HCP, "dist.use_decentralized_pg": false } },
  { rule: "HCP007", kinds: ALL, positive: { ...HCP, "model.seq_length": 8190, "dataset.seq_length": 8190 }, negative: { ...HCP, "model.seq_length": 8192, "dataset.seq_length": 8192 } },
  { rule: "HCP008", kinds: ["python", "yaml"], positive: { ...HCP, "model.seq_length": 8192, "dataset.seq_length": 4096 }, negative: { ...HCP, "model.seq_length": 8192, "dataset.seq_length": 8192 } },
  { rule: "HCP008", kinds: ["hydra", "markdown"], positive: { ...HCP, "model.seq_length": 16384 }, negative: { ...HCP, "model.seq_length": 16384, "dataset.seq_length": 16384 } },
  {
    rule: "HCP009",
    kinds: ALL,
    positive: { ...HCP, "model.context_parallel_size": 8, "model.hierarchical_context_parallel_sizes": [4, 2], "model.num_attention_heads": 32, "model.num_query_groups": 2 },
    // TP is set so the heads per TP rank are known everywhere (an override file alone would leave it to its recipe: info).
    negative: { ...HCP, "model.context_parallel_size": 8, "model.hierarchical_context_parallel_sizes": [2, 4], "model.tensor_model_parallel_size": 1, "model.num_attention_heads": 32, "model.num_query_groups": 2 },
  },
  { rule: "HCP010", kinds: NO_MLM, te: "2.18.0+e7c550c5", positive: { ...HCP, "model.qkv_format": "thd" }, negative: { ...HCP, "model.qkv_format": "sbhd" } },
  { rule: "HCP011", kinds: ["python", "yaml", "hydra", "markdown"], positive: { ...HCP, "model.window_size": [4096, 0] }, negative: { ...HCP, "model.cp_comm_type": "a2a", "model.hierarchical_context_parallel_sizes": null, "model.window_size": [4096, 0] } },
  {
    rule: "HCP012",
    kinds: ALL,
    positive: { "model.context_parallel_size": 2, "model.num_layers": 4, "model.cp_comm_type": ["p2p", "p2p", "a2a"] },
    negative: { "model.context_parallel_size": 2, "model.num_layers": 4, "model.cp_comm_type": ["p2p", "p2p", "a2a", "a2a"] },
  },
  { rule: "HCP013", kinds: ALL, positive: { "model.context_parallel_size": 2, "model.cp_comm_type": "allgather" }, negative: { "model.context_parallel_size": 2, "model.cp_comm_type": "all_gather" } },
  { rule: "HCP014", kinds: ALL, te: "1.11.0", positive: HCP, negative: { ...HCP, "model.cp_comm_type": "a2a", "model.hierarchical_context_parallel_sizes": null } },
  {
    rule: "HCP017",
    // A world size is known on launch lines only (--nproc_per_node: 4 for run_recipe, 8 for Megatron-LM here).
    kinds: ["hydra", "markdown", "mlm"],
    positive: { "model.tensor_model_parallel_size": 2, "model.pipeline_model_parallel_size": 1, "model.context_parallel_size": 8 },
    negative: { "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1, "model.context_parallel_size": 4 },
  },
  { rule: "HCP016", kinds: ALL, positive: { "model.context_parallel_size": 2, "model.transformer_impl": "local" }, negative: { "model.context_parallel_size": 2, "model.transformer_impl": "transformer_engine" } },
  { rule: "HCP018", kinds: ALL, positive: { ...HCP, "model.tensor_model_parallel_size": 8 }, negative: { ...HCP, "model.tensor_model_parallel_size": 2 } },
  { rule: "HCP020", kinds: ALL, positive: { "model.context_parallel_size": 1, "model.cp_comm_type": "a2a+p2p" }, negative: { "model.context_parallel_size": 1, "model.cp_comm_type": "a2a" } },
  { rule: "HCP021", kinds: ALL, positive: { ...HCP, "model.hybrid_context_parallel": true }, negative: HCP },
  {
    rule: "HCP022",
    // Only a recipe over fine-tuning data: an override file does not say what data it uses, and
    // run_recipe launch lines get both settings forced by run_recipe itself.
    kinds: ["python"],
    mode: "sft",
    positive: { ...HCP, "model.calculate_per_token_loss": false },
    negative: { ...HCP, "model.calculate_per_token_loss": true, "ddp.average_in_collective": false },
  },
  { rule: "HCP023", kinds: NO_MLM, positive: { ...HCP, "dist.eval_context_parallel_size": 2 }, negative: { ...HCP, "dist.eval_context_parallel_size": null } },
];

function recipeName(c: Case): string {
  return c.mode === "sft" ? "case_sft_config" : "case_pretrain_config";
}

function python(c: Case, config: Config): string {
  const body = Object.entries(config).map(([k, v]) => `    cfg.${k} = ${renderPython(v)}`);
  const common = c.mode === "sft" ? "_sft_common" : "_pretrain_common";
  // Bridge's fine-tuning checks key on the dataset class, so an SFT case names one.
  const dataset = c.mode === "sft" ? ["    cfg.dataset = GPTSFTDatasetConfig(seq_length=2048)"] : [];
  return [`def ${recipeName(c)}():`, `    cfg = ${common}()`, ...dataset, ...body, "    return cfg", ""].join("\n");
}

function yaml(config: Config): string {
  const sections = new Map<string, string[]>();
  for (const [k, v] of Object.entries(config)) {
    const [section, field] = k.split(".") as [string, string];
    sections.set(section, [...(sections.get(section) ?? []), `  ${field}: ${renderYaml(v)}`]);
  }
  return [...sections].flatMap(([s, lines]) => [`${s}:`, ...lines]).join("\n") + "\n";
}

function hydraLine(c: Case, config: Config): string {
  const words = Object.entries(config).map(([k, v]) => {
    const w = `${k}=${renderHydra(v)}`;
    return /[\[\]]/.test(w) ? `"${w}"` : w;
  });
  const mode = c.mode === "sft" ? " --mode sft" : "";
  return `uv run python -m torch.distributed.run --nproc_per_node=4 scripts/training/run_recipe.py --recipe ${recipeName(c)}${mode} \\\n    ${words.join(" \\\n    ")}\n`;
}

function mlm(config: Config): string {
  const flags = Object.entries(config).map(([k, v]) => {
    const flag = `--${k.slice(k.indexOf(".") + 1).replace(/_/g, "-")}`;
    if (typeof v === "boolean") return v ? flag : "";
    return `${flag} ${renderMlm(v)}`;
  });
  return `torchrun --nproc_per_node 8 pretrain_gpt.py \\\n    ${flags.filter(Boolean).join(" \\\n    ")}\n`;
}

function files(kind: Kind, c: Case, config: Config): SourceFile[] {
  const out: SourceFile[] = [];
  switch (kind) {
    case "python":
      out.push({ path: "recipes/case.py", text: python(c, config) });
      break;
    case "yaml":
      out.push({ path: "conf/case.yaml", text: yaml(config) });
      break;
    case "hydra":
      out.push({ path: "scripts/case.sh", text: `#!/usr/bin/env bash\n${hydraLine(c, config)}` });
      break;
    case "markdown":
      out.push({ path: "docs/case.md", text: `# Running it\n\nLaunch with:\n\n\`\`\`bash\n${hydraLine(c, config)}\`\`\`\n` });
      break;
    case "mlm":
      out.push({ path: "scripts/mlm.sh", text: mlm(config) });
      break;
  }
  if (c.te) out.push({ path: "uv.lock", text: `[[package]]\nname = "transformer-engine"\nversion = "${c.te}"\n` });
  return out;
}

let language: Language;
beforeAll(async () => {
  language = await loadPythonLanguage();
});

describe.each(CASES)("$rule", (c) => {
  it.each(c.kinds)(`fires on a %s source that breaks it`, (kind) => {
    const input = files(kind, c, c.positive);
    const report = analyze(input, { python: language });
    const hits = report.findings.filter((f) => f.ruleId === c.rule);
    expect(hits.length, `${c.rule} on:\n${input[0]!.text}\nfound: ${report.findings.map((f) => f.ruleId).join(", ")}`).toBeGreaterThan(0);
    expect(input.map((f) => f.path)).toContain(hits[0]!.location.file);
    expect(hits[0]!.message.length).toBeGreaterThan(40);
  });

  it.each(c.kinds)(`stays silent on a %s source that is right`, (kind) => {
    const input = files(kind, c, c.negative);
    const report = analyze(input, { python: language });
    expect(
      report.findings.filter((f) => f.ruleId === c.rule),
      `${c.rule} on:\n${input[0]!.text}`,
    ).toEqual([]);
  });
});
