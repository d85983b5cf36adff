// `hcp-bot lint` reads the App's settings: `.github/hcp-bot.yml` or pyproject.toml's
// `[tool.hcp-bot]`, the nearest above each file; `--config FILE` names one, `--isolated` uses none.
// Through the real binary, in scratch checkouts.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hcpBot, root } from "../support/cli.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-config-"));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "recipes"));
  copyFileSync(join(root, "fixtures", "cli", "hcp_recipes.py"), join(dir, "recipes", "hcp_recipes.py"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (path: string, text: string) => {
  mkdirSync(join(dir, path, ".."), { recursive: true });
  writeFileSync(join(dir, path), text);
};

interface Json {
  findings: { ruleId: string; location: { file: string }; fix?: { layout?: { domainGpus?: number } } }[];
}
async function lintJson(...args: string[]): Promise<{ code: number | null; out: Json; stderr: string }> {
  const run = await hcpBot(["lint", "--format", "json", ...args], { cwd: dir });
  return { code: run.code, out: run.stdout ? (JSON.parse(run.stdout) as Json) : { findings: [] }, stderr: run.stderr };
}
const ids = (j: Json) => j.findings.map((f) => f.ruleId);

describe("lint settings", () => {
  it("without a settings file reports HCP001 placed for 8 GPUs", async () => {
    const r = await lintJson("recipes/hcp_recipes.py");
    expect(r.code).toBe(1);
    expect(ids(r.out)).toContain("HCP001");
    expect(r.out.findings.find((f) => f.ruleId === "HCP001")!.fix?.layout?.domainGpus).toBe(8);
  });

  it("honours .github/hcp-bot.yml's rules.ignore and gpus_per_node", async () => {
    write(".github/hcp-bot.yml", "gpus_per_node: 72\n");
    const placed = await lintJson("recipes/hcp_recipes.py");
    expect(placed.out.findings.find((f) => f.ruleId === "HCP001")!.fix?.layout?.domainGpus).toBe(72);
    write(".github/hcp-bot.yml", "rules:\n  ignore: [HCP001]\ngpus_per_node: 72\n");
    const ignored = await lintJson("recipes/hcp_recipes.py");
    expect(ids(ignored.out)).not.toContain("HCP001");
    expect(ignored.code).toBe(0);
  });

  it("reads [tool.hcp-bot] from pyproject.toml, and skips a pyproject.toml without it", async () => {
    write("pyproject.toml", '[project]\nname = "x"\n\n[tool.hcp-bot]\nrules.ignore = ["HCP001"]\n');
    expect(ids((await lintJson("recipes/hcp_recipes.py")).out)).not.toContain("HCP001");
    // A nearer pyproject.toml without the table is not a settings file: the search goes on above it.
    write("recipes/pyproject.toml", '[project]\nname = "inner"\n');
    expect(ids((await lintJson("recipes/hcp_recipes.py")).out)).not.toContain("HCP001");
  });

  it("takes the nearest settings file above each file", async () => {
    write(".github/hcp-bot.yml", "rules:\n  ignore: [HCP001]\n");
    write("other/.github/hcp-bot.yml", "gpus_per_node: 8\n");
    copyFileSync(join(dir, "recipes", "hcp_recipes.py"), join(dir, "other", "hcp_recipes.py"));
    const r = await lintJson("recipes/hcp_recipes.py", "other/hcp_recipes.py");
    const files = r.out.findings.filter((f) => f.ruleId === "HCP001").map((f) => f.location.file);
    expect(files).toEqual(["other/hcp_recipes.py"]);
  });

  it("--config names the file and --isolated uses none", async () => {
    write(".github/hcp-bot.yml", "rules:\n  ignore: [HCP001]\n");
    write("strict.yml", "rules:\n  ignore: []\ngpus_per_node: 4\n");
    const named = await lintJson("--config", "strict.yml", "recipes/hcp_recipes.py");
    expect(named.out.findings.find((f) => f.ruleId === "HCP001")!.fix?.layout?.domainGpus).toBe(4);
    expect(ids((await lintJson("--isolated", "recipes/hcp_recipes.py")).out)).toContain("HCP001");
    const both = await hcpBot(["lint", "--isolated", "--config", "strict.yml", "recipes/hcp_recipes.py"], { cwd: dir });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--config and --isolated/);
    const missing = await hcpBot(["lint", "--config", "nope.yml", "recipes/hcp_recipes.py"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.yml/);
  });

  it("a --ignore flag adds to the file's ignore list", async () => {
    write(".github/hcp-bot.yml", "rules:\n  ignore: [HCP001]\n");
    const r = await lintJson("--ignore", "HCP009", "recipes/hcp_recipes.py");
    expect(ids(r.out)).not.toContain("HCP001");
    expect(ids(r.out)).not.toContain("HCP009");
  });

  it("an invalid settings file is an error naming the problem, exit 2, nothing linted", async () => {
    write(".github/hcp-bot.yml", "rules:\n  ignore: [HCPX]\n");
    const bad = await hcpBot(["lint", "recipes/hcp_recipes.py"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/\.github\/hcp-bot\.yml has 1 problem\(s\): rules\.ignore\.0: a rule id such as HCP001/);
    write(".github/hcp-bot.yml", "rules: [\n");
    expect((await hcpBot(["lint", "recipes/hcp_recipes.py"], { cwd: dir })).stderr).toMatch(/is not valid YAML/);
    rmSync(join(dir, ".github"), { recursive: true });
    write("pyproject.toml", "[tool.hcp-bot\n");
    expect((await hcpBot(["lint", "recipes/hcp_recipes.py"], { cwd: dir })).stderr).toMatch(/pyproject\.toml is not valid TOML/);
  });
});
