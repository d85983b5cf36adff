// What a person reads from `hcp-bot lint`, through the real binary: one line per finding with a
// message under ~120 characters, a code frame under it on a terminal (here --color=always), one
// finding once when a launch line and its recipe both reach it, counts that read `1 error`,
// and rules/explain as JSON with each rule's documentation link.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_RULES } from "../../src/core/rules/index.ts";
import { hcpBot } from "../support/cli.ts";

const FIXTURES = ["fixtures/cli/hcp_recipes.py", "fixtures/cli/launch.sh", "fixtures/cli/override.yaml"];
const plainEnv = { ...process.env, NO_COLOR: "1", HCP_DOCS_URL: "" };
const lint = (args: string[], env: NodeJS.ProcessEnv = plainEnv) => hcpBot(["lint", ...args], { env });
const FINDING_LINE = /^(\S+):(\d+):(\d+): (error|warning|info) (HCP\d{3})( \[\*\])? (.+)$/;

interface JsonFinding {
  ruleId: string;
  message: string;
  summary?: string;
  location: { file: string; range: { start: { line: number; column: number } } };
}

describe("hcp-bot lint's text output", () => {
  it("is one line per finding, each message under 120 characters with no (file:line) inside, and the summary counts in words", async () => {
    const run = await lint([...FIXTURES, "fixtures/recipes", "--all"]);
    const lines = run.stdout.trimEnd().split("\n");
    const findings = lines.filter((l) => FINDING_LINE.test(l));
    expect(findings.length).toBeGreaterThan(5);
    // Nothing but findings, file diagnostics and the summary: no indented detail lines off a terminal.
    expect(lines.filter((l) => !FINDING_LINE.test(l) && !/: (error|warning|info) [a-z-]+: /.test(l))).toEqual([lines.at(-1)]);
    for (const l of findings) {
      const message = FINDING_LINE.exec(l)![7]!;
      expect(message.length, l).toBeLessThanOrEqual(120);
      expect(message, l).not.toMatch(/\([^()]*\.(py|sh|yaml):\d+/);
    }
    expect(lines.at(-1)).toMatch(/^Found \d+ errors?(, \d+ warnings?)?( and \d+ notes?)? in \d+ files \(\d+ configurations\); \d+ fixable with `hcp-bot lint --fix`; \d+ file diagnostics?$/);
  });

  it("keeps the long explanation in --format json (message) next to the short line (summary)", async () => {
    const run = await lint([...FIXTURES, "--format", "json"]);
    const findings = (JSON.parse(run.stdout) as { findings: JsonFinding[] }).findings;
    const hcp001 = findings.find((f) => f.ruleId === "HCP001")!;
    expect(hcp001.summary).toBe("cp_comm_type 'a2a+p2p' at CP 4 needs hierarchical_context_parallel_sizes, which is not set; set it to [2, 2]");
    expect(hcp001.message.length).toBeGreaterThan(400);
    expect(hcp001.message).toMatch(/Megatron-Bridge rejects this/);
  });

  it("prints a finding that a launch line and its recipe both reach once, at the recipe's line", async () => {
    const run = await lint(FIXTURES);
    const at = run.stdout.split("\n").filter((l) => l.startsWith("fixtures/cli/hcp_recipes.py:25:53: info HCP009 "));
    expect(at).toHaveLength(1);
    const json = (JSON.parse((await lint([...FIXTURES, "-f", "json"])).stdout) as { findings: JsonFinding[] }).findings;
    expect(json.filter((f) => f.ruleId === "HCP009" && f.location.file.endsWith("hcp_recipes.py") && f.location.range.start.line === 25)).toHaveLength(1);
  });

  it("says `1 error` for one, and shows the code frame with a caret under the range with --color=always", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-msg-"));
    try {
      writeFileSync(
        join(dir, "one_recipe.py"),
        'from megatron.bridge.recipes.common import _pretrain_common\n\n\ndef one_pretrain_config():\n\tcfg = _pretrain_common()\n\tcfg.model.context_parallel_size = 4\n\tcfg.model.cp_comm_type = "a2a+p2p"\n\treturn cfg\n',
      );
      const plain = await hcpBot(["lint", "one_recipe.py"], { cwd: dir, env: plainEnv });
      expect(plain.stdout).toMatch(/^Found 1 error in 1 file \(1 configuration\); 1 fixable with `hcp-bot lint --fix`$/m);
      expect(plain.stdout).not.toMatch(/\|/);
      const tty = await hcpBot(["lint", "one_recipe.py", "--color=always"], { cwd: dir, env: plainEnv });
      const lines = tty.stdout.replace(/\u001b\[[0-9;]*m/g, "").split("\n");
      const head = lines.findIndex((l) => /^one_recipe\.py:7:\d+: error HCP001 \[\*\] /.test(l));
      expect(head).toBeGreaterThanOrEqual(0);
      // The tab is shown as four spaces, and the caret sits under "a2a+p2p" with its quotes.
      expect(lines.slice(head + 1, head + 5)).toEqual([
        "   |",
        ' 7 |     cfg.model.cp_comm_type = "a2a+p2p"',
        "   |                              ^^^^^^^^^",
        "   = fix: Set model.hierarchical_context_parallel_sizes to [2, 2] (for 8 GPUs per NVLink domain (the default for 8-GPU H100/H200 nodes))",
      ]);
      expect(tty.stdout).toContain("\u001b[31m^^^^^^^^^\u001b[39m");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("documentation links", () => {
  const env = { ...plainEnv, HCP_DOCS_URL: "https://docs.example.test/hcp-bot/rules" };

  it("rules --format json lists every rule with its page under HCP_DOCS_URL; explain --format json gives one", async () => {
    const rules = JSON.parse((await hcpBot(["rules", "--format", "json"], { env })).stdout) as { id: string; severity: string; summary: string; url: string }[];
    expect(rules.map((r) => r.id)).toEqual(ALL_RULES.map((r) => r.id));
    expect(rules[0]).toMatchObject({ id: "HCP001", severity: "error", url: "https://docs.example.test/hcp-bot/rules/HCP001.md" });
    const one = await hcpBot(["explain", "hcp002", "-f", "json"], { env });
    expect(JSON.parse(one.stdout)).toMatchObject({ id: "HCP002", name: "sizes-product-mismatch", url: "https://docs.example.test/hcp-bot/rules/HCP002.md", doc: { checks: expect.any(String) } });
    expect((await hcpBot(["explain", "HCP002"], { env })).stdout).toMatch(/^Documentation: https:\/\/docs\.example\.test\/hcp-bot\/rules\/HCP002\.md$/m);
    expect((await hcpBot(["explain", "HCP002", "--format", "yaml"], { env })).code).toBe(2);
  });

  it("SARIF carries helpUri per rule from the same setting, and none when nothing names the pages", async () => {
    const sarif = JSON.parse((await lint([FIXTURES[0]!, "-f", "sarif"], env)).stdout) as { runs: { tool: { driver: { rules: { id: string; helpUri?: string }[] } } }[] };
    const rules = sarif.runs[0]!.tool.driver.rules;
    expect(rules.find((r) => r.id === "HCP018")!.helpUri).toBe("https://docs.example.test/hcp-bot/rules/HCP018.md");
    const bare = JSON.parse((await lint([FIXTURES[0]!, "-f", "sarif"])).stdout) as typeof sarif;
    expect(bare.runs[0]!.tool.driver.rules.some((r) => "helpUri" in r)).toBe(false);
  });
});
