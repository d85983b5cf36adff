// Issue 27.11 through the real binary: Megatron-Core (parallel_state.py,
// create_hierarchical_groups at Bridge's pin 2a75ac1) cuts each CP group's ranks into
// contiguous runs of sizes[0], strided by TP, so an a2a group is a run of TP × a2a
// consecutive global ranks. It stays on one node only when TP × a2a divides the GPUs
// per node: for TP 1, CP 12 on 8-GPU nodes [6, 2] puts ranks 6..11 on nodes 0 and 1,
// [4, 3] keeps every group on one node. Every fix `hcp-bot lint` proposes and the
// advisor's answer must be [4, 3], and the fixed file must lint clean.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

interface Edit {
  file: string;
  range: { start: { offset: number }; end: { offset: number } };
  newText: string;
}
interface LintJson {
  findings: { ruleId: string; unitName?: string; fix?: { edits: Edit[]; layout?: { sizes?: number[]; domainGpus?: number } } }[];
}

const RULES_WITH_SIZES = ["HCP001", "HCP002", "HCP003", "HCP018"];

function pythonRecipe(extra: string[]): string {
  const body = ["cfg = _pretrain_common()", "cfg.model = GPTModelProvider()", "cfg.model.tensor_model_parallel_size = 1", "cfg.model.context_parallel_size = 12", 'cfg.model.cp_comm_type = "a2a+p2p"', ...extra, "return cfg"];
  return `def fam_8b_pretrain_config() -> ConfigContainer:\n${body.map((l) => `    ${l}`).join("\n")}\n`;
}

const MLM_LAUNCH = [
  "#!/bin/bash",
  "torchrun --nproc_per_node 8 --nnodes 3 pretrain_gpt.py \\",
  "    --tensor-model-parallel-size 1 \\",
  "    --context-parallel-size 12 \\",
  "    --cp-comm-type a2a+p2p",
  "",
].join("\n");

function writeCase(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "hcp-a2a-node-")), name);
  writeFileSync(file, text);
  return file;
}

async function lintJson(file: string): Promise<LintJson> {
  const r = await hcpBot(["lint", file, "--format", "json"]);
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as LintJson;
}

/** The file after the given edits, applied from the end so earlier offsets stay valid. */
function applied(text: string, edits: Edit[]): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.range.start.offset - a.range.start.offset)) {
    out = out.slice(0, e.range.start.offset) + e.newText + out.slice(e.range.end.offset);
  }
  return out;
}

/** Lints, takes the one sizes finding of `ruleId`, checks its proposal is [4, 3], applies it and re-lints. */
async function fixIsFourByThree(file: string, ruleId: string, written: RegExp): Promise<void> {
  const report = await lintJson(file);
  const finding = report.findings.find((f) => f.ruleId === ruleId);
  expect(finding?.fix?.layout).toEqual({ tp: 1, sizes: [4, 3], domainGpus: 8 });
  const text = readFileSync(file, "utf8");
  const fixed = applied(text, finding!.fix!.edits);
  expect(fixed).toMatch(written);
  expect(fixed).not.toMatch(/\[6, 2\]|sizes 6 2/);
  writeFileSync(file, fixed);
  const again = await lintJson(file);
  expect(again.findings.filter((f) => RULES_WITH_SIZES.includes(f.ruleId))).toEqual([]);
}

describe("TP 1, CP 12 on 8-GPU nodes: every proposed size is [4, 3], never [6, 2]", () => {
  it("HCP001 on a recipe: the fix sets [4, 3] and the fixed recipe lints clean", async () => {
    await fixIsFourByThree(writeCase("recipe.py", pythonRecipe([])), "HCP001", /hierarchical_context_parallel_sizes = \[4, 3\]/);
  });

  it("HCP001 on a Megatron-LM launch line: --hierarchical-context-parallel-sizes 4 3", async () => {
    await fixIsFourByThree(writeCase("run.sh", MLM_LAUNCH), "HCP001", /--hierarchical-context-parallel-sizes 4 3/);
  });

  it("HCP018 on [6, 2] (fits in 8 but straddles nodes): the fix is [4, 3]", async () => {
    await fixIsFourByThree(writeCase("recipe.py", pythonRecipe(["cfg.model.hierarchical_context_parallel_sizes = [6, 2]"])), "HCP018", /\[4, 3\]/);
  });

  it("HCP002 on sizes whose product is not CP: the fix is [4, 3]", async () => {
    await fixIsFourByThree(writeCase("recipe.py", pythonRecipe(["cfg.model.hierarchical_context_parallel_sizes = [2, 2]"])), "HCP002", /\[4, 3\]/);
  });

  it("hcp-bot advise on the recipe: [4, 3], with [6, 2] rejected as crossing nodes", async () => {
    const file = writeCase("recipe.py", pythonRecipe([]));
    const r = await hcpBot(["advise", `${file}::fam_8b_pretrain_config`, "--format", "json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { recommendation: { sizes?: number[] }; rejected: { sizes?: number[]; why: string }[]; groups: Record<string, number[][]> };
    expect(out.recommendation.sizes).toEqual([4, 3]);
    expect(out.rejected.find((x) => x.sizes?.[0] === 6 && x.sizes[1] === 2)?.why).toMatch(/6 does not divide the 8 GPUs/);
    for (const group of out.groups["a2a"]!) expect(new Set(group.map((rank) => Math.floor(rank / 8))).size).toBe(1);
  });
});
