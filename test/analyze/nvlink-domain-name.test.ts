// GPUs per NVLink domain from the recipe's own name, as upstream names flat recipes:
// recipe_function_name in Megatron-Bridge recipes/utils/naming.py (HEAD 067f987) builds
// `{model}_{task}_{N}gpu_{gpu}_{precision}{variant}_config`; perf recipes for gb200/gb300/vr200
// set env_vars["NVLINK_DOMAIN_SIZE"] = 72, h100/b200/b300 8 (scripts/performance/utils/utils.py:316-327).
// The name is read before the folder, and only when it matches that scheme exactly.
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import type { SourceFile } from "../../src/core/model/source.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";
import { hcpBot } from "../support/cli.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

// TP 2 × a2a 8 = 16 GPUs: inside an NVL72 rack, across two 8-GPU nodes.
const BODY = ["cfg = _pretrain_common()", "cfg.model = GPTModelProvider()", "cfg.model.tensor_model_parallel_size = 2", "cfg.model.context_parallel_size = 12", 'cfg.model.cp_comm_type = "a2a+p2p"', "cfg.model.hierarchical_context_parallel_sizes = [6, 2]", "return cfg"];
const recipeFile = (name: string, path = "src/megatron/bridge/recipes/fam/h100/fam.py"): SourceFile => ({
  path,
  text: `def ${name}() -> ConfigContainer:\n${BODY.map((l) => `    ${l}`).join("\n")}\n`,
});
const hcp018 = (f: SourceFile) => analyze([f], { python }).findings.filter((x) => x.ruleId === "HCP018");

describe("NVLink domain from upstream's recipe naming scheme", () => {
  it("a gb200 name in an h100 folder: 72 GPUs, no HCP018 (the fix would push CP onto the slower ring)", () => {
    expect(hcp018(recipeFile("fam_8b_pretrain_64gpu_gb200_bf16_config"))).toEqual([]);
  });
  it("a b300 name in a gb200 folder: 8 GPUs, HCP018 says where the number came from", () => {
    const f = hcp018(recipeFile("fam_8b_pretrain_64gpu_b300_nvfp4_config", "src/megatron/bridge/perf_recipes/fam/gb200/fam.py"));
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toContain("from the recipe name fam_8b_pretrain_64gpu_b300_nvfp4_config");
    expect(f[0]!.message).toContain("recipes/utils/naming.py");
  });
  it("a name outside the scheme says nothing: the folder decides", () => {
    // `gb200` appears, but not as {N}gpu_{gpu}_{precision}: the h100 folder (8) decides.
    const f = hcp018(recipeFile("fam_gb200_pretrain_config"));
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toContain("from the hardware folder");
    expect(hcp018(recipeFile("fam_8b_pretrain_64gpu_gb200_fp9_config"))).toHaveLength(1);
  });
});

describe("hcp-bot lint", () => {
  it("reads the name before the folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-name-"));
    const folder = join(dir, "src", "megatron", "bridge", "recipes", "fam", "h100");
    mkdirSync(folder, { recursive: true });
    const file = join(folder, "fam.py");
    writeFileSync(file, [recipeFile("fam_8b_pretrain_64gpu_gb200_bf16_config"), recipeFile("fam_8b_pretrain_64gpu_h100_bf16_config")].map((r) => r.text).join("\n\n"));
    const out = await hcpBot(["lint", file, "--format", "json"]);
    const report = JSON.parse(out.stdout) as { findings: Array<{ ruleId: string; unitName: string }> };
    expect(report.findings.filter((f) => f.ruleId === "HCP018").map((f) => f.unitName)).toEqual(["fam_8b_pretrain_64gpu_h100_bf16_config"]);
  });
});

// r100 is a 72-GPU NVLink domain upstream: apply_target_topology_environment sets
// NVLINK_DOMAIN_SIZE 72 for {"gb200", "gb300", "vr200", "r100"} (Bridge 067f987,
// scripts/performance/utils/utils.py:322-327; the same set in utils/overrides.py:271), and
// perf_recipes/llama/r100/llama3.py names its recipes llama3_8b_pretrain_8gpu_r100_*_config.
describe("hcp-bot lint on an r100 recipe", () => {
  it("an r100 name in an h100 folder: the 72-GPU domain applies, so TP 2 × a2a 6 = 12 GPUs raises no HCP018", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-r100-"));
    const folder = join(dir, "src", "megatron", "bridge", "recipes", "fam", "h100");
    mkdirSync(folder, { recursive: true });
    const file = join(folder, "fam.py");
    writeFileSync(file, [recipeFile("llama3_8b_pretrain_64gpu_r100_bf16_config"), recipeFile("llama3_8b_pretrain_64gpu_b200_bf16_config")].map((r) => r.text).join("\n\n"));
    const out = await hcpBot(["lint", file, "--format", "json"]);
    const report = JSON.parse(out.stdout) as { findings: Array<{ ruleId: string; unitName: string }> };
    expect(report.findings.filter((f) => f.ruleId === "HCP018").map((f) => f.unitName)).toEqual(["llama3_8b_pretrain_64gpu_b200_bf16_config"]);
  });

  it("an r100 hardware folder (perf_recipes/<family>/r100/…): 72 GPUs, where the same recipe in an h100 folder gets HCP018", async () => {
    const hcp018Under = async (gpu: string) => {
      const dir = mkdtempSync(join(tmpdir(), "hcp-r100-"));
      const folder = join(dir, "src", "megatron", "bridge", "perf_recipes", "llama", gpu);
      mkdirSync(folder, { recursive: true });
      const file = join(folder, "llama3.py");
      writeFileSync(file, recipeFile("fam_custom_config").text);
      const report = JSON.parse((await hcpBot(["lint", file, "--format", "json"])).stdout) as { findings: Array<{ ruleId: string; message: string }> };
      return report.findings.filter((f) => f.ruleId === "HCP018");
    };
    expect(await hcp018Under("r100")).toEqual([]);
    const h100 = await hcp018Under("h100");
    expect(h100).toHaveLength(1);
    expect(h100[0]!.message).toContain("from the hardware folder perf_recipes/llama/h100/");
  });
});
