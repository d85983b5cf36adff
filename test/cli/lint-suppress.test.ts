// Suppressions (`# noqa`, `# hcp-bot: ignore[...]`), HCP100 for unused ones, `--add-noqa` and the
// baseline, through the real binary in a scratch folder.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hcpBot, root } from "../support/cli.ts";

let dir: string;
const RECIPE = "r.py";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-noqa-"));
  copyFileSync(join(root, "fixtures", "cli", "hcp_recipes.py"), join(dir, RECIPE));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const read = (name = RECIPE) => readFileSync(join(dir, name), "utf8");
const edit = (from: string, to: string, name = RECIPE) => {
  const text = read(name);
  expect(text).toContain(from);
  writeFileSync(join(dir, name), text.replace(from, to));
};
const BROKEN_LINE = '    cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n\n\ndef good';

interface Json {
  findings: { ruleId: string; location: { range: { start: { line: number } } }; fix?: { edits: unknown[] } }[];
}
async function lint(...args: string[]) {
  const run = await hcpBot(["lint", ...args], { cwd: dir });
  return { ...run, json: () => JSON.parse(run.stdout) as Json };
}
const ids = (j: Json) => j.findings.map((f) => f.ruleId);

describe("suppression comments", () => {
  it("# noqa: HCP001 on the reported line hides HCP001 only, and says how many were hidden", async () => {
    edit(BROKEN_LINE, BROKEN_LINE.replace('"a2a+p2p"\n', '"a2a+p2p"  # noqa: HCP001\n'));
    const r = await lint(RECIPE);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/HCP001/);
    expect(r.stdout).toMatch(/1 suppressed/);
  });

  it("counts what was hidden across files under different settings (each settings file is its own analysis)", async () => {
    edit(BROKEN_LINE, BROKEN_LINE.replace('"a2a+p2p"\n', '"a2a+p2p"  # noqa: HCP001\n'));
    for (const sub of ["a", "b"]) {
      mkdirSync(join(dir, sub));
      copyFileSync(join(dir, RECIPE), join(dir, sub, RECIPE));
    }
    writeFileSync(join(dir, "a", "pyproject.toml"), "[tool.hcp-bot]\ngpus_per_node = 8\n");
    const r = await lint(join("a", RECIPE), join("b", RECIPE));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2 suppressed/);
  });

  it("a bare # noqa hides every rule on the line; a noqa naming only another tool's codes hides none", async () => {
    edit(BROKEN_LINE, BROKEN_LINE.replace('"a2a+p2p"\n', '"a2a+p2p"  # noqa\n'));
    expect(ids((await lint("-f", "json", RECIPE)).json())).not.toContain("HCP001");
    edit("# noqa\n", "# noqa: E501\n");
    const r = await lint("-f", "json", RECIPE);
    expect(ids(r.json())).toContain("HCP001");
    expect(ids(r.json())).not.toContain("HCP100");
  });

  it("# hcp-bot: ignore[HCP001] reason on the line before hides it", async () => {
    edit(BROKEN_LINE, `    # hcp-bot: ignore[HCP001] tracked in #12\n${BROKEN_LINE}`);
    const r = await lint(RECIPE);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/HCP001|HCP100/);
  });

  it("reports an unused suppression as HCP100 with a fix, unknown ids named; --ignore HCP100 silences it", async () => {
    edit(BROKEN_LINE, BROKEN_LINE.replace('"a2a+p2p"\n', '"a2a+p2p"  # noqa: HCP001, HCP002, HCP999\n'));
    const r = await lint("-f", "json", RECIPE);
    const unused = r.json().findings.filter((f) => f.ruleId === "HCP100");
    expect(unused).toHaveLength(1);
    expect(JSON.stringify(unused[0])).toMatch(/HCP002, HCP999 \(HCP999: no such rule\)/);
    expect(unused[0]!.fix?.edits).toHaveLength(1);
    expect(ids((await lint("-f", "json", "--ignore", "HCP100", RECIPE)).json())).not.toContain("HCP100");
  });
});

describe("--add-noqa", () => {
  it("writes a noqa on each reported line, after which the lint is clean, and a second run adds nothing", async () => {
    const before = await lint("-f", "json", RECIPE);
    const lines = new Set(before.json().findings.map((f) => f.location.range.start.line));
    expect(lines.size).toBeGreaterThan(0);
    const first = await lint("--add-noqa", RECIPE);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/added 2 noqa directives to 1 file/);
    const text = read().split("\n");
    for (const line of lines) expect(text[line - 1]).toMatch(/  # noqa: HCP\d{3}$/);
    const after = await lint("-f", "json", RECIPE);
    expect(after.json().findings).toEqual([]);
    const written = read();
    const second = await lint("--add-noqa", RECIPE);
    expect(second.stderr).toMatch(/added 0 noqa directives to 0 files/);
    expect(read()).toBe(written);
  });

  it("joins an existing noqa and leaves a line ending in a backslash alone", async () => {
    edit(BROKEN_LINE, BROKEN_LINE.replace('"a2a+p2p"\n', '"a2a+p2p"  # noqa: E501\n'));
    await lint("--add-noqa", RECIPE);
    expect(read()).toContain('"a2a+p2p"  # noqa: E501, HCP001\n');
    writeFileSync(join(dir, "run.sh"), "torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config \\\n  model.context_parallel_size=4 model.cp_comm_type=a2a+p2p\n");
    const sh = await lint("--add-noqa", "run.sh");
    expect(sh.stderr).toMatch(/added \d+ noqa directives? to 1 file/);
    expect(read("run.sh").split("\n")[0]).toMatch(/\\$/);
  });
});

describe("baseline", () => {
  it("hides the findings it holds, reports new ones, and a fixed one leaves it without error", async () => {
    const written = await lint("--baseline-write", "base.json", RECIPE);
    expect(written.code).toBe(0);
    expect(written.stderr).toMatch(/wrote 2 findings to the baseline base\.json/);
    const same = await lint("--baseline", "base.json", RECIPE);
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/2 in the baseline/);
    expect(same.stdout).not.toMatch(/HCP001/);
    // A new finding (a second broken recipe) is reported; the baselined one is not.
    writeFileSync(join(dir, RECIPE), read() + '\n\ndef other_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 8\n    cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n');
    const grown = await lint("-f", "json", "--baseline", "base.json", RECIPE);
    expect(grown.code).toBe(1);
    expect(ids(grown.json())).toEqual(["HCP001"]);
    // Fixed: the baselined finding is gone, the lint passes.
    copyFileSync(join(root, "fixtures", "cli", "clean_recipe.py"), join(dir, RECIPE));
    const fixed = await lint("--baseline", "base.json", RECIPE);
    expect(fixed.code).toBe(0);
  });

  it("matches from another working folder (paths relative to the baseline), and refuses a broken baseline", async () => {
    await lint("--baseline-write", "base.json", RECIPE);
    const elsewhere = await hcpBot(["lint", "--baseline", join(dir, "base.json"), join(dir, RECIPE)], { cwd: root });
    expect(elsewhere.code).toBe(0);
    writeFileSync(join(dir, "bad.json"), '{"tool": "other"}');
    const bad = await lint("--baseline", "bad.json", RECIPE);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.json is not an hcp-bot baseline/);
    const missing = await lint("--baseline", "none.json", RECIPE);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the baseline none\.json: no such file/);
  });
});
