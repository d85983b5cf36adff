// Quote removal in `${X:-word}` defaults, with bash itself as the oracle: the word of a
// default undergoes quote removal (bash manual, "Shell Parameter Expansion", "Quote
// Removal"); inside double quotes bash keeps single quotes as characters.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extractShell } from "../../src/core/recipe/launch/index.ts";
import { hcpBot } from "../support/cli.ts";
import { setting } from "./helpers.ts";

/** What bash passes as the argument, with every variable of the snippet unset. */
function bashArg(assignments: string, arg: string): string {
  return execFileSync("bash", ["-c", `unset CP_SIZES X; ${assignments}; printf %s ${arg}`], { encoding: "utf8" });
}

const LAUNCH = "torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config model.context_parallel_size=16 model.cp_comm_type=a2a+p2p";

const CASES: Array<{ assignments: string; arg: string }> = [
  { assignments: 'CP_SIZES=${CP_SIZES:-"[8,2]"}', arg: "model.hierarchical_context_parallel_sizes=$CP_SIZES" },
  { assignments: "CP_SIZES=${CP_SIZES:-'[8,2]'}", arg: "model.hierarchical_context_parallel_sizes=$CP_SIZES" },
  { assignments: 'CP_SIZES="${CP_SIZES:-"[8,2]"}"', arg: '"model.hierarchical_context_parallel_sizes=$CP_SIZES"' },
  { assignments: "true", arg: "model.hierarchical_context_parallel_sizes=${X:-'[8,2]'}" },
  { assignments: "true", arg: 'model.hierarchical_context_parallel_sizes=${X:-\\[8,2\\]}' },
  // Inside double quotes bash keeps the single quotes: Hydra then reads a quoted string.
  { assignments: "true", arg: "\"model.hierarchical_context_parallel_sizes=${X:-'[8,2]'}\"" },
  { assignments: "CP_SIZES=\"${CP_SIZES:-'[8,2]'}\"", arg: "model.hierarchical_context_parallel_sizes=$CP_SIZES" },
];

describe("quoted ${X:-default} values", () => {
  for (const c of CASES) {
    it(`${c.assignments}; … ${c.arg}: the word bash passes`, () => {
      const expected = bashArg(c.assignments, c.arg);
      const text = `${c.assignments}\n${LAUNCH} ${c.arg}\n`;
      const unit = extractShell({ path: "launch.sh", text }).units[0];
      const sizes = setting(unit, "model.hierarchical_context_parallel_sizes");
      const value = expected.slice(expected.indexOf("=") + 1);
      if (value.startsWith("'")) expect(sizes.value).toEqual({ known: true, value: value.slice(1, -1) });
      else expect(sizes.value).toEqual({ known: true, value: JSON.parse(value) as number[] });
    });
  }

  it("hcp-bot lint: no HCP004 on a list given as a quoted default", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-defaults-"));
    const path = join(dir, "launch.sh");
    writeFileSync(path, `CP_SIZES=\${CP_SIZES:-"[8,2]"}\n${LAUNCH} model.hierarchical_context_parallel_sizes=$CP_SIZES\n`);
    const run = await hcpBot(["lint", path, "--format", "json"]);
    const report = JSON.parse(run.stdout) as { findings: Array<{ ruleId: string; severity: string }> };
    expect(report.findings.filter((f) => f.ruleId === "HCP004")).toEqual([]);
    expect(report.findings.filter((f) => f.severity === "error")).toEqual([]);
  });
});
