// `hcp-bot verdict` through the real binary: exit codes and formats.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VerdictSchema } from "../../src/core/verdict/index.ts";
import { hcpBot as runHcpBot } from "../support/cli.ts";
import { FLAT_NAMES, HCP_NAMES, iterationLine, PROBE_KEY, probeLines, trainingLog } from "./logs.ts";

const log = (name: string) => join("fixtures", "logs", name);

const hcpBot = (...args: string[]) => runHcpBot(args);

const tmp = mkdtempSync(join(tmpdir(), "hcp-verdict-cli-"));
const passing = join(tmp, "pass.log");
writeFileSync(passing, trainingLog());

// Each run starts node + tsx (~1 s on a busy machine).
describe("hcp-bot verdict", () => {
  it("exit 0 and a PASS line for a passing training log with the run's probe key; without the key it is unproven", async () => {
    const run = await hcpBot("verdict", passing, "--exit-code", "0", "--gpu", "H100", "--probe-key", PROBE_KEY, "--world-size", "4");
    expect(run.stdout).toMatch(/^HCP smoke verdict: PASS \(exit 0\)/);
    expect(run.code).toBe(0);
    const keyless = await hcpBot("verdict", passing, "--exit-code", "0", "--format", "json");
    expect(keyless.code).toBe(1);
    expect(JSON.parse(keyless.stdout)).toMatchObject({ status: "inconclusive", cause: { kind: "hcp-unverified" }, hcp: { probeReports: 0, untrustedReports: 4 } });
    // No exit status (no runner facts): never a pass.
    expect((await hcpBot("verdict", passing, "--probe-key", PROBE_KEY)).stdout).toMatch(/^HCP smoke verdict: INCONCLUSIVE/);
    expect((await hcpBot("verdict", passing, "--probe-key", "abc")).code).toBe(2);
  });

  it("exit 1 with JSON that matches the schema for a failed run (d: M4 → HCP002)", async () => {
    const run = await hcpBot("verdict", log("d_nccl_cp2_hcp2x2_mismatch.log"), "--exit-code", "1", "--format", "json");
    expect(run.code).toBe(1);
    const v = VerdictSchema.parse(JSON.parse(run.stdout));
    expect(v.cause).toMatchObject({ kind: "config-assertion", ruleId: "HCP002" });
  });

  it("markdown for a job summary: status heading, cause, evidence in a code block", async () => {
    const run = await hcpBot("verdict", log("c_nccl_cp2_flat.log"), "--exit-code", "0", "--format", "markdown");
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("### ⚠️ HCP smoke run: HCP INACTIVE");
    expect(run.stdout).toContain("**Cause:** hcp-flat");
    expect(run.stdout).toMatch(/```text\n[\s\S]*CONTEXT_PARALLEL_GROUP[\s\S]*\n```/);
  });

  it("--no-expect-hcp lets a trained flat run pass, unless the log's configuration asks for a2a+p2p", async () => {
    const flat = join(tmp, "flat.log");
    const flatConfig = ["Configuration Summary (Non-Default Values vs Megatron Core)", "  context_parallel_size: 4  (Mcore default: 1)", "  cp_comm_type: 'p2p'  (Mcore default: None)"];
    writeFileSync(flat, trainingLog({ config: flatConfig, hcp: [] }));
    expect((await hcpBot("verdict", flat, "--exit-code", "0")).code).toBe(1); // HCP expected: config-mismatch
    expect((await hcpBot("verdict", flat, "--exit-code", "0", "--no-expect-hcp")).code).toBe(0);
    const asked = join(tmp, "asked.log");
    writeFileSync(asked, trainingLog({ hcp: FLAT_NAMES })); // prints cp_comm_type 'a2a+p2p', names only the flat group
    const run = await hcpBot("verdict", asked, "--exit-code", "0", "--no-expect-hcp", "--format", "json");
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "hcp-inactive", expectHcp: true, hcp: { active: false } });
  });

  it("exit 2 for a missing file, a bad option value and a missing argument", async () => {
    expect((await hcpBot("verdict", join(tmp, "missing.log"))).code).toBe(2);
    expect((await hcpBot("verdict", passing, "--format", "yaml")).code).toBe(2);
    expect((await hcpBot("verdict", passing, "--exit-code", "abc")).code).toBe(2);
    expect((await hcpBot("verdict")).code).toBe(2);
    expect((await hcpBot("verdict", passing, "--expect-hcp", "--no-expect-hcp")).code).toBe(2);
  });
});

/** A real fixture log with two Bridge training steps and the end marker appended (the probe runs trained nothing). */
function trained(name: string): string {
  const file = join(tmp, `trained-${name}`);
  writeFileSync(file, `${readFileSync(log(name), "utf8")}\n${[iterationLine(1, 2), iterationLine(2, 2), "[after training is done] datetime: 2026-11-30 04:43:00 "].join("\n")}\n`);
  return file;
}

const json = (stdout: string) => VerdictSchema.parse(JSON.parse(stdout));

describe("hcp-bot verdict: CP on but not hierarchical (issue 27 item 12)", () => {
  // fixtures/logs/README.md: case a ran CP=2 with HCP_SIZES=2,1 on 2 GPUs; its construction
  // lines show L0 of size 2 and L1 of size 1, so the request below is the one it answers.
  const request = ["--cp", "2", "--sizes", "2,1", "--cp-comm-type", "a2a+p2p", "--world-size", "2"];

  it("a_nccl_cp2_hcp2x1 trained, judged against its own request [2, 1]: hcp-degenerate with the sizes to use instead, exit 1", async () => {
    const file = trained("a_nccl_cp2_hcp2x1.log");
    const run = await hcpBot("verdict", file, "--exit-code", "0", ...request, "--format", "json");
    expect(run.code).toBe(1);
    const v = json(run.stdout);
    expect(v.status).toBe("hcp-degenerate");
    expect(v.hcp).toMatchObject({ active: false, levelSizes: [2, 1], hierarchicalLines: 40 });
    expect(v.cause).toMatchObject({ kind: "hcp-degenerate", ruleId: "HCP004" });
    expect(v.cause?.message).toContain("makes a2a+p2p plain a2a");
    // CP 2 has no split into two levels above 1: the fix says so and names the single-level type.
    expect(v.cause?.fix).toContain("context_parallel_size 2 cannot be split into two levels both above 1: set cp_comm_type 'a2a'");
    const text = await hcpBot("verdict", file, "--exit-code", "0", ...request);
    expect(text.stdout).toMatch(/^HCP smoke verdict: HCP NOT HIERARCHICAL \(exit 0\)/);
    expect(text.stdout).toContain("  fix:        context_parallel_size 2 cannot be split");
    const md = await hcpBot("verdict", file, "--exit-code", "0", ...request, "--format", "markdown");
    expect(md.stdout).toContain("### ⚠️ HCP smoke run: HCP NOT HIERARCHICAL");
    expect(md.stdout).toContain("**Fix:** context\\_parallel\\_size 2 cannot be split"); // Markdown-escaped
  });

  it("the same log against a CP=4 [2, 2] request is a mismatch (fail), and untrained it is no-training-step: both outrank the degenerate layout", async () => {
    const mismatch = await hcpBot("verdict", trained("a_nccl_cp2_hcp2x1.log"), "--exit-code", "0", "--cp", "4", "--sizes", "2,2", "--format", "json");
    expect(json(mismatch.stdout)).toMatchObject({ status: "fail", cause: { kind: "config-mismatch" } });
    const untrained = await hcpBot("verdict", log("a_nccl_cp2_hcp2x1.log"), "--exit-code", "0", ...request, "--format", "json");
    expect(untrained.code).toBe(1);
    expect(json(untrained.stdout)).toMatchObject({ status: "fail", cause: { kind: "no-training-step" } });
    const cut = await hcpBot("verdict", log("a_nccl_cp2_hcp2x1.log"), ...request, "--format", "json");
    expect(json(cut.stdout)).toMatchObject({ status: "fail", cause: { kind: "truncated" } });
  });

  it("the real flat log c, trained, stays hcp-inactive (CP silently flat), not hcp-degenerate", async () => {
    const run = await hcpBot("verdict", trained("c_nccl_cp2_flat.log"), "--exit-code", "0", "--cp", "2", "--world-size", "2", "--format", "json");
    expect(json(run.stdout)).toMatchObject({ status: "hcp-inactive", cause: { kind: "hcp-flat" } });
  });

  it("bad --sizes and --cp values are usage errors (exit 2)", async () => {
    expect((await hcpBot("verdict", passing, "--sizes", "2,x")).code).toBe(2);
    expect((await hcpBot("verdict", passing, "--sizes", "0,2")).code).toBe(2);
    expect((await hcpBot("verdict", passing, "--cp", "0")).code).toBe(2);
  });
});

describe("hcp-bot verdict: Bridge's decentralized process groups (issue 27 item 13)", () => {
  // Megatron-Bridge 067f987 src/megatron/bridge/training/initialize.py:785, printed by rank 0 on
  // the use_decentralized_pg=True path, which builds no hierarchical CP group.
  const GRID = "[rank0]:> initialized HyperCommGrid with tp=1, pp=1, cp=4, dp=1";
  const request = ["--exit-code", "0", "--probe-key", PROBE_KEY, "--world-size", "4", "--cp", "4", "--sizes", "2,2", "--format", "json"];

  it("a run that printed it is hcp-inactive (HCP006), with no other evidence and even next to signed HCP reports", async () => {
    const plain = join(tmp, "grid.log");
    writeFileSync(plain, trainingLog({ hcp: [GRID] }));
    const alone = json((await hcpBot("verdict", plain, ...request)).stdout);
    expect(alone).toMatchObject({ status: "hcp-inactive", cause: { kind: "hcp-flat", ruleId: "HCP006", line: 12 }, hcp: { active: false } });
    expect(alone.cause?.message).toContain("HyperCommGrid (tp=1, pp=1, cp=4, dp=1)");
    expect(alone.cause?.fix).toContain("dist.use_decentralized_pg=False");
    expect(alone.hcp.evidence).toEqual([{ kind: "decentralized-pg", line: 12, text: GRID.slice("[rank0]:".length) }]);
    // The line is evidence against the run only: it turns what would pass into hcp-inactive.
    const mixed = join(tmp, "grid-mixed.log");
    writeFileSync(mixed, trainingLog({ hcp: [...HCP_NAMES, ...probeLines(true), GRID] }));
    const run = await hcpBot("verdict", mixed, ...request);
    expect(run.code).toBe(1);
    expect(json(run.stdout)).toMatchObject({ status: "hcp-inactive", cause: { kind: "hcp-flat", ruleId: "HCP006" } });
    const without = join(tmp, "grid-absent.log");
    writeFileSync(without, trainingLog({ hcp: [...HCP_NAMES, ...probeLines(true)] }));
    expect((await hcpBot("verdict", without, ...request)).code).toBe(0);
  });

  it("a run that need not prove HCP is not judged by it", async () => {
    const flat = join(tmp, "grid-flat.log");
    writeFileSync(flat, trainingLog({ config: ["Configuration Summary (Non-Default Values vs Megatron Core)", "  context_parallel_size: 4  (Mcore default: 1)", "  cp_comm_type: 'p2p'  (Mcore default: None)"], hcp: [GRID] }));
    expect((await hcpBot("verdict", flat, "--exit-code", "0", "--no-expect-hcp")).code).toBe(0);
  });
});
