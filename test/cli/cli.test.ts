// The CLI through its real binary (a child process), as users and CI run it.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type AjvDraft04 from "ajv-draft-04";
import { beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.ts";
import { ALL_RULES } from "../../src/core/rules/index.ts";
import { hcpBot as runHcpBot, root, type Run } from "../support/cli.ts";

const fx = (name: string) => join("fixtures", "cli", name);
const require = createRequire(import.meta.url);
// CommonJS packages: required directly so their constructors are not wrapped in a namespace.
const Ajv04 = require("ajv-draft-04") as typeof AjvDraft04.default;
const addFormats = require("ajv-formats") as (ajv: unknown) => void;

const hcpBot = (...args: string[]) => runHcpBot(args);

describe("hcp-bot lint", () => {
  it("reports the missing hierarchical sizes with file, line, rule and fix, and exits 1", async () => {
    const run = await hcpBot("lint", fx("hcp_recipes.py"));
    expect(run.code).toBe(1);
    const text = readFileSync(join(root, fx("hcp_recipes.py")), "utf8").split("\n");
    const line = text.findIndex((l) => l.includes('cp_comm_type = "a2a+p2p"')) + 1;
    // One line: where, severity, rule, [*] (--fix applies it), what is wrong and the fix.
    expect(run.stdout).toMatch(new RegExp(`^fixtures/cli/hcp_recipes\\.py:${line}:\\d+: error HCP001 \\[\\*\\] cp_comm_type 'a2a\\+p2p' at CP 4 needs hierarchical_context_parallel_sizes, which is not set; set it to \\[2, 2\\]$`, "m"));
    // the correct recipe right below gets no error or warning (at most the info that its head counts are unknown)
    const good = text.findIndex((l) => l.includes("def good_hcp_pretrain_config")) + 1;
    const reported = [...run.stdout.matchAll(/^fixtures\/cli\/hcp_recipes\.py:(\d+):\d+: (error|warning) /gm)].map((m) => Number(m[1]));
    expect(reported.filter((l) => l >= good)).toEqual([]);
  });

  it("exits 0 on a clean recipe", async () => {
    const run = await hcpBot("lint", fx("clean_recipe.py"));
    expect(run.stdout).toMatch(/^No findings in 1 file/m);
    expect(run.code).toBe(0);
  });

  it("lints a whole folder with --all: Python, YAML and shell findings together", async () => {
    const run = await hcpBot("lint", "--all", "--format", "json", join("fixtures", "cli"));
    // The folder holds a binary .py: the report is complete, and the exit status says input went unanalyzed.
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("hcp-bot: not analyzed: fixtures/cli/binary.py: the file is binary (it contains NUL bytes)\n");
    const out = JSON.parse(run.stdout) as { findings: { ruleId: string; location: { file: string } }[]; diagnostics: { code: string; file: string }[] };
    const byFile = (suffix: string) => out.findings.filter((f) => f.location.file.endsWith(suffix)).map((f) => f.ruleId);
    expect(byFile("hcp_recipes.py")).toContain("HCP001");
    expect(byFile("override.yaml")).toContain("HCP002");
    expect(byFile("launch.sh")).toContain("HCP006");
    expect(out.diagnostics).toContainEqual(expect.objectContaining({ code: "unreadable", file: "fixtures/cli/binary.py" }));
  });

  it("writes SARIF 2.1.0 that validates against the schema, with rule ids, levels, regions and fixes", async () => {
    const run = await hcpBot("lint", "--format", "sarif", fx("hcp_recipes.py"), fx("override.yaml"));
    expect(run.code).toBe(1);
    const log = JSON.parse(run.stdout);
    const schema = JSON.parse(readFileSync(require.resolve("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json"), "utf8"));
    // unicodeRegExp off: the published schema has a language-tag pattern that is invalid under the u flag.
    const ajv = new Ajv04({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    expect(validate(log), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const results = log.runs[0].results as Array<Record<string, any>>;
    const hcp001 = results.find((r) => r.ruleId === "HCP001")!;
    expect(hcp001.level).toBe("error");
    expect(hcp001.locations[0].physicalLocation.artifactLocation.uri).toBe("fixtures/cli/hcp_recipes.py");
    expect(hcp001.locations[0].physicalLocation.region.startLine).toBeGreaterThan(1);
    expect(hcp001.fixes[0].artifactChanges[0].replacements[0].insertedContent.text).toMatch(/hierarchical_context_parallel_sizes = \[2, 2\]/);
    expect(log.runs[0].tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(ALL_RULES.map((r) => r.id));
  });

  it("writes GitHub workflow-command annotations", async () => {
    const run = await hcpBot("lint", "--format", "github", fx("hcp_recipes.py"));
    expect(run.stdout).toMatch(/^::error file=fixtures\/cli\/hcp_recipes.py,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=HCP001 [^:]+::/m);
  });

  it("honours --select and --ignore", async () => {
    const ignored = await hcpBot("lint", "--ignore", "HCP001", fx("hcp_recipes.py"));
    expect(ignored.stdout).not.toMatch(/HCP001/);
    const selected = await hcpBot("lint", "--select", "HCP002", "--format", "json", fx("override.yaml"), fx("hcp_recipes.py"));
    const ids = (JSON.parse(selected.stdout).findings as { ruleId: string }[]).map((f) => f.ruleId);
    expect(new Set(ids)).toEqual(new Set(["HCP002"]));
  });

  it("exits 2 with a clear message on bad usage and unreadable input", async () => {
    const missing = await hcpBot("lint", "no/such/path.py");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read no\/such\/path.py: no such file or folder/);
    const format = await hcpBot("lint", "--format", "xml", fx("clean_recipe.py"));
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/format/);
    const binary = await hcpBot("lint", fx("binary.py"));
    expect(binary.code).toBe(2);
    expect(binary.stderr).toMatch(/binary/);
    const nothing = await hcpBot("lint");
    expect(nothing.code).toBe(2);
    const rule = await hcpBot("lint", "--select", "HCP999", fx("clean_recipe.py"));
    expect(rule.code).toBe(2);
    expect(rule.stderr).toMatch(/unknown rule id HCP999/);
    const unknown = await hcpBot("frobnicate");
    expect(unknown.code).toBe(2);
  }); // six runs of the binary in a row on a shared machine
});

describe("hcp-bot rules / explain / version", () => {
  let rules: Run;
  beforeAll(async () => {
    rules = await hcpBot("rules");
  });

  it("lists every rule with id, severity and name", () => {
    expect(rules.code).toBe(0);
    for (const r of ALL_RULES) expect(rules.stdout).toMatch(new RegExp(`^${r.id}\\s+${r.severity}\\s+${r.name}\\b`, "m"));
  });

  it("explains a rule with its four doc sections", async () => {
    const run = await hcpBot("explain", "hcp001");
    expect(run.code).toBe(0);
    const rule = ALL_RULES.find((r) => r.id === "HCP001")!;
    for (const heading of ["What it checks", "Why it matters", "Example", "Fix"]) expect(run.stdout).toContain(heading);
    expect(run.stdout).toContain(rule.doc.why.split("\n")[0]);
    const bad = await hcpBot("explain", "HCP000");
    expect(bad.code).toBe(2);
  });

  it("explains HCP015, the note posted on PRs that move the Transformer Engine pin, instead of 'unknown rule'", async () => {
    const run = await hcpBot("explain", "HCP015");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("te-pin-changed");
    expect(run.stdout).toContain("8ff60f8 (PR #3290), first in release_v2.19");
    expect((await hcpBot("explain", "te-pin-changed")).code).toBe(0);
  });

  it("prints the package version", async () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    expect(VERSION).toBe(pkg.version);
    expect((await hcpBot("--version")).stdout.trim()).toBe(pkg.version);
  });
});
