// `hcp-bot lint` never fails open and never crashes on its input (issue 15, item 10):
// unanalyzed files are exit 2 with one line naming them, special files are refused, and a
// YAML key outside ConfigContainer's tree costs only that key.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_INDEX_FORMAT } from "../../src/core/analyze/bridge-index.ts";
import { SETTING_KEYS } from "../../src/core/model/settings.ts";
import { hcpBot } from "../support/cli.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-lint-input-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HCP001 = "def broken_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = \"a2a+p2p\"\n    return cfg\n";

describe("hcp-bot lint input", () => {
  it("a file over 16 Mi characters is exit 2 with one line naming it, and the other files are still reported", async () => {
    const big = join(dir, "big_recipes.py");
    writeFileSync(big, `${"# padding\n".repeat(1_700_000)}${HCP001}`); // 17 MB of ASCII: over 16 Mi characters
    const small = join(dir, "small.py");
    writeFileSync(small, HCP001);
    const run = await hcpBot(["lint", big, small]);
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^hcp-bot: not analyzed: .*big_recipes\.py: .*over the 16777216-character limit$/);
    expect(run.stdout).toMatch(/error HCP001/); // small.py's finding is not lost
  });

  it("a file too large to read at all (sparse, 65 MB) is exit 2 without being read", async () => {
    const huge = join(dir, "huge.yaml");
    writeFileSync(huge, "");
    truncateSync(huge, 65 * 1024 * 1024);
    const run = await hcpBot(["lint", huge]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^hcp-bot: not analyzed: .*huge\.yaml: 68157440 bytes is over the 16 Mi-character limit\n$/);
  });

  it("a YAML key outside ConfigContainer's tree is ignored alone: HCP001 is still found in the rest", async () => {
    const yaml = join(dir, "override.yaml");
    writeFileSync(yaml, "experiment_name: long-context\nmodel:\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n");
    const run = await hcpBot(["lint", "--format", "json", yaml]);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { findings: { ruleId: string; location: { range: { start: { line: number } } } }[] };
    expect(out.findings.map((f) => [f.ruleId, f.location.range.start.line])).toContainEqual(["HCP001", 4]);
    // A model card's `model:` mapping without any setting is not an override file.
    const card = join(dir, "card.yaml");
    writeFileSync(card, "title: demo\nmodel:\n  hf_id: org/demo\n");
    const clean = await hcpBot(["lint", "--format", "json", card]);
    expect(clean.code).toBe(0);
    expect((JSON.parse(clean.stdout) as { configurations: number }).configurations).toBe(0);
  });

  it("refuses /dev/zero and a FIFO as special files: one line, exit 2, no stack trace", async () => {
    const zero = await hcpBot(["lint", "/dev/zero"]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toBe("hcp-bot: cannot lint /dev/zero: it is a character device, not a regular file or folder\n");
    const fifo = join(dir, "pipe.sh");
    execFileSync("mkfifo", [fifo]);
    const run = await hcpBot(["lint", fifo]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`hcp-bot: cannot lint ${fifo}: it is a FIFO (named pipe), not a regular file or folder\n`);
    expect(run.stderr).not.toMatch(/\bat \S+:\d+/);
  });
});

describe("hcp-bot lint follows builders inside the analyzed tree", () => {
  it("a folder with the builder module: the kwargs recipe is judged; the recipe file alone is judged on the kwargs handed (issue 27.10)", async () => {
    const root = join(dir, "tree");
    const family = join(root, "src/megatron/bridge/recipes/llama");
    execFileSync("mkdir", ["-p", join(family, "h100")]);
    writeFileSync(
      join(family, "common.py"),
      "def _llama3_common(context_parallel_size=1, cp_comm_type=None):\n    cfg = ConfigContainer(model=GPTModelProvider())\n    cfg.model.context_parallel_size = context_parallel_size\n    cfg.model.cp_comm_type = cp_comm_type\n    return cfg\n",
    );
    const recipeFile = join(family, "h100", "llama3.py");
    writeFileSync(
      recipeFile,
      'from megatron.bridge.recipes.llama.common import _llama3_common\n\n\ndef llama3_8b_64k_pretrain_config(**user_kwargs):\n    kw = {"context_parallel_size": 4, "cp_comm_type": "a2a+p2p"}\n    return _llama3_common(**{**kw, **user_kwargs})\n',
    );
    const tree = await hcpBot(["lint", root]);
    expect(tree.code).toBe(1);
    expect(tree.stdout).toMatch(/llama3\.py:5:\d+: error HCP001/);
    // Without the builder, a2a+p2p handed with no sizes still decides HCP001 (nothing upstream sets the sizes).
    const alone = await hcpBot(["lint", recipeFile]);
    expect(alone.code).toBe(1);
    expect(alone.stdout).toMatch(/llama3\.py:5:\d+: error HCP001/);
  });
});

describe("hcp-bot lint: input that cannot be decided never looks green", () => {
  const LAUNCH = "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config model.context_parallel_size=4 model.cp_comm_type=a2a+p2p";

  it("an integer past 2^53 beside an a2a+p2p launch line without sizes: HCP001 still found, and HCP024 names the number", async () => {
    const huge = join(dir, "huge_tp.sh");
    writeFileSync(huge, `${LAUNCH} model.tensor_model_parallel_size=99999999999999999999\n`);
    const run = await hcpBot(["lint", "--format", "json", huge]);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { findings: { ruleId: string; severity: string; message: string }[] };
    expect(out.findings.filter((f) => f.severity === "error").map((f) => f.ruleId).sort()).toEqual(["HCP001", "HCP024"]);
    expect(out.findings.find((f) => f.ruleId === "HCP024")!.message).toContain("`99999999999999999999`");
    expect(out.findings.some((f) => /failed on/.test(f.message))).toBe(false); // no rule threw
    // The same in a sizes entry: HCP024, not a rounded "is not a positive integer".
    const sizes = join(dir, "huge_sizes.yaml");
    writeFileSync(sizes, "model:\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [99999999999999999999, 2]\n");
    const s = JSON.parse((await hcpBot(["lint", "--format", "json", sizes])).stdout) as { findings: { ruleId: string }[] };
    expect(s.findings.map((f) => f.ruleId)).toContain("HCP024");
    expect(s.findings.map((f) => f.ruleId)).not.toContain("HCP004");
  });

  it("a Python file nested past 100 levels is one 'not analyzed: too deeply nested' line, exit 2, and the other file is still reported", async () => {
    const lines = Array.from({ length: 800 }, (_, i) => `${"    ".repeat(i)}if x:`);
    const deep = join(dir, "deep_recipes.py");
    writeFileSync(deep, `${lines.join("\n")}\n${"    ".repeat(800)}pass\n`);
    const small = join(dir, "next.py");
    writeFileSync(small, HCP001);
    const run = await hcpBot(["lint", deep, small]);
    expect(run.code).toBe(2);
    const err = run.stderr.trim().split("\n");
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^hcp-bot: not analyzed: .*deep_recipes\.py: too deeply nested \(line 102 opens indentation level 101; Python itself stops at 100/);
    expect(run.stdout).toMatch(/next\.py:4:\d+: error HCP001/);
    expect(run.stdout).not.toMatch(/syntax error/); // not the parser's false "syntax error at line 1"
    // 100 levels are fine (CPython's own limit).
    const ok = join(dir, "hundred.py");
    writeFileSync(ok, `${Array.from({ length: 100 }, (_, i) => `${"    ".repeat(i)}if x:`).join("\n")}\n${"    ".repeat(100)}pass\n`);
    expect((await hcpBot(["lint", ok])).code).toBe(0);
  });

  it("a recipe whose expression nests 800 brackets deep (past CPython's 200) is one 'not analyzed: too deeply nested' line, exit 2, and the other file is still reported", async () => {
    const deep = join(dir, "deep_brackets.py");
    // Parentheses, lists and calls nested in one expression of a recipe that would otherwise be HCP001.
    writeFileSync(deep, HCP001.replace(/\n(\s+)return cfg/, `\n$1cfg.train.extra = ${"(".repeat(300)}${"[f(".repeat(250)}1${")]".repeat(250)}${")".repeat(300)}\n$1return cfg`));
    const small = join(dir, "next_to_brackets.py");
    writeFileSync(small, HCP001);
    const run = await hcpBot(["lint", deep, small]);
    expect(run.code).toBe(2);
    const err = run.stderr.trim().split("\n");
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^hcp-bot: not analyzed: .*deep_brackets\.py: too deeply nested \(line \d+ opens bracket level 201; Python itself stops at 200: "too many nested parentheses"\)$/);
    expect(run.stdout).toMatch(/next_to_brackets\.py:4:\d+: error HCP001/);
    expect(run.stdout).not.toMatch(/deep_brackets\.py:\d+:\d+: error HCP001/);
    // 200 open brackets are fine (CPython's own limit): the recipe is analyzed and its HCP001 found.
    const ok = join(dir, "two_hundred.py");
    writeFileSync(ok, HCP001.replace(/\n(\s+)return cfg/, `\n$1cfg.train.extra = ${"(".repeat(200)}1${")".repeat(200)}\n$1return cfg`));
    const fine = await hcpBot(["lint", ok]);
    expect(fine.code).toBe(1);
    expect(fine.stdout).toMatch(/HCP001/);
  });

  it("a file of 20,000 chained dataclasses.replace constants is bounded (the evaluator alone took 26 s before): one 'not analyzed' line, exit 2, and the other file is still reported", async () => {
    const lines = ["from dataclasses import replace", "BASE = WorkloadBaseConfig(tensor_model_parallel_size=1, context_parallel_size=2)"];
    for (let i = 0; i < 20_000; i++) lines.push(`W${i} = replace(${i ? `W${i - 1}` : "BASE"}, global_batch_size=${i + 1})`);
    const chain = join(dir, "chain_workloads.py");
    writeFileSync(chain, `${lines.join("\n")}\n`);
    const small = join(dir, "beside_chain.py");
    writeFileSync(small, HCP001);
    const run = await hcpBot(["lint", chain, small]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^hcp-bot: not analyzed: .*chain_workloads\.py: the file needs more evaluation than the analyzer does for one file \(4000000 evaluation steps; \d+ configuration\(s\) read before it stopped\)\n$/);
    expect(run.stdout).toMatch(/beside_chain\.py:4:\d+: error HCP001/);
  });
});

// Issue 27 item 9: the default globs are taken from the project root (the nearest folder
// with `.git` or `pyproject.toml`), and a folder that yields no file is exit 2, as ruff does.
describe("hcp-bot lint of a folder inside a checkout", () => {
  it("`cd src/megatron/bridge/recipes && hcp-bot lint .` reads the recipes through the globs from the root", async () => {
    const root = join(dir, "checkout");
    const family = join(root, "src/megatron/bridge/recipes/llama");
    execFileSync("mkdir", ["-p", family, join(root, ".git")]);
    writeFileSync(join(family, "llama3.py"), HCP001);
    const recipes = join(root, "src/megatron/bridge/recipes");
    const run = await hcpBot(["lint", "--format", "json", "."], { cwd: recipes });
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { files: number; findings: { ruleId: string; location: { file: string } }[] };
    expect(out.files).toBe(1);
    expect(out.findings.map((f) => [f.ruleId, f.location.file])).toContainEqual(["HCP001", "llama/llama3.py"]);
    // A pyproject.toml marks the root as well as .git does.
    const other = join(dir, "pyproject-checkout");
    execFileSync("mkdir", ["-p", join(other, "src/megatron/bridge/recipes/qwen")]);
    writeFileSync(join(other, "pyproject.toml"), "[project]\nname = 'demo'\n");
    writeFileSync(join(other, "src/megatron/bridge/recipes/qwen/qwen3.py"), HCP001);
    const deep = await hcpBot(["lint", "qwen"], { cwd: join(other, "src/megatron/bridge/recipes") });
    expect(deep.code).toBe(1);
    expect(deep.stdout).toMatch(/^qwen\/qwen3\.py:4:\d+: error HCP001/m);
  });

  it("a folder with no file on the globs is `no files matched`, exit 2, never a pass", async () => {
    const root = join(dir, "unrelated");
    execFileSync("mkdir", ["-p", join(root, "notes"), join(root, ".git")]);
    writeFileSync(join(root, "notes", "train.py"), HCP001); // not below a recipe folder of the globs
    const run = await hcpBot(["lint", "notes"], { cwd: root });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^hcp-bot: no files matched in notes: .*--all/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    // --all reads it; an empty folder next to a real input still exits 2 after the report.
    const all = await hcpBot(["lint", "--all", "notes"], { cwd: root });
    expect(all.code).toBe(1);
    execFileSync("mkdir", ["-p", join(root, "empty")]);
    const mixed = await hcpBot(["lint", "--all", "notes", "empty"], { cwd: root });
    expect(mixed.code).toBe(2);
    expect(mixed.stdout).toMatch(/error HCP001/);
    expect(mixed.stderr).toMatch(/^hcp-bot: no files matched in empty: /);
  });
});

// Issue 27 item 8: a team's own training script that starts from an upstream recipe. Bridge's
// own examples do this (examples/ ... `cfg = llama3_8b_pretrain_config(); ...; pretrain(cfg, forward_step)`,
// training/pretrain.py `def pretrain(config: ConfigContainer, forward_step_func, ...)`).
describe("hcp-bot lint of users' own training scripts", () => {
  const SCRIPT_HEAD = "from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\nfrom megatron.bridge.training.pretrain import pretrain\nfrom megatron.bridge.training.gpt_step import forward_step\n\n";

  it("a config built under `if __name__ == \"__main__\":` and one in a helper without `-> ConfigContainer` are judged", async () => {
    const main = join(dir, "train_main.py");
    writeFileSync(main, `${SCRIPT_HEAD}if __name__ == "__main__":\n    cfg = llama3_8b_pretrain_config()\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.context_parallel_size = 4\n    pretrain(cfg, forward_step)\n`);
    const helper = join(dir, "train_helper.py");
    writeFileSync(helper, `${SCRIPT_HEAD}def build():\n    cfg = llama3_8b_pretrain_config()\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.context_parallel_size = 4\n    return cfg\n\n\ndef main():\n    c = llama3_8b_pretrain_config()\n    c.model.context_parallel_size = 4\n    c.model.hierarchical_context_parallel_sizes = [2, 3]\n    pretrain(c, forward_step)\n`);
    // An index of upstream recipes without this recipe (the shipped one has it: upstream-index.test.ts).
    const index = join(dir, "empty-index.json");
    writeFileSync(index, JSON.stringify({ format: BRIDGE_INDEX_FORMAT, bridge: { version: "0.6.0", commit: null }, keys: SETTING_KEYS, files: [], recipes: {}, aliases: {} }));
    const run = await hcpBot(["lint", "--format", "json", main, helper], { env: { ...process.env, HCP_BRIDGE_INDEX: index, VIRTUAL_ENV: "", PYTHONPATH: "", MEGATRON_BRIDGE_DIR: "" } });
    expect(run.code).toBe(1);
    type Out = { configurations: number; findings: { ruleId: string; location: { file: string; range: { start: { line: number } } } }[]; diagnostics: { severity: string; code: string; message: string; location?: { range: { start: { line: number } } } }[] };
    const out = JSON.parse(run.stdout) as Out;
    expect(out.configurations).toBe(3);
    const found = out.findings.map((f) => `${f.ruleId} ${f.location.file.slice(f.location.file.lastIndexOf("/") + 1)}:${f.location.range.start.line}`);
    expect(found).toContain("HCP001 train_main.py:7");
    expect(found).toContain("HCP001 train_helper.py:7");
    expect(found).toContain("HCP002 train_helper.py:15"); // 2 × 3 != 4, in main() with no return
    // The base recipe is not in the analyzed files and no Bridge was given: one info line per configuration says so.
    const infos = out.diagnostics.filter((d) => d.code === "base-unknown");
    expect(infos.map((d) => d.severity)).toEqual(["info", "info", "info"]);
    expect(infos[0]!.message).toMatch(/starts from llama3_8b_pretrain_config\(\), which was not analyzed \(hcp-bot's index of Megatron-Bridge 0\.6\.0 has no recipe llama3_8b_pretrain_config\)/);
  });

  it("a script that only calls a recipe of the same file adds no second configuration", async () => {
    const file = join(dir, "own_recipe.py");
    writeFileSync(file, `def my_pretrain_config():\n    cfg = ConfigContainer(model=GPTModelProvider())\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n\n\nif __name__ == "__main__":\n    cfg = my_pretrain_config()\n    pretrain(cfg, forward_step)\n`);
    const run = await hcpBot(["lint", "--format", "json", file]);
    const out = JSON.parse(run.stdout) as { configurations: number; findings: { ruleId: string }[] };
    expect(out.configurations).toBe(1);
    expect(out.findings.filter((f) => f.ruleId === "HCP001")).toHaveLength(1);
  });
});

describe("hcp-bot lint resolves a script's base recipe from the installed megatron.bridge", () => {
  it("reads it from VIRTUAL_ENV's site-packages or MEGATRON_BRIDGE_DIR before the shipped index: the installed base's CP 8 is judged", async () => {
    const venv = join(dir, "venv");
    const pkg = join(venv, "lib/python3.12/site-packages/megatron/bridge");
    execFileSync("mkdir", ["-p", join(pkg, "recipes/llama")]);
    writeFileSync(join(pkg, "__init__.py"), "");
    writeFileSync(join(pkg, "recipes/__init__.py"), "");
    writeFileSync(join(pkg, "recipes/llama/__init__.py"), "from megatron.bridge.recipes.llama.llama3 import llama3_8b_pretrain_config\n");
    writeFileSync(join(pkg, "recipes/llama/llama3.py"), "def llama3_8b_pretrain_config():\n    cfg = ConfigContainer(model=GPTModelProvider())\n    cfg.model.context_parallel_size = 8\n    return cfg\n");
    const script = join(dir, "train_venv.py");
    writeFileSync(script, 'from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\n\nif __name__ == "__main__":\n    cfg = llama3_8b_pretrain_config()\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    cfg.model.cp_comm_type = "a2a+p2p"\n');
    const bare = { ...process.env, VIRTUAL_ENV: "", PYTHONPATH: "", MEGATRON_BRIDGE_DIR: "" };
    // Without a Bridge of the user's own: hcp-bot's index of Bridge 0.7.0, whose llama3_8b_pretrain_config has CP 2.
    const indexed = JSON.parse((await hcpBot(["lint", "--format", "json", script], { env: bare })).stdout) as { findings: { ruleId: string; message: string }[]; diagnostics: { code: string }[] };
    expect(indexed.findings.find((f) => f.ruleId === "HCP002")?.message).toMatch(/context_parallel_size is 2\b/);
    expect(indexed.diagnostics.map((d) => d.code)).toEqual(["base-from-index"]);
    for (const env of [{ ...bare, VIRTUAL_ENV: venv }, { ...bare, MEGATRON_BRIDGE_DIR: join(venv, "lib/python3.12/site-packages") }]) {
      const run = await hcpBot(["lint", "--format", "json", script], { env });
      expect(run.code).toBe(1);
      const out = JSON.parse(run.stdout) as { findings: { ruleId: string; location: { range: { start: { line: number } } } }[]; diagnostics: { code: string }[] };
      expect(out.findings.map((f) => [f.ruleId, f.location.range.start.line])).toContainEqual(["HCP002", 5]); // 2 × 2 != the base's 8
      expect(out.diagnostics.map((d) => d.code)).toEqual([]);
    }
  });
});
