// Issue 27.5: the NVLink domain a recipe or launch script states, read before the recipe's
// name, the hardware folder and the default. Every form below is one Megatron-Bridge uses
// (HEAD 067f987, `git grep NVLINK_DOMAIN_SIZE`):
//   perf_recipes/<family>/<gpu>/*.py    cfg.env_vars = {**COMMON_PERF_ENV_VARS, ..., "NVLINK_DOMAIN_SIZE": 72, ...}
//                                       (e.g. perf_recipes/gpt_oss/gb200/gpt_oss.py:68; 175 times 72, 104 times 8)
//   recipes/nemotronh/gb200/nemotron_3_nano.py:178   cfg.env_vars["NVLINK_DOMAIN_SIZE"] = 72
//   Bridge's recipe-usage guide (docs folder, lines 305-315)   cfg.env_vars.update({..., "NVLINK_DOMAIN_SIZE": 72, ...})
//   examples/models/stepfun/step35/slurm_pretrain.sh:95   export NVLINK_DOMAIN_SIZE=72
// A stated value outranks the name only when the unit's own code states it: a gb200 recipe
// that starts from an h100 builder inherits that builder's 8, and its name (72) wins.
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import type { SourceFile } from "../../src/core/model/source.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

// TP 1 × a2a 12: inside a 72-GPU domain, across two 8-GPU nodes.
const LAYOUT = [
  "cfg.model = GPTModelProvider()",
  "cfg.model.tensor_model_parallel_size = 1",
  "cfg.model.context_parallel_size = 24",
  'cfg.model.cp_comm_type = "a2a+p2p"',
  "cfg.model.hierarchical_context_parallel_sizes = [12, 2]",
];
const indent = (lines: string[]) => lines.map((l) => `    ${l}`).join("\n");
const recipe = (name: string, lines: string[], start = "cfg = _pretrain_common()") =>
  `def ${name}() -> ConfigContainer:\n${indent([start, ...LAYOUT, ...lines, "return cfg"])}\n`;

function hcp018(files: SourceFile[]) {
  const report = analyze(files, { python });
  return { findings: report.findings.filter((f) => f.ruleId === "HCP018"), units: report.units };
}
const py = (text: string, path = "team/recipes/fam.py"): SourceFile => ({ path, text: `from megatron.bridge.perf_recipes.environment import COMMON_PERF_ENV_VARS\n\n${text}` });

describe("env_vars[\"NVLINK_DOMAIN_SIZE\"] in a recipe", () => {
  it.each([
    ["a dict literal after a ** splat", 'cfg.env_vars = {**COMMON_PERF_ENV_VARS, "NCCL_NVLS_ENABLE": 1, "NVLINK_DOMAIN_SIZE": 72, "USE_MNNVL": 1}'],
    ["an item assignment", 'cfg.env_vars["NVLINK_DOMAIN_SIZE"] = 72'],
    ["update() with a string value", 'cfg.env_vars.update({"NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN": 64, "NVLINK_DOMAIN_SIZE": "72"})'],
  ])("%s: 72 GPUs, so a2a 12 raises no HCP018", (_form, line) => {
    const { findings, units } = hcp018([py(recipe("fam_nvl_config", [line]))]);
    expect(findings).toEqual([]);
    expect(units[0]!.nvlinkDomain).toEqual({ gpus: 72, source: 'env_vars["NVLINK_DOMAIN_SIZE"] = 72 at team/recipes/fam.py:10' });
  });

  it("without it the 8-GPU default applies and HCP018 fires (so the cases above can fail)", () => {
    const { findings } = hcp018([py(recipe("fam_nvl_config", []))]);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toContain("the default for 8-GPU H100/H200 nodes");
  });

  it("8 stated in a gb200 folder outranks the folder; the message names the line", () => {
    const { findings } = hcp018([py(recipe("fam_nvl_config", ['cfg.env_vars = {"NVLINK_DOMAIN_SIZE": 8}']), "src/megatron/bridge/perf_recipes/fam/gb200/fam.py")]);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toContain('the 8 GPUs of one NVLink domain (env_vars["NVLINK_DOMAIN_SIZE"] = 8 at src/megatron/bridge/perf_recipes/fam/gb200/fam.py:10)');
  });

  it("a value that is not a positive whole number says nothing", () => {
    for (const v of ["0", '"seventy-two"', 'os.environ.get("NVLINK_DOMAIN_SIZE", 72)', "-8", '"72 GPUs"']) {
      const { units } = hcp018([py(recipe("fam_nvl_config", [`cfg.env_vars["NVLINK_DOMAIN_SIZE"] = ${v}`]))]);
      expect(units[0]!.nvlinkDomain, v).toBeUndefined();
    }
  });

  it("stated by a base the recipe starts from: used before the folder, but the recipe's own name outranks it", () => {
    const base = `def _h100_base():\n${indent(["cfg = _pretrain_common()", 'cfg.env_vars = {"NVLINK_DOMAIN_SIZE": 8}', "return cfg"])}\n`;
    const text = [base, recipe("fam_8b_pretrain_64gpu_gb200_bf16_config", [], "cfg = _h100_base()"), recipe("fam_plain_config", [], "cfg = _h100_base()")].join("\n");
    const { findings, units } = hcp018([py(text, "src/megatron/bridge/perf_recipes/fam/gb200/fam.py")]);
    const byName = new Map(units.map((u) => [u.name, u.nvlinkDomain]));
    expect(byName.get("fam_8b_pretrain_64gpu_gb200_bf16_config")?.gpus).toBe(72);
    expect(byName.get("fam_plain_config")).toMatchObject({ gpus: 8, inherited: true });
    expect(findings.map((f) => f.unitId)).toEqual(["src/megatron/bridge/perf_recipes/fam/gb200/fam.py::fam_plain_config"]);
  });
});

describe("NVLINK_DOMAIN_SIZE in a launch script", () => {
  const launch = (prefix: string[]) =>
    ["#!/bin/bash", ...prefix, "torchrun --nproc_per_node 4 --nnodes 6 pretrain_gpt.py \\", "    --context-parallel-size 24 --cp-comm-type a2a+p2p \\", "    --hierarchical-context-parallel-sizes 12 2", ""].join("\n");
  it("export NVLINK_DOMAIN_SIZE=72 before the command: 72 GPUs, no HCP018", () => {
    const { findings, units } = hcp018([{ path: "run.sh", text: launch(["export NVLINK_DOMAIN_SIZE=72"]) }]);
    expect(findings).toEqual([]);
    expect(units[0]!.nvlinkDomain).toEqual({ gpus: 72, source: "NVLINK_DOMAIN_SIZE=72 at run.sh:2" });
  });
  it("exported after the command says nothing about it; without it HCP018 fires", () => {
    const after = launch([]) + "export NVLINK_DOMAIN_SIZE=72\n";
    expect(hcp018([{ path: "run.sh", text: after }]).findings).toHaveLength(1);
    expect(hcp018([{ path: "run.sh", text: launch([]) }]).findings).toHaveLength(1);
  });
  it("a value from elsewhere (${NVLINK:-72} with NVLINK unset is 72; $UNSET is not known)", () => {
    expect(hcp018([{ path: "run.sh", text: launch(["export NVLINK_DOMAIN_SIZE=${NVLINK:-72}"]) }]).findings).toEqual([]);
    expect(hcp018([{ path: "run.sh", text: launch(["export NVLINK_DOMAIN_SIZE=$UNSET_SIZE"]) }]).findings).toHaveLength(1);
  });
});
