// `hcp-bot lint` never fails open and never crashes on its input (issue 15, item 10):
// unanalyzed files are exit 2 with one line naming them, special files are refused, and a
// YAML key outside ConfigContainer's tree costs only that key.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  }, 60_000);

  it("a file too large to read at all (sparse, 65 MB) is exit 2 without being read", async () => {
    const huge = join(dir, "huge.yaml");
    writeFileSync(huge, "");
    truncateSync(huge, 65 * 1024 * 1024);
    const run = await hcpBot(["lint", huge]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^hcp-bot: not analyzed: .*huge\.yaml: 68157440 bytes is over the 16 Mi-character limit\n$/);
  }, 60_000);

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
  }, 60_000);

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
  }, 60_000);
});

describe("hcp-bot lint follows builders inside the analyzed tree", () => {
  it("a folder with the builder module: the kwargs recipe is judged; the recipe file alone stays unknown", async () => {
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
    const alone = await hcpBot(["lint", recipeFile]);
    expect(alone.code).toBe(0);
    expect(alone.stdout).not.toMatch(/HCP001/);
  }, 60_000);
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
  }, 60_000);

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
  }, 60_000);

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
  }, 60_000);
});
