// The verdict on every real GPU log in fixtures/logs (see fixtures/logs/README.md). These are
// probe runs, not training runs: none prints a Bridge iteration line, so none can pass. What
// each gets follows the rules in parser.ts: a failure in the log decides first; then, when HCP
// was expected, positive proof that it was off (hcp-inactive); then "no training step", which
// outranks a layout that is on but not hierarchical (hcp-degenerate).
// Exit codes are the ones the README records for each case.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createVerdictParser, VerdictSchema, type Verdict } from "../../src/core/verdict/index.ts";

const dir = join(import.meta.dirname, "..", "..", "fixtures", "logs");

function verdictForFile(name: string, exitCode: number | null, expectHcp = true): Verdict {
  const parser = createVerdictParser({ expectHcp });
  const bytes = readFileSync(join(dir, name));
  // 4 KiB chunks, like a pipe: lines and rank output are cut anywhere.
  for (let i = 0; i < bytes.length; i += 4096) parser.push(bytes.subarray(i, i + 4096));
  return VerdictSchema.parse(parser.end(exitCode));
}

describe("verdict on the real fixture logs (expectHcp)", () => {
  it("a_nccl_cp2_hcp2x1: the L0/L1 names link to their construction lines, which show L1 of size 1 → not hierarchical (HCP004), but it trained nothing: no-training-step first", () => {
    const v = verdictForFile("a_nccl_cp2_hcp2x1.log", 0);
    expect(v.hcp.hierarchicalLines).toBe(40); // README section 5: a 40/20, every one linked
    expect(v.hcp.flatLines).toBe(20);
    expect(v.hcp.unlinkedLines).toBe(0);
    expect(v.hcp.levels).toEqual([0, 1]);
    expect(v.hcp.levelSizes).toEqual([2, 1]); // `size: 1` on the L1 groups' construction lines
    expect(v.hcp.active).toBe(false); // a level of size 1: a2a+p2p is plain a2a
    // `[probe rank N] … desc=HIERARCHICAL…` annotations are not evidence; the C++ prefixes are.
    expect(v.hcp.evidence.every((e) => e.text.includes("PG GUID"))).toBe(true);
    // A probe run, not a training run: "no training step" outranks the degenerate layout,
    // which stays in the notes.
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("no-training-step");
    expect(v.notes).toContain("a hierarchical level has size 1 (torch's ProcessGroupNCCL construction lines: [2,1]): a2a+p2p degenerates to a single level (HCP004)");
  });

  it("a_nccl_cp2_hcp2x1 cut off (no exit status, no end marker): the log cut off outranks the degenerate layout", () => {
    const v = verdictForFile("a_nccl_cp2_hcp2x1.log", null);
    expect(v.hcp.levelSizes).toEqual([2, 1]);
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("truncated");
  });

  it("a without expecting HCP: nothing marks the end of a run without an exit status → truncated", () => {
    const v = verdictForFile("a_nccl_cp2_hcp2x1.log", null, false);
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("truncated");
  });

  it("c_nccl_cp2_flat: only (CONTEXT_PARALLEL_GROUP) is named, through teardown → HCP positively off", () => {
    const v = verdictForFile("c_nccl_cp2_flat.log", 0);
    expect(v.hcp.active).toBe(false);
    expect(v.hcp.hierarchicalLines).toBe(0);
    expect(v.hcp.flatLines).toBe(20);
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause?.kind).toBe("hcp-flat");
    expect(v.notes).toContain("no Bridge iteration line in the log");
  });

  it("c without expecting HCP: the flat run is fine, but it trained nothing → no-training-step", () => {
    const v = verdictForFile("c_nccl_cp2_flat.log", 0, false);
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("no-training-step");
  });

  it("d_nccl_cp2_hcp2x2_mismatch: bare AssertionError at parallel_state.py:1128 (M4) → config-assertion HCP002, then the ChildFailedError box", () => {
    const v = verdictForFile("d_nccl_cp2_hcp2x2_mismatch.log", 1);
    expect(v.status).toBe("fail");
    expect(v.cause).toMatchObject({ kind: "config-assertion", ruleId: "HCP002", upstream: "M4", rank: 0, line: 64 });
    expect(v.cause?.message).toContain("np.prod(hierarchical_context_parallel_sizes)");
    // No group desc appears at all: it died before any CP collective (README: d 0/0).
    expect(v.hcp.active).toBeNull();
    expect(v.childFailed?.script).toBe("probe_hcp.py");
    expect(v.childFailed?.rootCause).toEqual({ rank: 0, localRank: 0, exitcode: 1, signal: null, pid: 1250 });
    expect(v.childFailed?.failures).toEqual([{ rank: 1, localRank: 1, exitcode: 1, signal: null, pid: 1251 }]);
    expect(v.otherFailures.map((f) => f.kind)).toEqual(expect.arrayContaining(["child-failed", "config-assertion"]));
  });

  it("e_gloo_cp4_hcp2x2: Gloo names no group, so the log cannot tell → hcp.active null, no-training-step", () => {
    const v = verdictForFile("e_gloo_cp4_hcp2x2.log", 0);
    expect(v.hcp.active).toBeNull();
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("no-training-step");
  });

  it("g_nccl_cp2_hcp2x1_fail_rank1: rank 1's RuntimeError is the root cause; rank 0 only named the flat group before SIGTERM, which proves nothing", () => {
    const v = verdictForFile("g_nccl_cp2_hcp2x1_fail_rank1.log", 1);
    expect(v.status).toBe("fail");
    expect(v.cause).toMatchObject({ kind: "python-exception", rank: 1, line: 129 });
    expect(v.cause?.message).toBe("RuntimeError: probe: injected failure on rank 1 after initialize_model_parallel");
    expect(v.hcp.flatLines).toBe(2); // README: g 0/2
    expect(v.hcp.active).toBeNull(); // died before the run got far enough to name HCP groups
    expect(v.childFailed?.rootCause).toMatchObject({ rank: 1, exitcode: 1 });
    expect(v.childFailed?.failures[0]).toMatchObject({ rank: 0, exitcode: -15, signal: "SIGTERM" });
  });

  it("h_nccl_cp2_hcp2x1_default_verbosity: default torch verbosity names no group → cannot tell; no-training-step", () => {
    const v = verdictForFile("h_nccl_cp2_hcp2x1_default_verbosity.log", 0);
    expect(v.hcp.active).toBeNull();
    expect(v.hcp.probeReports).toBe(0); // `[probe rank N] HCP level L0: …` is the fixture's annotation
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("no-training-step");
  });

  it("m_oom_default: torch.OutOfMemoryError on rank 1, the box's root cause → cuda-oom", () => {
    const v = verdictForFile("m_oom_default.log", 1);
    expect(v.status).toBe("fail");
    expect(v.cause).toMatchObject({ kind: "cuda-oom", rank: 1, line: 13 });
    expect(v.cause?.message).toContain("CUDA out of memory. Tried to allocate 186.27 GiB");
    expect(v.hcp.active).toBeNull();
    expect(v.childFailed?.rootCause).toMatchObject({ rank: 1, localRank: 1, exitcode: 1 });
  });

  it("o_nccl_timeout_cppinfo: watchdog timeout on rank 0, SIGABRT (exitcode -6) → nccl", () => {
    const v = verdictForFile("o_nccl_timeout_cppinfo.log", 1);
    expect(v.status).toBe("fail");
    expect(v.cause).toMatchObject({ kind: "nccl", rank: 0, line: 26 });
    expect(v.cause?.message).toContain("Watchdog caught collective operation timeout");
    expect(v.childFailed?.rootCause).toEqual({ rank: 0, localRank: 0, exitcode: -6, signal: "SIGABRT", pid: 775 });
    expect(v.otherFailures.some((f) => f.message.includes("DistBackendError"))).toBe(true);
    expect(v.hcp.active).toBeNull(); // only (default_pg) is named
  });

  it("the verdict's line count matches the file", () => {
    const v = verdictForFile("a_nccl_cp2_hcp2x1.log", 0);
    expect(v.stats.lines).toBe(520);
    expect(v.stats.bytes).toBe(72097);
  });
});

describe("the same logs as a GitHub Actions job log (the bot's fallback when no artifact was uploaded)", () => {
  /** GitHub writes an ISO timestamp with 7 fractional digits before every job-log line. */
  function asJobLog(text: string): string {
    return text
      .split("\n")
      .map((line, i) => (line === "" && i > 0 ? line : `2026-11-30T04:42:${String(i % 60).padStart(2, "0")}.${String(1234567 + i).slice(-7)}Z ${line}`))
      .join("\n");
  }

  function verdictOfText(text: string, exitCode: number | null): Verdict {
    const parser = createVerdictParser({ expectHcp: true });
    parser.push(new TextEncoder().encode(text));
    return VerdictSchema.parse(parser.end(exitCode));
  }

  it.each([
    ["a_nccl_cp2_hcp2x1.log", 0],
    ["c_nccl_cp2_flat.log", 0],
    ["d_nccl_cp2_hcp2x2_mismatch.log", 1],
    ["g_nccl_cp2_hcp2x1_fail_rank1.log", 1],
    ["m_oom_default.log", 1],
    ["o_nccl_timeout_cppinfo.log", 1],
  ] as const)("%s: timestamps change nothing but the byte count (tracebacks and torchrun's box included)", (name, exitCode) => {
    const text = readFileSync(join(dir, name), "utf8");
    const plain = verdictOfText(text, exitCode);
    const stamped = verdictOfText(asJobLog(text), exitCode);
    expect(stamped.stats.bytes).toBeGreaterThan(plain.stats.bytes);
    expect({ ...stamped, stats: { ...stamped.stats, bytes: 0 } }).toEqual({ ...plain, stats: { ...plain.stats, bytes: 0 } });
    if (exitCode === 1) expect(stamped.childFailed?.rootCause).not.toBeNull();
  });
});
