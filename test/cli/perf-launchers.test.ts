// Issue 27.7: each launcher modelled for the recipes it runs, through `hcp-bot lint` on a small
// tree in Megatron-Bridge's layout (HEAD 067f987, scripts/performance/):
// - setup_experiment.py -m FAMILY -mr NAME -ng N -g GPU [-c PRECISION] runs run_script.py on the
//   flat perf recipe `{mr}_{task}_{ng}gpu_{gpu}_{precision}_config` (run_script.py:100-107,
//   utils/utils.py _recipe_function_name), which rebuilds the dataset at model.seq_length;
// - with --use_recipes it runs run_recipe.py on the library recipe `{mr}_{task}_config`
//   (utils/utils.py:872-880), whose mock dataset is built at `--seq_length or 8192`
//   (run_recipe.py:97-99) while model.seq_length changes only with --seq_length (run_recipe.py:164-165);
// - scripts/training/run_recipe.py copies dataset.seq_length into model.seq_length.
// The launch lines are the README's own form (scripts/performance/README.md:69-81).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

const LIBRARY = "src/megatron/bridge/recipes/fam/fam.py";
const FLAT = "src/megatron/bridge/perf_recipes/fam/gb300/fam.py";
const LAUNCH = "examples/fam/launch.sh";

const library = (seq: number) =>
  [
    "from megatron.bridge.recipes.common import _pretrain_common",
    "",
    "",
    "def fam_8b_pretrain_config() -> ConfigContainer:",
    "    cfg = _pretrain_common()",
    "    cfg.model = GPTModelProvider()",
    `    cfg.model.seq_length = ${seq}`,
    `    cfg.dataset.seq_length = ${seq}`,
    "    cfg.model.context_parallel_size = 2",
    "    return cfg",
    "",
  ].join("\n");

// A flat GB300 recipe: CP 24 on TP 1, cp_comm_type left to the launch line.
const FLAT_RECIPE = [
  "def fam_8b_pretrain_144gpu_gb300_fp8mx_config() -> ConfigContainer:",
  "    cfg = _pretrain_common()",
  "    cfg.model = GPTModelProvider()",
  "    cfg.model.tensor_model_parallel_size = 1",
  "    cfg.model.context_parallel_size = 24",
  "    cfg.model.seq_length = 4096",
  "    cfg.dataset.seq_length = 4096",
  "    return cfg",
  "",
].join("\n");

interface Finding {
  ruleId: string;
  severity: string;
  message: string;
  unitName: string;
  location: { file: string; range: { start: { line: number } } };
  fix?: { layout?: { sizes: number[]; domainGpus?: number }; edits: { newText: string }[] };
}

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "hcp-perf-launch-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

async function lint(root: string): Promise<{ code: number | null; findings: Finding[] }> {
  const r = await hcpBot(["lint", ".", "--format", "json", "--isolated"], { cwd: root });
  expect(r.stderr).toBe("");
  return { code: r.code, findings: (JSON.parse(r.stdout) as { findings: Finding[] }).findings };
}

const launch = (...lines: string[]) => ["#!/bin/bash", ...lines, ""].join("\n");
const USE_RECIPES = "uv run python scripts/performance/setup_experiment.py --use_recipes -m fam -mr fam_8b --task pretrain -g h100 -ng 16 --account a --partition p";

describe("setup_experiment.py --use_recipes (scripts/performance/run_recipe.py)", () => {
  it("a 4096 recipe without -sl: the dataset is 8192, an error on the launch line naming that launcher, with a Hydra fix", async () => {
    const root = tree({ [LIBRARY]: library(4096), [LAUNCH]: launch(USE_RECIPES) });
    const { code, findings } = await lint(root);
    expect(code).toBe(1);
    const hcp008 = findings.filter((f) => f.ruleId === "HCP008");
    expect(hcp008).toHaveLength(1);
    const f = hcp008[0]!;
    expect(f.severity).toBe("error");
    expect(f.location.file).toBe(LAUNCH);
    expect(f.location.range.start.line).toBe(2);
    expect(f.message).toContain("scripts/performance/run_recipe.py (started by scripts/performance/setup_experiment.py --use_recipes)");
    expect(f.message).toContain("--seq_length or 8192");
    expect(f.message).not.toContain("scripts/training/run_recipe.py");
    expect(f.message).toContain("Pass -sl 4096");
    // The fix adds a Hydra override (applied after argparse) on the launch line.
    expect(f.fix!.edits.map((e) => e.newText).join("")).toContain("dataset.seq_length=4096");
  });

  it("-sl 4096 sets both; an 8192 recipe needs none; the training launcher syncs the model from the dataset", async () => {
    const root = tree({
      [LIBRARY]: library(4096),
      [LAUNCH]: launch(`${USE_RECIPES} -sl 4096`, "python scripts/training/run_recipe.py --recipe fam_8b_pretrain_config"),
    });
    expect((await lint(root)).findings.filter((f) => f.ruleId === "HCP008")).toEqual([]);
    const at8192 = tree({ [LIBRARY]: library(8192), [LAUNCH]: launch(USE_RECIPES) });
    expect((await lint(at8192)).findings.filter((f) => f.ruleId === "HCP008")).toEqual([]);
  });

  it("the fixed launch line lints clean", async () => {
    const root = tree({ [LIBRARY]: library(4096), [LAUNCH]: launch(USE_RECIPES) });
    const [f] = (await lint(root)).findings.filter((x) => x.ruleId === "HCP008");
    const text = readFileSync(join(root, LAUNCH), "utf8");
    const edit = f!.fix!.edits[0] as unknown as { range: { start: { offset: number }; end: { offset: number } }; newText: string };
    writeFileSync(join(root, LAUNCH), text.slice(0, edit.range.start.offset) + edit.newText + text.slice(edit.range.end.offset));
    expect((await lint(root)).findings.filter((x) => x.ruleId === "HCP008")).toEqual([]);
  });
});

describe("setup_experiment.py without --use_recipes (run_script.py on a flat perf recipe)", () => {
  it("resolves -mr fam_8b -ng 144 -g gb300 -c fp8_mx to fam_8b_pretrain_144gpu_gb300_fp8mx_config and judges it there (72-GPU domain from its name)", async () => {
    const line = "python scripts/performance/setup_experiment.py -m fam -mr fam_8b -g gb300 -ng 144 --gpus_per_node 4 -c fp8_mx model.cp_comm_type=a2a+p2p";
    const { findings } = await lint(tree({ [FLAT]: FLAT_RECIPE, [LAUNCH]: launch(line) }));
    const hcp001 = findings.filter((f) => f.ruleId === "HCP001");
    expect(hcp001.map((f) => f.unitName)).toEqual(["setup_experiment.py --recipe fam_8b_pretrain_144gpu_gb300_fp8mx_config on fam_8b_pretrain_144gpu_gb300_fp8mx_config"]);
    expect(hcp001[0]!.fix?.layout).toEqual({ tp: 1, sizes: [12, 2], domainGpus: 72 });
  });

  it("-sl sets model.seq_length and the dataset follows it: no HCP008 even against the recipe's 4096", async () => {
    const line = "python scripts/performance/setup_experiment.py -m fam -mr fam_8b -g gb300 -ng 144 -c fp8_mx -sl 8192";
    const { findings } = await lint(tree({ [FLAT]: FLAT_RECIPE, [LAUNCH]: launch(line) }));
    expect(findings.filter((f) => f.ruleId === "HCP008")).toEqual([]);
  });

  it("a precision or GPU count no recipe has: the recipe stays unknown, nothing is judged against the wrong one", async () => {
    const line = "python scripts/performance/setup_experiment.py -m fam -mr fam_8b -g gb300 -ng 64 model.cp_comm_type=a2a+p2p";
    const { findings } = await lint(tree({ [FLAT]: FLAT_RECIPE, [LAUNCH]: launch(line) }));
    const onLine = findings.filter((f) => f.location.file === LAUNCH);
    // CP is not known without the recipe, so HCP001's fix proposes no sizes for it.
    expect(onLine.every((f) => f.fix?.layout === undefined)).toBe(true);
    expect(onLine.map((f) => f.unitName)).not.toContain("setup_experiment.py --recipe fam_8b_pretrain_144gpu_gb300_fp8mx_config on fam_8b_pretrain_144gpu_gb300_fp8mx_config");
  });
});
