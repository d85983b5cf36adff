// The A/B comparison's pure core: the bound, the medians, the summary and the two checks,
// fed with verdicts the real parser makes of real probe logs plus Bridge iteration lines.
import { describe, expect, it } from "vitest";
import { applyComparison, compareLegs, referenceOverrides, seriesOf, speedupBound, speedupSummary } from "../../src/core/ab/index.ts";
import { verdictOf } from "../../src/core/verdict/index.ts";
import { fixtureLog, probeKeyOf } from "../support/bot-harness.ts";

function steps(ms: number[], losses: number[], tflops?: number[]): string {
  return ms
    .map(
      (t, k) =>
        ` [2026-11-30 10:00:0${k + 1}] iteration        ${k + 1}/       ${ms.length} | consumed samples:            ${4 * (k + 1)} | elapsed time per iteration (ms): ${t.toFixed(1)} |${tflops ? ` throughput per GPU (TFLOP/s/GPU): ${tflops[k]!.toFixed(1)} |` : ""} learning rate: 1.000000E-05 | global batch size:     4 | lm loss: ${losses[k]!.toExponential(6).toUpperCase()} | loss scale: 1.0 | grad norm: 3.210 | number of skipped iterations:   0 | number of nan iterations:   0 |`,
    )
    .join("\n");
}

const HCP_LOG = "real-probe/s1_gloo_cp4_hcp2x2.v2.log";
const P2P_LOG = "real-probe/s2_gloo_cp4_flat.v2.log";

function leg(log: string, key: string, text: string, o: { expectHcp: boolean; overrides: string[]; exitCode?: number }) {
  const full = `${fixtureLog(log)}\n${text}\n`;
  const verdict = verdictOf(full, { expectHcp: o.expectHcp, worldSize: 4, probeKey: probeKeyOf(key), contextParallelSize: 4, ...(o.expectHcp ? { cpCommType: "a2a+p2p", sizes: [2, 2] } : { cpCommType: "p2p" }) }, o.exitCode ?? 0);
  return { verdict, series: seriesOf(full) };
}

const hcp = (ms: number[], losses: number[]) => leg(HCP_LOG, "s1_gloo_cp4_hcp2x2.v2.log", steps(ms, losses), { expectHcp: true, overrides: [] });
const p2p = (ms: number[], losses: number[]) => leg(P2P_LOG, "s2_gloo_cp4_flat.v2.log", steps(ms, losses), { expectHcp: false, overrides: [] });

describe("the speedup bound", () => {
  it("is 1/(1 - f r) plus noise: CP 4 [2, 2] allows 1.65x over p2p and 1.32x over a2a", () => {
    expect(speedupBound(4, [2, 2], "p2p")).toMatchObject({ maxSpeedup: 1.65, removable: 0.6667, commShare: 0.5 });
    expect(speedupBound(4, [2, 2], "a2a")?.maxSpeedup).toBe(1.32);
    // CP 16 [8, 2]: the ring keeps 1 of 15 steps, so almost all of the p2p communication can go.
    expect(speedupBound(16, [8, 2], "p2p")?.maxSpeedup).toBe(2.063);
    expect(speedupBound(4, [2, 3], "p2p")).toBeUndefined();
  });
});

describe("referenceOverrides", () => {
  it("changes only cp_comm_type and the sizes, in place", () => {
    const hcpOverrides = ["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]", "train.train_iters=2", "rng.seed=7"];
    expect(referenceOverrides(hcpOverrides, "p2p")).toEqual(["model.context_parallel_size=4", "model.cp_comm_type=p2p", "model.hierarchical_context_parallel_sizes=null", "train.train_iters=2", "rng.seed=7"]);
  });
});

describe("compareLegs", () => {
  it("medians the iterations after the first and says how much faster HCP is", () => {
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([5000, 1000, 1010, 990], [11.77, 11.5, 11.3, 11.1]), reference: p2p([5200, 1180, 1190, 1170], [11.77, 11.5, 11.3, 11.1]) });
    expect(c.status).toBe("compared");
    expect(c.hcp?.msPerIteration).toBe(1000);
    expect(c.reference?.msPerIteration).toBe(1180);
    expect(c.summary).toBe("HCP 1.18x the p2p throughput");
    expect(c.flags).toEqual([]);
    expect(c.hcp?.hcpEvidence).toMatch(/^HCP on \[2, 2\]: 4 signed probe report/);
    expect(c.reference?.hcpEvidence).toMatch(/^flat CP/);
  });

  it("says 'slower by' when HCP loses", () => {
    expect(speedupSummary(0.93, "p2p")).toBe("HCP slower than p2p by 7 %");
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([900, 1075], [11.7, 11.5]), reference: p2p([900, 1000], [11.7, 11.5]) });
    expect(c.summary).toBe("HCP slower than p2p by 7 %");
  });

  it("flags a speedup beyond the bound (AB001) and turns a passing HCP verdict into hcp-inactive", () => {
    const h = hcp([2000, 350], [11.7, 11.5]);
    expect(h.verdict.status).toBe("pass");
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: h, reference: p2p([2100, 1190], [11.7, 11.5]) });
    expect(c.flags.map((f) => f.id)).toEqual(["AB001"]);
    expect(c.flags[0]!.message).toContain("HCP 3.40x the p2p throughput, beyond the 1.65x");
    const judged = applyComparison(h.verdict, c);
    expect(judged.status).toBe("hcp-inactive");
    expect(judged.cause?.kind).toBe("implausible-throughput");
  });

  it("a speedup just under the bound passes", () => {
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([1000, 1000], [11.7, 11.5]), reference: p2p([1000, 1640], [11.7, 11.5]) });
    expect(c.speedup).toBe(1.64);
    expect(c.flags).toEqual([]);
  });

  it("warns (AB002) when the loss differs by more than 1 %, and says the signal is weak", () => {
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([1000, 1000], [11.77, 11.2]), reference: p2p([1000, 1100], [11.77, 11.5]) });
    expect(c.flags.map((f) => [f.id, f.severity])).toEqual([["AB002", "warning"]]);
    expect(c.flags[0]!.message).toMatch(/2\.6 % at iteration 2.*weak signal/);
    expect(c.losses[0]!.relDiff).toBe(0);
    expect(applyComparison(hcp([1000, 1000], [11.77, 11.2]).verdict, c).status).toBe("pass");
  });

  it("a failed reference leg leaves the comparison missing and says why", () => {
    const ref = leg("real-probe/s4_gloo_cp2_hcp2x2_mismatch.v2.log", "s4_gloo_cp2_hcp2x2_mismatch.v2.log", "", { expectHcp: false, overrides: [], exitCode: 1 });
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([1000, 1000], [11.7, 11.5]), reference: ref });
    expect(c.status).toBe("missing");
    expect(c.why).toMatch(/^the p2p reference leg failed \(/);
    expect(c.summary).toMatch(/^No p2p comparison: the p2p reference leg failed/);
    expect(c.hcp?.verdictStatus).toBe("pass");
  });

  it("needs two iterations per leg", () => {
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([1000], [11.7]), reference: p2p([1000], [11.7]) });
    expect(c.status).toBe("missing");
    expect(c.why).toMatch(/fewer than two iterations/);
  });
});

describe("the comparison in Slack", () => {
  it("shows the summary, both legs, the losses and the flags, with log text escaped", async () => {
    const { smokeMessage } = await import("../../src/core/render/slack.ts");
    const c = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([2000, 350], [11.7, 11.2]), reference: p2p([2100, 1190], [11.7, 11.5]) });
    const v = { requestId: "r1", requester: "maint", sha: "e".repeat(40), repo: "acme/mb", pr: 7, plan: { recipe: "llama32_1b_pretrain_config", cp: 4, cpCommType: "a2a+p2p", sizes: [2, 2] as [number, number], gpus: 4, iters: 2, overrides: [], expectHcp: true, compare: "p2p" as const } };
    const verdict = applyComparison(hcp([2000, 350], [11.7, 11.2]).verdict, c);
    const message = smokeMessage(v, { kind: "finished", verdict, comparison: c });
    const text = JSON.stringify(message.blocks);
    expect(text).toContain("*A/B vs p2p:* HCP 3.40x the p2p throughput: flagged (AB001)");
    expect(text).toMatch(/HCP \(a2a\+p2p \(HCP\)\): pass, HCP on \[2, 2\]/);
    expect(text).toMatch(/Reference \(p2p\): pass, flat CP/);
    expect(text).toContain(":warning: *AB002*");
    expect(message.text).toContain("(hcp-inactive)");
    const missing = compareLegs({ mode: "p2p", cp: 4, sizes: [2, 2], hcp: hcp([1000, 1000], [11.7, 11.5]), reference: { missing: "<!channel> look" } });
    const m = JSON.stringify(smokeMessage(v, { kind: "finished", verdict: hcp([1000, 1000], [11.7, 11.5]).verdict, comparison: missing }).blocks);
    expect(m).toContain("&lt;!channel&gt; look");
    expect(m).not.toContain("<!channel>");
  });
});
