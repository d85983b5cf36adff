// `hcp-bot verdict` through the real binary: exit codes and formats.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VerdictSchema } from "../../src/core/verdict/index.ts";
import { hcpBot as runHcpBot } from "../support/cli.ts";
import { FLAT_NAMES, PROBE_KEY, trainingLog } from "./logs.ts";

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
