// Findings land where the mistake is: a derived recipe that starts from a base recipe and
// changes only one side of an inconsistency is reported in the derived recipe, at the line
// that produced it, never on the base recipe's line. And each finding names the launcher
// that really runs the recipe (Bridge HEAD 067f987): flat perf recipes run through
// scripts/performance/setup_experiment.py -> bootstrap.py -> run_script.py, whose
// set_user_overrides (utils/overrides.py) rebuilds the default mock dataset at
// model.seq_length; other recipes through scripts/training/run_recipe.py, whose
// recipe_runner.sync_model_dataset_sequence_length copies dataset.seq_length into the model.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

const BASE_PATH = "src/megatron/bridge/recipes/fam/h100/fam.py";
const BASE = `from megatron.bridge.recipes.common import _pretrain_common


def fam_20b_pretrain_16gpu_h100_bf16_config() -> ConfigContainer:
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider()
    cfg.model.seq_length = 4096
    cfg.dataset.seq_length = 4096
    return cfg
`;

const HELPERS_PATH = "src/megatron/bridge/perf_recipes/fam/common.py";
const HELPERS = `def _apply_fam_common(cfg):
    cfg.model.seq_length = 8192
`;

const PERF_PATH = "src/megatron/bridge/perf_recipes/fam/b300/fam.py";
const PERF = `from megatron.bridge.recipes.fam.h100.fam import fam_20b_pretrain_16gpu_h100_bf16_config
from megatron.bridge.perf_recipes.fam.common import _apply_fam_common


def fam_20b_pretrain_8gpu_b300_nvfp4_config() -> ConfigContainer:
    cfg = fam_20b_pretrain_16gpu_h100_bf16_config()
    cfg.model.seq_length = 8192
    return cfg


def fam_20b_pretrain_8gpu_b300_fp8mx_config() -> ConfigContainer:
    cfg = fam_20b_pretrain_16gpu_h100_bf16_config()
    cfg.train.global_batch_size = 8
    _apply_fam_common(cfg)
    return cfg


def fam_20b_pretrain_8gpu_b300_bf16_config() -> ConfigContainer:
    cfg = fam_20b_pretrain_16gpu_h100_bf16_config()
    cfg.model.context_parallel_size = 2
    return cfg
`;

const LIB_PATH = "src/megatron/bridge/recipes/fam/b300/fam.py";
const LIB = `from megatron.bridge.recipes.fam.h100.fam import fam_20b_pretrain_16gpu_h100_bf16_config


def fam_20b_pretrain_8gpu_b300_bf16_config() -> ConfigContainer:
    cfg = fam_20b_pretrain_16gpu_h100_bf16_config()
    cfg.model.seq_length = 16384
    return cfg
`;

interface JsonFinding {
  ruleId: string;
  severity: string;
  unitName: string;
  message: string;
  location: { file: string; range: { start: { line: number } } };
}

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hcp-derived-"));
  writeFileSync(join(dir, "pyproject.toml"), "[project]\nname = 'fixture'\n");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function hcp008(files: Record<string, string>): Promise<JsonFinding[]> {
  const dir = tree(files);
  const out = await hcpBot(["lint", ".", "--format", "json", "--select", "HCP008"], { cwd: dir });
  const report = JSON.parse(out.stdout) as { findings: JsonFinding[] };
  return report.findings;
}

describe("hcp-bot lint: a derived recipe's inconsistency is reported in the derived recipe", () => {
  it("perf recipe on an h100 base that sets only model.seq_length: at that line, a warning naming the perf launcher", async () => {
    const findings = await hcp008({ [BASE_PATH]: BASE, [HELPERS_PATH]: HELPERS, [PERF_PATH]: PERF });
    // Nothing on the base recipe: it is consistent on its own, and the user should not change it.
    expect(findings.filter((f) => f.location.file === BASE_PATH)).toEqual([]);
    const direct = findings.find((f) => f.unitName === "fam_20b_pretrain_8gpu_b300_nvfp4_config");
    expect(direct?.location.file).toBe(PERF_PATH);
    expect(direct?.location.range.start.line).toBe(7); // cfg.model.seq_length = 8192
    expect(direct?.severity).toBe("warning");
    expect(direct?.message).toContain("scripts/performance/run_script.py (started by scripts/performance/setup_experiment.py)");
    expect(direct?.message).toContain("rebuilds the dataset at model.seq_length");
    expect(direct?.message).toContain("so a benchmark trains at 8192");
    expect(direct?.message).toContain("scripts/training/run_recipe.py, which also runs benchmark recipes by exact name, instead overwrites model.seq_length with 4096");
  });

  it("set through a helper: at the helper's call in the derived recipe, not in the helper or the base", async () => {
    const findings = await hcp008({ [BASE_PATH]: BASE, [HELPERS_PATH]: HELPERS, [PERF_PATH]: PERF });
    const viaHelper = findings.find((f) => f.unitName === "fam_20b_pretrain_8gpu_b300_fp8mx_config");
    expect(viaHelper?.location.file).toBe(PERF_PATH);
    expect(viaHelper?.location.range.start.line).toBe(14); // _apply_fam_common(cfg)
    // The recipe that changes neither length has nothing to report.
    expect(findings.filter((f) => f.unitName === "fam_20b_pretrain_8gpu_b300_bf16_config")).toEqual([]);
    expect(findings).toHaveLength(2);
  });

  it("a library recipe outside perf_recipes/: an error at the derived line, naming scripts/training/run_recipe.py", async () => {
    const findings = await hcp008({ [BASE_PATH]: BASE, [LIB_PATH]: LIB });
    expect(findings).toHaveLength(1);
    const [f] = findings;
    expect(f?.location.file).toBe(LIB_PATH);
    expect(f?.location.range.start.line).toBe(6);
    expect(f?.severity).toBe("error");
    expect(f?.message).toContain("scripts/training/run_recipe.py instead overwrites model.seq_length with 4096");
    expect(f?.message).not.toContain("scripts/performance");
  });

  it("a base that is inconsistent on its own: the findings stay on the base's line, for the base and for each recipe built on it", async () => {
    const brokenBase = BASE.replace("cfg.dataset.seq_length = 4096", "cfg.dataset.seq_length = 2048");
    const derived = LIB.replace("    cfg.model.seq_length = 16384\n", "    cfg.train.global_batch_size = 8\n");
    const findings = await hcp008({ [BASE_PATH]: brokenBase, [LIB_PATH]: derived });
    expect(findings.map((f) => `${f.unitName} ${f.location.file}:${f.location.range.start.line}`).sort()).toEqual([
      `fam_20b_pretrain_16gpu_h100_bf16_config ${BASE_PATH}:8`,
      `fam_20b_pretrain_8gpu_b300_bf16_config ${BASE_PATH}:8`,
    ]);
  });

  it("a recipe of a recipe (an alias for another GPU): where its base reports it, never on the h100 recipe two levels down", async () => {
    // Bridge 067f987 perf_recipes/gpt_oss/vr200/gpt_oss.py:33-35: gpt_oss_20b_pretrain_8gpu_vr200_nvfp4_config starts
    // from the gb300 recipe, which starts from the h100 library recipe and calls _apply_gpt_oss_20b_common_configs
    // (model.seq_length = 8192, perf_recipes/gpt_oss/common.py:100) at gb300/gpt_oss.py:46.
    const ALIAS_PATH = "src/megatron/bridge/perf_recipes/fam/vr200/fam.py";
    const ALIAS = `from megatron.bridge.perf_recipes.fam.b300.fam import fam_20b_pretrain_8gpu_b300_fp8mx_config


def fam_20b_pretrain_8gpu_vr200_fp8mx_config() -> ConfigContainer:
    cfg = fam_20b_pretrain_8gpu_b300_fp8mx_config()
    cfg.env_vars = {"NVLINK_DOMAIN_SIZE": 72}
    return cfg
`;
    const findings = await hcp008({ [BASE_PATH]: BASE, [HELPERS_PATH]: HELPERS, [PERF_PATH]: PERF, [ALIAS_PATH]: ALIAS });
    expect(findings.filter((f) => f.location.file === BASE_PATH)).toEqual([]);
    // The alias's finding is the b300 recipe's own (at its _apply_fam_common(cfg) call), so the two are one.
    expect(findings.map((f) => `${f.location.file}:${f.location.range.start.line}`).sort()).toEqual([`${PERF_PATH}:14`, `${PERF_PATH}:7`]);
  });
});
