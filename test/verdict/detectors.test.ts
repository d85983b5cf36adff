// Each detector on its own (what the front-door tests in training/fixtures/real-probe rely on),
// and decide() on hand-made facts: a detector reports what it saw, decide() alone ranks it.
import { describe, expect, it } from "vitest";
import { ChildFailedDetector } from "../../src/core/verdict/detectors/child-failed.ts";
import { ConfigDetector } from "../../src/core/verdict/detectors/config.ts";
import { DecentralizedPgDetector } from "../../src/core/verdict/detectors/decentralized-pg.ts";
import { IterationDetector } from "../../src/core/verdict/detectors/iterations.ts";
import { ProbeReportDetector } from "../../src/core/verdict/detectors/probe-reports.ts";
import { ProcessGroupDetector } from "../../src/core/verdict/detectors/process-groups.ts";
import { SignatureDetector } from "../../src/core/verdict/detectors/signatures.ts";
import { TracebackDetector } from "../../src/core/verdict/detectors/tracebacks.ts";
import { decide, type VerdictFacts } from "../../src/core/verdict/decide.ts";
import { Findings } from "../../src/core/verdict/findings.ts";
import { VerdictOptionsSchema, type Cause } from "../../src/core/verdict/schema.ts";
import { constructionLine, iterationLine, PROBE_KEY, probeLines } from "./logs.ts";

describe("ConfigDetector", () => {
  function feedAll(lines: string[]): ConfigDetector {
    const d = new ConfigDetector(new Findings());
    lines.forEach((l, i) => {
      if (d.isOpen && d.feed(l, i + 1)) return;
      if (/context|cp_comm_type|onfigurat/.test(l)) d.line(l, i + 1);
    });
    d.finish(lines.length + 1);
    return d;
  }

  it("reads the summary's values and stays open only for the summary block", () => {
    const d = feedAll(["Configuration Summary (Non-Default Values vs Megatron Core)", "", "[model] Non-default values (vs Mcore TransformerConfig):", "  context_parallel_size: 4  (Mcore default: 1)", "  cp_comm_type: 'a2a+p2p'  (Mcore default: None)", "", "after"]);
    expect(d.isOpen).toBe(false);
    expect(d.facts()).toMatchObject({ configSummary: true, sizesAbsentLine: null, config: { contextParallelSize: 4, cpCommType: ["a2a+p2p"], hierarchicalSizesState: "unknown" } });
  });

  it("a field sorted after hierarchical_context_parallel_sizes without it: the line that proves it absent", () => {
    const d = feedAll(["Configuration Summary (Non-Default Values vs Megatron Core)", "[model] Non-default values (vs Mcore TransformerConfig):", "  cp_comm_type: 'a2a+p2p'  (Mcore default: None)", "  num_layers: 2  (Mcore default: 1)"]);
    expect(d.facts()).toMatchObject({ sizesAbsentLine: 4, config: { hierarchicalSizesState: "none" } });
  });

  it("YAML block lists and Megatron-LM's argument lines", () => {
    expect(feedAll(["Final configuration:", "model:", "  hierarchical_context_parallel_sizes:", "  - 2", "  - 4", "train:", "  x: 1"]).facts().config).toMatchObject({ hierarchicalSizes: [2, 4], sources: ["yaml"] });
    expect(feedAll(["using world size: 4, data-parallel size: 1, context-parallel size: 4, hierarchical context-parallel sizes: [2, 2], tensor-model-parallel size: 1"]).facts().config).toMatchObject({ contextParallelSize: 4, hierarchicalSizes: [2, 2], sources: ["mlm-args"] });
  });
});

describe("ProcessGroupDetector", () => {
  const named = (rank: number | null, pgId: number, guid: number, desc: string, groupRank = 0) => [`[PG ID ${pgId} PG GUID ${guid}(${desc}) Rank ${groupRank}] Using non-blocking mode: 0`, rank] as const;

  it("counts a named line only after the same rank's construction line of that group; sizes come from it", () => {
    const d = new ProcessGroupDetector(new Findings());
    const [l0] = named(0, 5, 10, "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0");
    d.names(l0, 0, 1, l0); // before its construction: not evidence
    d.construction(constructionLine(0, 5, 10, 0, 2).slice("[rank0]:".length));
    d.names(l0, 0, 3, l0);
    d.names(l0, 1, 4, l0); // printed as rank 1: the construction was rank 0's
    d.names(l0, null, 5, l0); // teardown lines carry no [rankN]: prefix; the group rank links them
    expect(d.facts()).toMatchObject({ hierarchicalLines: 2, unlinkedLines: 2, levels: [0], levelSizes: [2] });
  });

  it("a construction line whose PG Name is not its GUID is not one", () => {
    const d = new ProcessGroupDetector(new Findings());
    d.construction(constructionLine(0, 5, 10, 0, 2).replace("PG Name: 10", "PG Name: 11"));
    const [l0] = named(0, 5, 10, "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0");
    d.names(l0, 0, 2, l0);
    expect(d.facts().hierarchicalLines).toBe(0);
  });

  it("flat lines from teardown mark the run as past its collectives", () => {
    const d = new ProcessGroupDetector(new Findings());
    d.construction(constructionLine(1, 4, 9, 1, 4));
    const line = "[PG ID 4 PG GUID 9(CONTEXT_PARALLEL_GROUP) Rank 1] Destroy complete.";
    d.names(line, 1, 2, line);
    expect(d.facts()).toMatchObject({ flatLines: 1, flatTornDown: true, hierarchicalLines: 0 });
  });
});

describe("ProbeReportDetector", () => {
  it("trusts only reports whose MAC verifies with the key; without a key none", () => {
    const lines = probeLines(true);
    const keyed = new ProbeReportDetector(new Findings(), PROBE_KEY);
    const keyless = new ProbeReportDetector(new Findings(), undefined);
    for (const l of [...lines, lines[0]!.replace('"rank":0', '"rank":1')]) {
      keyed.line(l, 1);
      keyless.line(l, 1);
    }
    expect(keyed.facts()).toMatchObject({ keyGiven: true, trusted: 4, untrusted: 1, levels: [0, 1] });
    expect(keyed.facts().ranks.map((r) => [r.rank, r.levelSizes])).toEqual([[0, [2, 2]], [1, [2, 2]], [2, [2, 2]], [3, [2, 2]]]);
    expect(keyless.facts()).toMatchObject({ keyGiven: false, trusted: 0, untrusted: 5, ranks: [] });
  });

  it("marks a rank whose later report shows another layout, and a group that does not hold the rank", () => {
    const d = new ProbeReportDetector(new Findings(), PROBE_KEY);
    d.line(probeLines(true)[0]!, 1);
    d.line(probeLines(false)[0]!, 2);
    expect(d.facts().ranks[0]).toMatchObject({ rank: 0, conflicting: true, levelSizes: null });
  });
});

describe("IterationDetector, TracebackDetector, ChildFailedDetector, SignatureDetector", () => {
  it("iterations: counts, NaN as a candidate, TFLOP/s maximum, markers", () => {
    const f = new Findings();
    const d = new IterationDetector(f);
    d.iteration(iterationLine(1, 3, { tflops: 300 }), 1);
    d.iteration(iterationLine(2, 3, { tflops: 450 }), 2);
    d.iteration(iterationLine(3, 3, { loss: "nan", nan: 1 }), 3);
    d.done("[after training is done]", 4);
    expect(d.facts()).toMatchObject({ count: 3, finiteLossCount: 2, nanIterations: 1, maxTflops: 450, maxTflopsLine: 2, trainingDone: true });
    expect(f.candidates).toMatchObject([{ kind: "nan-loss", line: 3 }]);
  });

  it("tracebacks: one per rank, the exception line decides; ChildFailedError opens torchrun's box", () => {
    const f = new Findings();
    const box = new ChildFailedDetector(f);
    const tb = new TracebackDetector(f, () => "", (line) => box.open(line));
    tb.start(1, 1, "Traceback (most recent call last):");
    tb.feed('  File "/opt/megatron/core/parallel_state.py", line 1128, in initialize_model_parallel', 1, 2);
    tb.feed("    assert np.prod(hierarchical_context_parallel_sizes) == context_parallel_size", 1, 3);
    tb.feed("AssertionError", 1, 4);
    tb.start(null, 5, "Traceback (most recent call last):");
    tb.feed("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", null, 6);
    for (const l of ["Root Cause (first observed failure):", "[0]:", "  rank      : 1 (local_rank: 1)", "  exitcode  : -9 (pid: 7)", "=========="]) box.feed(l, 7);
    expect(f.candidates.map((c) => [c.kind, c.ruleId, c.rank])).toEqual([
      ["config-assertion", "HCP002", 1],
      ["child-failed", undefined, 1],
    ]);
    expect(box.facts().childFailed?.rootCause).toMatchObject({ rank: 1, exitcode: -9, signal: "SIGKILL" });
  });

  it("signatures: catalogue lines become candidates; torchrun's launcher line is kept for an unexplained exit", () => {
    const f = new Findings();
    const d = new SignatureDetector(f);
    d.failureLine("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", 0, 1);
    d.failureLine("E1130 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) local_rank: 0 (pid: 12) of binary: python3", null, 2);
    expect(f.candidates).toMatchObject([{ kind: "cuda-oom", rank: 0 }]);
    expect(d.facts().launcherFailure).toEqual({ line: 2, exitcode: 1, localRank: 0 });
  });
});

describe("decentralized process groups (Bridge 067f987 training/initialize.py:637, 646, 785)", () => {
  it("reads Bridge's HyperCommGrid lines, the dist-train ones too, and keeps the first", () => {
    const f = new Findings();
    const d = new DecentralizedPgDetector(f);
    d.line("HyperCommGrid is mentioned here without the print", 1);
    expect(d.facts().grid).toBeNull();
    d.line("> initialized HyperCommGrid for vision model with tp=2, pp=1, cp=1, dp=2", 2);
    d.line("> initialized HyperCommGrid with tp=1, pp=1, cp=8, dp=1", 3);
    expect(d.facts().grid).toEqual({ line: 2, tp: 2, pp: 1, cp: 1, dp: 2 });
    expect(f.evidence).toEqual([{ kind: "decentralized-pg", line: 2, text: "> initialized HyperCommGrid for vision model with tp=2, pp=1, cp=1, dp=2" }]);
  });
});

describe("decide()", () => {
  const opts = VerdictOptionsSchema.parse({ expectHcp: true, worldSize: 2 });
  const facts = (over: Partial<VerdictFacts> = {}): VerdictFacts => ({
    iterations: { count: 1, finiteLossCount: 1, nanIterations: 0, skippedIterations: 0, first: null, last: null, startIteration: 0, firstNanLine: null, tflopsSamples: 0, maxTflops: null, maxTflopsLine: null, trainingDone: true, trainingDoneLine: 9 },
    config: { config: { cpCommType: null, contextParallelSize: null, hierarchicalSizes: null, hierarchicalSizesState: "unknown", useDecentralizedPg: null, evalContextParallelSize: null, sources: [] }, configSummary: false, finalConfiguration: false, sizesAbsentLine: null },
    groups: { hierarchicalLines: 0, flatLines: 0, unlinkedLines: 0, levels: [], levelSizes: [], flatTornDown: false },
    probe: {
      keyGiven: true,
      trusted: 2,
      untrusted: 0,
      failed: 0,
      levels: [0, 1],
      ranks: [0, 1].map((rank) => ({ rank, line: 1, worldSize: 2, cpSize: 2, levelSizes: [2, 2], malformedGroups: false, conflicting: false })),
      untrustedFlat: null,
    },
    decentralized: { grid: null },
    childFailed: null,
    launcherFailure: null,
    candidates: [],
    evidence: [],
    hcpEvidence: [],
    notes: [],
    stats: { bytes: 0, lines: 10, examinedLines: 3 },
    ...over,
  });
  const cause = (kind: Cause["kind"], rank: number | null): Cause => ({ kind, message: kind, line: 1, rank });

  it("passes on complete authenticated reports and a clean exit; the same facts with no exit status do not", () => {
    expect(decide(facts(), opts, 0, {}).status).toBe("pass");
    expect(decide(facts(), opts, null, {}).cause?.kind).toBe("exit-unknown");
  });

  it("ranks causes: a config assertion first, also of a rank other than torchrun's root cause; other kinds of that rank after the root cause's", () => {
    const childFailed = { script: "x", rootCause: { rank: 0, localRank: 0, exitcode: 1, signal: null, pid: 1 }, failures: [], line: 5 };
    const f = facts({ childFailed, candidates: [cause("python-exception", 0), cause("nccl", 1), cause("config-assertion", 1)] });
    const v = decide(f, opts, 1, {});
    expect(v.cause).toMatchObject({ kind: "config-assertion", rank: 1 });
    expect(v.otherFailures.map((c) => c.kind)).toEqual(["python-exception", "nccl"]);
  });

  it("a level of size 1 is hcp-degenerate, after a log cut off and no training step, before an unknown exit status", () => {
    const degenerate = (over: Partial<VerdictFacts["iterations"]> = {}) => {
      const f = facts();
      return { ...f, iterations: { ...f.iterations, ...over }, probe: { ...f.probe, ranks: f.probe.ranks.map((r) => ({ ...r, levelSizes: [2, 1] })) } };
    };
    expect(decide(degenerate(), opts, 0, {})).toMatchObject({ status: "hcp-degenerate", cause: { kind: "hcp-degenerate", ruleId: "HCP004" } });
    expect(decide(degenerate(), opts, null, {})).toMatchObject({ status: "hcp-degenerate" }); // trained to the end: the layout is known
    expect(decide(degenerate({ trainingDone: false }), opts, null, {})).toMatchObject({ status: "fail", cause: { kind: "truncated" } });
    expect(decide(degenerate({ finiteLossCount: 0 }), opts, 0, {})).toMatchObject({ status: "fail", cause: { kind: "no-training-step" } });
    const crashed = { ...degenerate(), candidates: [cause("python-exception", 0)] };
    expect(decide(crashed, opts, 1, {})).toMatchObject({ status: "fail", cause: { kind: "python-exception" } });
  });

  it("fix text: the two-level splits of CP when it has one, else the single-level type", () => {
    const withCp = (cp: number, sizes: number[]) => {
      const f = facts();
      return decide({ ...f, probe: { ...f.probe, ranks: f.probe.ranks.map((r) => ({ ...r, cpSize: cp, levelSizes: sizes })) } }, opts, 0, {}).cause?.fix;
    };
    expect(withCp(16, [16, 1])).toContain("context_parallel_size 16: [8,2], [4,4], [2,8]");
    expect(withCp(3, [1, 3])).toContain("context_parallel_size 3 cannot be split into two levels both above 1: set cp_comm_type 'p2p'");
  });

  it("a timeout outranks what the kill printed", () => {
    const killed = { ...cause("python-exception", null), message: "SignalException: Process 1 got signal: 15" };
    expect(decide(facts({ candidates: [killed] }), opts, null, { timedOut: true }).cause?.kind).toBe("timeout");
  });
});
