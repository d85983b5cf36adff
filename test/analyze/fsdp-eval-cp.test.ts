// HCP022 on Megatron-FSDP and HCP023 with an eval CP equal to the training CP, judged in the
// order upstream runs its checks (Megatron-Bridge HEAD 067f987, training/config.py):
// - validate() runs the Megatron-FSDP branch (config.py:1484-1485) before the finetuning CP
//   check (config.py:1591-1596); the V1 branch sets ddp.average_in_collective = False when
//   `average_in_collective and not disable_symmetric_registration` (config.py:1094-1096);
//   megatron_fsdp_version defaults to 1 and disable_symmetric_registration to False
//   (Megatron-Core distributed_data_parallel_config.py at Bridge's pin 2a75ac1, lines 93, 171).
// - eval_context_parallel_size applies only "If set and different from
//   model.context_parallel_size" (config.py:164-169).
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import type { Finding } from "../../src/core/model/finding.ts";
import type { SourceFile } from "../../src/core/model/source.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";
import { hcpBot } from "../support/cli.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

/** Bridge's recipes/common.py, reduced to what the checks read. */
const COMMON: SourceFile = {
  path: "src/megatron/bridge/recipes/common.py",
  text: `def _sft_common() -> ConfigContainer:
    cfg = ConfigContainer(
        model=None,
        ddp=DistributedDataParallelConfig(average_in_collective=True),
        dataset=GPTSFTDatasetConfig(seq_length=4096),
        dist=DistributedInitConfig(),
    )
    return cfg


def _pretrain_common() -> ConfigContainer:
    cfg = ConfigContainer(model=None, dataset=GPTDatasetConfig(seq_length=4096), dist=DistributedInitConfig())
    return cfg
`,
};

const SFT = [
  "cfg = _sft_common()",
  "cfg.model = GPTModelProvider()",
  "cfg.model.context_parallel_size = 2",
  "cfg.model.calculate_per_token_loss = True",
];
const recipe = (name: string, lines: readonly string[]): SourceFile => ({
  path: "src/megatron/bridge/recipes/fam/h100/fam.py",
  text: `from megatron.bridge.recipes.common import _pretrain_common, _sft_common\n\n\ndef ${name}() -> ConfigContainer:\n${[...lines, "return cfg"].map((l) => `    ${l}`).join("\n")}\n`,
});
const run = (file: SourceFile, rule: string): Finding[] => analyze([COMMON, file], { python }).findings.filter((f) => f.ruleId === rule);

describe("HCP022 after the Megatron-FSDP branch", () => {
  it("plain DDP: average_in_collective = True with a fine-tuning dataset and CP 2 is an error", () => {
    expect(run(recipe("a_sft_config", SFT), "HCP022").map((f) => f.severity)).toEqual(["error"]);
  });

  it("Megatron-FSDP (ddp or dist flag) turns it off first: no finding", () => {
    expect(run(recipe("b_sft_config", [...SFT, "cfg.ddp.use_megatron_fsdp = True"]), "HCP022")).toEqual([]);
    expect(run(recipe("c_sft_config", [...SFT, "cfg.dist.use_megatron_fsdp = True"]), "HCP022")).toEqual([]);
    expect(run(recipe("d_sft_config", [...SFT, "cfg.ddp.use_megatron_fsdp = True", "cfg.ddp.megatron_fsdp_version = 1"]), "HCP022")).toEqual([]);
  });

  it("the FSDP branch keeps it with disable_symmetric_registration = True or on the V2 path", () => {
    const kept = [...SFT, "cfg.ddp.use_megatron_fsdp = True", "cfg.ddp.disable_symmetric_registration = True"];
    expect(run(recipe("e_sft_config", kept), "HCP022").map((f) => f.message)).toEqual([expect.stringContaining("average_in_collective must be False")]);
    expect(run(recipe("f_sft_config", [...SFT, "cfg.ddp.use_megatron_fsdp = True", "cfg.ddp.megatron_fsdp_version = 2"]), "HCP022")).toHaveLength(1);
  });

  it("FSDP not known (a value from a call): not judged; per-token loss still is", () => {
    const lines = [...SFT.slice(0, -1), "cfg.model.calculate_per_token_loss = False", "cfg.ddp.use_megatron_fsdp = pick()"];
    expect(run(recipe("g_sft_config", lines), "HCP022").map((f) => f.message)).toEqual([expect.stringContaining("calculate_per_token_loss must be True")]);
  });
});

const HCP = ["cfg = _pretrain_common()", "cfg.model = GPTModelProvider()", "cfg.model.context_parallel_size = 4", 'cfg.model.cp_comm_type = "a2a+p2p"', "cfg.model.hierarchical_context_parallel_sizes = [2, 2]"];

describe("HCP023 only when eval CP differs", () => {
  it("equal to context_parallel_size: a no-op upstream, no finding", () => {
    expect(run(recipe("h_pretrain_config", [...HCP, "cfg.dist.eval_context_parallel_size = 4"]), "HCP023")).toEqual([]);
  });
  it("different: the warning stays", () => {
    expect(run(recipe("i_pretrain_config", [...HCP, "cfg.dist.eval_context_parallel_size = 2"]), "HCP023").map((f) => f.severity)).toEqual(["warning"]);
  });
  it("training CP not known: the warning says so", () => {
    const lines = [...HCP.filter((l) => !l.includes("context_parallel_size =")), "cfg.model.context_parallel_size = pick()", "cfg.dist.eval_context_parallel_size = 2"];
    expect(run(recipe("j_pretrain_config", lines), "HCP023")[0]?.message).toMatch(/context_parallel_size is not known here; if it equals this value, upstream ignores/);
  });
});

describe("hcp-bot lint", () => {
  it("no HCP022 on an FSDP fine-tuning recipe, no HCP023 on an equal eval CP; the plain-DDP twin keeps its error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-fsdp-"));
    const recipes = join(dir, "src", "megatron", "bridge", "recipes");
    mkdirSync(recipes, { recursive: true });
    writeFileSync(join(recipes, "common.py"), COMMON.text);
    const file = join(recipes, "fam.py");
    const text = [recipe("fsdp_sft_config", [...SFT, "cfg.ddp.use_megatron_fsdp = True"]), recipe("ddp_sft_config", SFT), recipe("eq_pretrain_config", [...HCP, "cfg.dist.eval_context_parallel_size = 4"])]
      .map((r) => r.text)
      .join("\n\n");
    writeFileSync(file, text);
    const out = await hcpBot(["lint", file, join(recipes, "common.py"), "--format", "json"]);
    const report = JSON.parse(out.stdout) as { findings: Array<{ ruleId: string; unitName: string }> };
    const named = report.findings.filter((f) => f.ruleId === "HCP022" || f.ruleId === "HCP023").map((f) => `${f.ruleId} ${f.unitName}`);
    expect(named).toEqual(["HCP022 ddp_sft_config"]);
    expect(out.code).toBe(1);
  });
});
