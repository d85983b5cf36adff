// The verdict on the real probe logs of fixtures/logs/real-probe (real Megatron-Core, the
// runner's own probe, 4 gloo ranks on a GPU machine): v2 logs are signed with their run's key
// (keys.json), v1 logs come from the unsigned probe of hcp-bot 0.1.0. The runs trained nothing,
// so the pass paths add Bridge iteration lines, and each request matches the run it answers
// unless the test is about a mismatch.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createVerdictParser, requestedLayout, VerdictSchema, type Verdict, type VerdictOptions } from "../../src/core/verdict/index.ts";
import { iterationLine, REAL_PROBE_DIR, REAL_PROBE_KEYS } from "./logs.ts";

const HCP_2X2 = requestedLayout(["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"]);
const TRAINED = [iterationLine(1, 2), iterationLine(2, 2), "[after training is done] datetime: 2026-12-01 18:06:00 "].join("\n") + "\n";

function realLog(name: string, trained = true): Uint8Array {
  const log = readFileSync(join(REAL_PROBE_DIR, name), "utf8");
  return new TextEncoder().encode(trained ? log + TRAINED : log);
}

/** 4 KiB chunks like a pipe; the key of the run unless `options` says otherwise. */
function verdict(name: string, exitCode: number | null, options: Partial<VerdictOptions> = {}, trained = true): Verdict {
  const parser = createVerdictParser({ expectHcp: true, worldSize: 4, ...HCP_2X2, probeKey: REAL_PROBE_KEYS[name], ...options });
  const bytes = realLog(name, trained);
  for (let i = 0; i < bytes.length; i += 4096) parser.push(bytes.subarray(i, i + 4096));
  return VerdictSchema.parse(parser.end(exitCode));
}

describe("signed real probe logs (v2)", () => {
  it("s1 CP=4 [2, 2] with training lines and its run's key: PASS on four authenticated reports that match the request", () => {
    const v = verdict("s1_gloo_cp4_hcp2x2.v2.log", 0);
    expect(v.status).toBe("pass");
    expect(v.hcp).toMatchObject({ active: true, levels: [0, 1], levelSizes: [2, 2], probeReports: 4, ranksReported: [0, 1, 2, 3], untrustedReports: 0 });
    expect(v.hcp.evidence.map((e) => e.kind)).toEqual(["probe", "probe", "probe", "probe"]);
  });

  it("s1 without its key, or with another run's key: every report is untrusted → inconclusive, never a pass", () => {
    for (const probeKey of [undefined, REAL_PROBE_KEYS["s2_gloo_cp4_flat.v2.log"]]) {
      const v = verdict("s1_gloo_cp4_hcp2x2.v2.log", 0, { probeKey });
      expect(v.status).toBe("inconclusive");
      expect(v.cause?.kind).toBe("hcp-unverified");
      expect(v.hcp).toMatchObject({ active: null, probeReports: 0, untrustedReports: 4 });
      expect(v.evidence.filter((e) => e.kind === "untrusted-probe")).toHaveLength(4);
    }
  });

  it.each<[string, Partial<VerdictOptions>, RegExp]>([
    ["another CP size", { contextParallelSize: 8 }, /cp_size 4 \(asked 8\)/],
    ["other sizes", { sizes: [4, 1] }, /level sizes \[2,2\] \(asked \[4,1\]\)/],
    ["another world size", { worldSize: 8 }, /world_size 4 \(asked 8\)/],
  ])("s1 against a request with %s: fail config-mismatch, though no config summary was printed", (_what, request, message) => {
    const v = verdict("s1_gloo_cp4_hcp2x2.v2.log", 0, request);
    expect(v.markers.configSummary).toBe(false);
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("config-mismatch");
    expect(v.cause?.message).toMatch(message);
  });

  it("s1 for an 8-rank request: ranks 4-7 never reported → not a pass even where the request says nothing else", () => {
    const v = verdict("s1_gloo_cp4_hcp2x2.v2.log", 0, { worldSize: 8, contextParallelSize: undefined, sizes: undefined });
    expect(v.status).not.toBe("pass");
  });

  it("s2 flat CP=4: the authenticated reports say no hierarchical groups → hcp-inactive", () => {
    const v = verdict("s2_gloo_cp4_flat.v2.log", 0);
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause?.kind).toBe("hcp-flat");
    expect(v.hcp).toMatchObject({ active: false, probeReports: 4 });
  });

  it("s3 CP=4 [4, 1] asked as [4, 1]: L1 has size 1 on every rank → CP on but not hierarchical (HCP004), hcp-degenerate", () => {
    const v = verdict("s3_gloo_cp4_hcp4x1.v2.log", 0, { sizes: [4, 1] });
    expect(v.hcp).toMatchObject({ active: false, levelSizes: [4, 1], probeReports: 4 });
    expect(v.status).toBe("hcp-degenerate");
    expect(v.cause?.fix).toMatch(/^Use two levels both above 1 whose product is context_parallel_size 4: \[2,2\]/);
    expect(v.cause).toMatchObject({ kind: "hcp-degenerate", ruleId: "HCP004" });
    expect(v.cause?.message).toContain("level sizes [4,1] (from the authenticated HCP-PROBE reports)");
  });

  it("s4 CP=2 with sizes [2, 2]: the bare M4 assertion through the probe's wrapper → config-assertion HCP002; no report", () => {
    const v = verdict("s4_gloo_cp2_hcp2x2_mismatch.v2.log", 1, { worldSize: 2 }, false);
    expect(v.status).toBe("fail");
    expect(v.cause).toMatchObject({ kind: "config-assertion", ruleId: "HCP002", upstream: "M4" });
    expect(v.hcp.probeReports).toBe(0);
    expect(v.childFailed?.rootCause).toMatchObject({ rank: 0, exitcode: 1 });
  });

  it("every v2 report begins its own line (the probe writes a leading newline in one write)", () => {
    for (const name of Object.keys(REAL_PROBE_KEYS)) {
      const lines = readFileSync(join(REAL_PROBE_DIR, name), "utf8").split("\n");
      expect(lines.filter((l) => l.includes("HCP-PROBE")).every((l) => l.startsWith("HCP-PROBE {"))).toBe(true);
    }
  });
});

describe("unsigned real probe logs of hcp-bot 0.1.0 (v1)", () => {
  it("s2: all four reports are found, also the two that start in the middle of another rank's line, and all are untrusted", () => {
    const text = readFileSync(join(REAL_PROBE_DIR, "s2_gloo_cp4_flat.v1.log"), "utf8");
    expect(text.split("\n").filter((l) => /.HCP-PROBE /.test(l))).toHaveLength(2); // mid-line
    const v = verdict("s2_gloo_cp4_flat.v1.log", 0, { probeKey: REAL_PROBE_KEYS["s2_gloo_cp4_flat.v2.log"] });
    expect(v.hcp).toMatchObject({ untrustedReports: 4, probeReports: 0, active: false });
    // An unsigned flat report is no evidence for a pass, but it may count against the run.
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause).toMatchObject({ kind: "hcp-flat" });
    expect(v.cause?.message).toContain("is not authenticated, but a report against the run counts");
  });

  it("s1: unsigned HCP reports do not make a pass", () => {
    const v = verdict("s1_gloo_cp4_hcp2x2.v1.log", 0, { probeKey: REAL_PROBE_KEYS["s1_gloo_cp4_hcp2x2.v2.log"] });
    expect(v.status).toBe("inconclusive");
    expect(v.hcp.untrustedReports).toBe(4);
  });
});

describe("the regex path gives the same verdicts on the real probe logs", () => {
  it.each(Object.keys(REAL_PROBE_KEYS))("%s", (name) => {
    expect(verdict(name, 0, { anchorScan: "regex" })).toEqual(verdict(name, 0));
  });
});
