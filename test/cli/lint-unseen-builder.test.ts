// Issue 27.10: keyword arguments handed to a builder the analyzer cannot see are judged, not
// dropped. Bridge's recipes hand parallel settings to builders under the settings' own names
// (`_llama3_common(context_parallel_size=..., cp_comm_type=..., hierarchical_context_parallel_sizes=...)`,
// recipes/llama/llama3.py before the Nov-2025 flattening; the names are ModelParallelConfig's
// and TransformerConfig's fields in Megatron-Core at Bridge's pin 2a75ac1). When the kwargs
// alone decide (a2a+p2p handed with no sizes: nothing upstream sets the sizes, docs/domain.md
// 1.4), the finding is made; what the unseen builder may set itself (the CP size, the comm
// type) stays unknown, so no finding rests on a default it may not have.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

interface Finding {
  ruleId: string;
  severity: string;
  unitName: string;
  location: { range: { start: { line: number } } };
}

const recipe = (name: string, call: string) => `def ${name}() -> ConfigContainer:\n    return ${call}\n`;

async function lint(text: string): Promise<{ code: number | null; findings: Finding[] }> {
  const file = join(mkdtempSync(join(tmpdir(), "hcp-unseen-")), "recipe.py");
  writeFileSync(file, `from team.builders import some_unseen_builder\n\n\n${text}`);
  const json = await hcpBot(["lint", file, "--format", "json", "--isolated"]);
  return { code: json.code, findings: (JSON.parse(json.stdout) as { findings: Finding[] }).findings };
}

describe("hcp-bot lint: kwargs handed to a builder it cannot see", () => {
  it("a2a+p2p handed without sizes: HCP001, at the kwarg, exit 1", async () => {
    const r = await lint(recipe("fam_8b_pretrain_config", 'some_unseen_builder(context_parallel_size=4, cp_comm_type="a2a+p2p")'));
    expect(r.code).toBe(1);
    expect(r.findings.map((f) => [f.ruleId, f.severity, f.location.range.start.line])).toEqual([["HCP001", "error", 5]]);
  });

  it("sizes whose product is not the CP handed with them: HCP002", async () => {
    const r = await lint(recipe("fam_8b_pretrain_config", 'some_unseen_builder(context_parallel_size=4, cp_comm_type="a2a+p2p", hierarchical_context_parallel_sizes=[2, 3])'));
    expect(r.findings.map((f) => f.ruleId)).toContain("HCP002");
  });

  it("what the builder may set itself stays unknown: sizes without a comm type are not called unused (no HCP005), CP not assumed 1 (no HCP002)", async () => {
    const r = await lint(
      [
        recipe("fam_a_config", "some_unseen_builder(context_parallel_size=4, hierarchical_context_parallel_sizes=[2, 2])"),
        recipe("fam_b_config", 'some_unseen_builder(cp_comm_type="a2a+p2p", hierarchical_context_parallel_sizes=[2, 2])'),
      ].join("\n\n"),
    );
    expect(r.findings.filter((f) => f.severity !== "info")).toEqual([]);
  });

  it("a ** splat that could hand other values: nothing is judged from the kwargs", async () => {
    const r = await lint(
      "def fam_8b_pretrain_config(**user_kwargs) -> ConfigContainer:\n" +
        '    return some_unseen_builder(cp_comm_type="a2a+p2p", **EXTRA)\n',
    );
    expect(r.findings.filter((f) => f.ruleId === "HCP001")).toEqual([]);
  });

  it("the same kwargs with sizes that fit: clean", async () => {
    const r = await lint(recipe("fam_8b_pretrain_config", 'some_unseen_builder(context_parallel_size=4, cp_comm_type="a2a+p2p", hierarchical_context_parallel_sizes=[2, 2])'));
    expect(r.findings.filter((f) => f.severity !== "info")).toEqual([]);
    expect(r.code).toBe(0);
  });
});
