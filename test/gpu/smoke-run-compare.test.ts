// `hcp-bot smoke-run --compare p2p` through the real binary and the fake torchrun over fake
// torch and Megatron-Core (test/gpu/fixtures): the HCP leg, then the reference leg with only
// cp_comm_type and the sizes changed, each with its own probe key, both logs and verdicts
// hashed in the runner's report.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { findRunnerReport } from "../../src/core/smoke/runner-report.ts";
import { verdictOf } from "../../src/core/verdict/index.ts";
import { VerdictSchema } from "../../src/core/verdict/schema.ts";
import { baseEnv, fixtures, hcpBot, type Run, tempDir } from "./helpers.ts";

const HCP_OVERRIDES = ["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"];

function bridgeRun(): { dir: string; checkout: string } {
  const dir = tempDir();
  const checkout = join(dir, "checkout");
  mkdirSync(join(checkout, "scripts", "training"), { recursive: true });
  copyFileSync(join(fixtures, "bridge", "scripts", "training", "run_recipe.py"), join(checkout, "scripts", "training", "run_recipe.py"));
  return { dir, checkout };
}

const torchrunEnv = (dir: string, extra: Record<string, string> = {}) => ({
  ...baseEnv({ FAKE_UV_TORCHRUN: "1", PYTHONPATH: [join(fixtures, "python-torch"), join(fixtures, "python")].join(delimiter), ...extra }),
  RUNNER_TEMP: dir,
});

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("smoke-run --compare p2p", () => {
  const { dir, checkout } = bridgeRun();
  const out = join(dir, "hcp-smoke-out");
  let run: Promise<Run>;
  beforeAll(() => {
    run = hcpBot(["smoke-run", "--recipe", "llama32_1b_pretrain_config", "--nproc", "4", "--compare", "p2p", "--", ...HCP_OVERRIDES], { cwd: checkout, env: torchrunEnv(dir) });
  });

  it("runs both legs; the exit status is the HCP leg's pass", async () => {
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/reference leg: the same run with model\.cp_comm_type=p2p and no hierarchical sizes/);
    expect(r.stdout).toMatch(/hcp-bot smoke: A\/B HCP 1\.00x the p2p throughput/);
  });

  it("the reference leg changes only cp_comm_type and the sizes", async () => {
    await run;
    const record = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as { argv: string[]; reference: { argv: string[] } };
    // Besides the launcher of each leg's own probe dir (a fresh key each).
    const launcher = record.argv.findIndex((a) => a.endsWith("/launch.py"));
    expect(record.reference.argv[launcher]).toMatch(/\/launch\.py$/);
    const diff = record.argv.map((a, i) => [a, record.reference.argv[i]]).filter(([a, b], i) => a !== b && i !== launcher);
    expect(diff).toEqual([
      ["model.cp_comm_type=a2a+p2p", "model.cp_comm_type=p2p"],
      ["model.hierarchical_context_parallel_sizes=[2,2]", "model.hierarchical_context_parallel_sizes=null"],
    ]);
    expect(record.reference.argv).toHaveLength(record.argv.length);
  });

  it("writes both logs and verdicts, each leg with its own probe key, and judges each leg for its own layout", async () => {
    await run;
    const hcp = JSON.parse(readFileSync(join(out, "verdict.json"), "utf8")) as { probeKey: string };
    const ref = JSON.parse(readFileSync(join(out, "reference.verdict.json"), "utf8")) as { probeKey: string };
    expect(hcp.probeKey).not.toBe(ref.probeKey);
    expect(VerdictSchema.parse(hcp).status).toBe("pass");
    const refVerdict = VerdictSchema.parse(ref);
    expect(refVerdict.hcp.active).toBe(false);
    expect(refVerdict.config.cpCommType).toEqual(["p2p"]);
    // The bot's recomputation from the reference log with its key agrees.
    const again = verdictOf(readFileSync(join(out, "reference.log"), "utf8"), { expectHcp: false, worldSize: 4, probeKey: ref.probeKey, cpCommType: "p2p", contextParallelSize: 4 }, 0);
    expect(again.status).toBe(refVerdict.status);
    expect(again.hcp.probeReports).toBe(4);
  });

  it("the report after the nonce hashes all four files", async () => {
    const r = await run;
    const report = await findRunnerReport(r.stdout);
    expect(report.ok).toBe(true);
    if (!report.ok) return;
    for (const name of ["smoke.log", "verdict.json", "reference.log", "reference.verdict.json"] as const) {
      expect(report.digests[name]?.sha256, name).toBe(sha256(join(out, name)));
    }
  });
});

describe("smoke-run --compare when the HCP leg fails", () => {
  it("skips the reference leg (no GPU time for a comparison that cannot be made)", async () => {
    const { dir, checkout } = bridgeRun();
    // Sizes that do not multiply to CP: Megatron-Core's assertion fails the HCP leg.
    const r = await hcpBot(["smoke-run", "--recipe", "llama32_1b_pretrain_config", "--nproc", "4", "--compare", "p2p", "--", "model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,4]"], { cwd: checkout, env: torchrunEnv(dir) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the p2p reference leg is skipped: the run itself failed/);
    expect(existsSync(join(dir, "hcp-smoke-out", "reference.log"))).toBe(false);
  });

  it("refuses an unknown mode", async () => {
    const { dir, checkout } = bridgeRun();
    const r = await hcpBot(["smoke-run", "--recipe", "x", "--compare", "ring"], { cwd: checkout, env: torchrunEnv(dir) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/compare/);
  });
});
