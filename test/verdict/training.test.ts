// Training logs built from the Bridge formats of docs/domain.md 4.2/4.3 around real torchrun lines.
import { describe, expect, it } from "vitest";
import { formatProbeLine, verdictOf, VerdictSchema, type Verdict, type VerdictOptions } from "../../src/core/verdict/index.ts";
import { M4_RULE, SIGNATURES } from "../../src/core/verdict/catalog.ts";
import { ruleById } from "../../src/core/rules/index.ts";
import { CHILD_FAILED_BOX, constructionLine, FLAT_NAMES, HCP_NAMES, HCP_SUMMARY, iterationLine, PROBE_KEY, probeLines, rankTraceback, trainingLog } from "./logs.ts";

/** The verdict of a run that asked for HCP, with the run's probe key (as smoke-run and the bot judge). */
function verdict(log: string, exitCode: number | null = 0, options: Partial<VerdictOptions> = {}, extra?: { timedOut?: boolean; signal?: string }): Verdict {
  return VerdictSchema.parse(verdictOf(log, { expectHcp: true, probeKey: PROBE_KEY, ...options }, exitCode, extra));
}

/** A run that died on `exception` raised at `file` on every rank, with torchrun's box. */
function crashed(exception: string, file = "/opt/Megatron-Bridge/src/megatron/bridge/training/config.py", source = "assert False"): string {
  return trainingLog({
    hcp: [],
    iterations: [],
    done: false,
    tail: [...rankTraceback(0, [[file, 1576, "validate", source]], exception), ...rankTraceback(1, [[file, 1576, "validate", source]], exception), ...CHILD_FAILED_BOX(0, 1)],
  });
}

describe("passing runs", () => {
  it("passes with HCP group names, finite losses, exit 0, and reads the config summary", () => {
    const v = verdict(trainingLog());
    expect(v.status).toBe("pass");
    expect(v.cause).toBeNull();
    expect(v.hcp.active).toBe(true);
    expect(v.iterations).toMatchObject({ count: 2, finiteLossCount: 2, nanIterations: 0, startIteration: 0 });
    expect(v.iterations.last).toMatchObject({ iteration: 2, total: 2, globalBatchSize: 8, lossScale: 1, gradNorm: 3.21 });
    expect(v.iterations.last?.lmLoss).toBeCloseTo(9.6338, 3);
    expect(v.config).toMatchObject({ cpCommType: ["a2a+p2p"], contextParallelSize: 4, hierarchicalSizes: [2, 2], hierarchicalSizesState: "set", sources: ["summary"] });
    expect(v.markers.trainingDone).toBe(true);
  });

  it("passes with HCP-PROBE reports instead of C++ INFO lines (default verbosity)", () => {
    const v = verdict(trainingLog({ hcp: probeLines(true) }));
    expect(v.status).toBe("pass");
    expect(v.hcp).toMatchObject({ active: true, probeReports: 4, levels: [0, 1], hierarchicalLines: 0 });
  });

  it("reads the `Final configuration:` YAML dump, block lists included", () => {
    const yaml = [
      "Final configuration:",
      "model:",
      "  context_parallel_size: 4",
      "  cp_comm_type: a2a+p2p",
      "  hierarchical_context_parallel_sizes:",
      "  - 2",
      "  - 2",
      "  seq_length: 8192",
      "dist:",
      "  use_decentralized_pg: false",
      "train:",
      "  train_iters: 2",
    ];
    const v = verdict(trainingLog({ config: yaml }));
    expect(v.status).toBe("pass");
    expect(v.config).toMatchObject({ cpCommType: ["a2a+p2p"], contextParallelSize: 4, hierarchicalSizes: [2, 2], useDecentralizedPg: false, sources: ["yaml"] });
  });

  it("a run without HCP expectations passes on a flat log", () => {
    expect(verdict(trainingLog({ hcp: FLAT_NAMES, config: [] }), 0, { expectHcp: false }).status).toBe("pass");
  });
});

describe("HCP off or unproven", () => {
  it("flat CONTEXT_PARALLEL_GROUP only → hcp-inactive", () => {
    const v = verdict(trainingLog({ hcp: FLAT_NAMES }));
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause?.kind).toBe("hcp-flat");
    expect(v.hcp.active).toBe(false);
  });

  it("a probe reporting levels null → hcp-inactive even when another rank has groups", () => {
    const v = verdict(trainingLog({ hcp: [...probeLines(true).slice(0, 3), ...probeLines(false).slice(3)] }));
    expect(v.hcp.active).toBe(false);
    expect(v.status).toBe("hcp-inactive");
  });

  it("no evidence either way (default verbosity, no probe) → inconclusive", () => {
    const v = verdict(trainingLog({ hcp: [] }));
    expect(v.status).toBe("inconclusive");
    expect(v.hcp.active).toBeNull();
    expect(v.cause?.kind).toBe("hcp-unverified");
  });

  it("a2a+p2p with sizes null in the YAML (pre-#2665 Bridge) → hcp-inactive via the config", () => {
    const yaml = ["Final configuration:", "model:", "  context_parallel_size: 4", "  cp_comm_type: a2a+p2p", "  hierarchical_context_parallel_sizes: null"];
    const v = verdict(trainingLog({ config: yaml, hcp: [] }));
    expect(v.hcp.active).toBe(false);
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause).toMatchObject({ kind: "hcp-flat", ruleId: "HCP001" });
  });

  it("HCP groups built but cp_comm_type p2p → attention never uses them (HCP005) → hcp-inactive", () => {
    const config = HCP_SUMMARY.map((l) => l.replace("'a2a+p2p'", "'p2p'"));
    const v = verdict(trainingLog({ config }));
    expect(v.hcp.active).toBe(true);
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause).toMatchObject({ kind: "config-mismatch", ruleId: "HCP005" });
  });

  it("implausible TFLOP/s/GPU (issue #2667: 1937 on H200) → hcp-inactive", () => {
    const v = verdict(trainingLog({ hcp: [], iterations: [iterationLine(1, 2, { tflops: 1200.5 }), iterationLine(2, 2, { tflops: 1937.0 })] }), 0, { gpu: "H200" });
    expect(v.throughput).toMatchObject({ gpu: "H200", peakTflops: 989, maxTflopsPerGpu: 1937, implausible: true, samples: 2 });
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause?.kind).toBe("implausible-throughput");
  });

  it("plausible TFLOP/s with HCP names still passes; GB200 is not read as B200", () => {
    const v = verdict(trainingLog({ iterations: [iterationLine(1, 2, { tflops: 2300 })] }), 0, { gpu: "GB200 NVL72" });
    expect(v.throughput).toMatchObject({ gpu: "GB200", peakTflops: 2500, implausible: false, suspicious: true });
    expect(v.status).toBe("pass");
  });

  it("the logged sizes differ from the requested ones → fail config-mismatch", () => {
    const v = verdict(trainingLog(), 0, { sizes: [4, 1] });
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("config-mismatch");
  });
});

describe("failures", () => {
  it("NaN lm loss → nan-loss", () => {
    const v = verdict(trainingLog({ iterations: [iterationLine(1, 2), iterationLine(2, 2, { loss: "NAN", nan: 1 })] }));
    expect(v.status).toBe("fail");
    expect(v.cause).toMatchObject({ kind: "nan-loss" });
    expect(v.iterations.nanIterations).toBe(1);
    expect(v.iterations.last?.lmLoss).toBeNull();
    expect(v.iterations.last?.lmLossText).toBe("NAN");
  });

  it("a non-zero nan counter alone → nan-loss", () => {
    const v = verdict(trainingLog({ iterations: [iterationLine(1, 1, { nan: 2 })] }));
    expect(v.cause?.kind).toBe("nan-loss");
  });

  it("stale checkpoint: `[after training is done]` without any iteration line → no-training-step", () => {
    const log = trainingLog({ iterations: [] }).replace("Starting training loop at iteration 0", "Starting training loop at iteration 2");
    const v = verdict(log);
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("no-training-step");
    expect(v.cause?.message).toContain("resumed from an existing checkpoint");
    expect(v.iterations.startIteration).toBe(2);
  });

  const assertions: [string, string, string, string][] = [
    ["B6", "HCP001", "config-assertion", "AssertionError: hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'. Without it, CP communication is silently disabled and each rank attends only to its local chunk, producing artificially high throughput but broken training. Example: for cp=16 across 4 nodes of 8 GPUs, set hierarchical_context_parallel_sizes=[8, 2]."],
    ["B7", "HCP002", "config-assertion", "AssertionError: Product of hierarchical_context_parallel_sizes [2, 4] (=8) must equal context_parallel_size (=4)."],
    ["B1", "HCP007", "config-assertion", "AssertionError: Sequence length must be divisible by 2 * context parallel size if context parallel is used."],
    ["B8", "HCP008", "config-assertion", "AssertionError: Please ensure sequence length configuration in model config and dataset config match."],
    ["B2", "HCP022", "config-assertion", "AssertionError: When finetuning with CP>1, calculate_per_token_loss must be True"],
    ["B3", "HCP022", "config-assertion", "AssertionError: When finetuning with CP>1, average_in_collective must be False"],
    ["B4", "HCP012", "config-assertion", "AssertionError: Length of cp_comm_type (3) must equal num_layers (16)."],
    ["M1", "HCP012", "config-assertion", "AssertionError: Length of cp_comm_type (3) should equal to the total number of transformer layers (16)!"],
    ["B11", "HCP006", "config-assertion", "NotImplementedError: Decentralized process groups (use_decentralized_pg=True) do not support hierarchical_context_parallel_sizes. Use cp_comm_type='a2a' or 'p2p' instead, or set use_decentralized_pg=False to use the MPU path which supports 'a2a+p2p'."],
    ["M6", "HCP016", "config-assertion", "AssertionError: Context parallelism is only supported by TEDotProductAttention!"],
    ["M8", "HCP014", "config-assertion", "AssertionError: Transformer-Engine v1.11.0 must be >= 1.12.0 to supporthierarchical cp commucation."],
    ["T1", "HCP003", "te-assertion", "AssertionError: CP implementation a2a+p2p requires cp_group = [a2a_cp_group, p2p_cp_group]!"],
    // TE 1.12 … 2.7 word the same check differently; TE's MultiheadAttention words it a third way.
    ["T1", "HCP003", "te-assertion", "AssertionError: Current implementation only supports two-level CP groups!"],
    ["T1", "HCP003", "te-assertion", "AssertionError: cp_comm_type = a2a+p2p requires cp_group = [a2a_cp_group, p2p_cp_group]!"],
    ["B12", "HCP017", "config-assertion", "RuntimeError: world_size (4) is not divisible by 8"],
    ["T2", "HCP010", "te-assertion", "AssertionError: thd format is not supported with hierarchical CP implementation yet!"],
    ["T8", "HCP011", "te-assertion", "AssertionError: Context parallelism does not support sliding window attention with cp_comm_type='a2a+p2p'!"],
    ["T9", "HCP011", "te-assertion", "AssertionError: Context parallelism only supports softmax_type='learnable' with cp_comm_type = 'a2a'!"],
    ["T12", "HCP013", "te-assertion", "ValueError: Unsupported communication type: allgather!"],
  ];
  it.each(assertions)("%s message → rule %s (%s)", (upstream, ruleId, kind, exception) => {
    const v = verdict(crashed(exception), 1);
    expect(v.status).toBe("fail");
    expect(v.cause).toMatchObject({ kind, ruleId, upstream, rank: 0 });
    expect(v.childFailed?.rootCause).toMatchObject({ rank: 0, exitcode: 1 });
  });

  it("every rule the catalogue names exists (the closing note of a failed run points at it)", () => {
    const named = SIGNATURES.flatMap((sig) => (sig.ruleId ? [[sig.id, sig.ruleId] as const] : []));
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter(([, ruleId]) => ruleById(ruleId) === undefined)).toEqual([]);
    expect(ruleById(M4_RULE.ruleId)).toBeDefined();
  });

  it("T13 (no attention backend) → te-assertion without a rule", () => {
    const v = verdict(crashed("ValueError: No dot product attention backend is available for the provided inputs. Please run with NVTE_DEBUG=1 NVTE_DEBUG_LEVEL=2 to find out the reasons for disabling all backends."), 1);
    expect(v.cause).toMatchObject({ kind: "te-assertion", upstream: "T13" });
    expect(v.cause?.ruleId).toBeUndefined();
  });

  it("Hydra override error → hydra-override", () => {
    const v = verdict(crashed("megatron.bridge.training.utils.omegaconf_utils.OverridesError: Failed to parse Hydra overrides: Could not override 'model.cp_comm_typ'."), 1);
    expect(v.cause?.kind).toBe("hydra-override");
  });

  it("argparse `Expected override in KEY=VALUE form` (no traceback) → hydra-override", () => {
    const log = ["usage: run_recipe.py [-h] --recipe RECIPE", "run_recipe.py: error: Expected override in KEY=VALUE form, got '[2,2]'"].join("\n");
    const v = verdict(log, 2);
    expect(v.cause?.kind).toBe("hydra-override");
  });

  it("CUDA OOM on rank 3 is preferred over the NCCL errors it causes on the other ranks", () => {
    const tail = [
      "[rank1]:[E1130 05:38:05.122069172 ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=20000) ran for 20093 milliseconds before timing out.",
      ...rankTraceback(3, [["/opt/Megatron-Bridge/src/megatron/bridge/training/train.py", 300, "train_step", "loss.backward()"]], "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.11 GiB"),
      ...CHILD_FAILED_BOX(3, 1),
    ];
    const v = verdict(trainingLog({ iterations: [iterationLine(1, 2)], tail, done: false }), 1);
    expect(v.cause).toMatchObject({ kind: "cuda-oom", rank: 3 });
    expect(v.otherFailures.some((f) => f.kind === "nccl")).toBe(true);
  });

  it("harness timeout → timeout", () => {
    const v = verdict(trainingLog({ iterations: [iterationLine(1, 1000)], done: false }), null, {}, { timedOut: true, signal: "SIGKILL" });
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("timeout");
    expect(v.timedOut).toBe(true);
  });

  it("harness timeout: torchrun's own SIGTERM traceback and its children's signal are consequences, not the cause", () => {
    const killed = [
      "W1130 05:40:00.000000 1200 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers",
      "W1130 05:40:00.001000 1200 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1250 closing signal SIGTERM",
      "[rank0]: Traceback (most recent call last):",
      '[rank0]:   File "/opt/Megatron-Bridge/scripts/training/run_recipe.py", line 140, in <module>',
      "[rank0]:     main()",
      "[rank0]: KeyboardInterrupt",
      "Traceback (most recent call last):",
      '  File "/opt/venv/bin/torchrun", line 8, in <module>',
      "    sys.exit(main())",
      '  File "/opt/venv/lib/python3.12/site-packages/torch/distributed/elastic/multiprocessing/api.py", line 84, in _terminate_process_handler',
      '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)',
      "torch.distributed.elastic.multiprocessing.api.SignalException: Process 1200 got signal: 15",
    ];
    const log = trainingLog({ iterations: [iterationLine(1, 1000)], tail: killed, done: false });
    const v = verdict(log, null, {}, { timedOut: true, signal: "SIGTERM" });
    expect(v.status).toBe("fail");
    expect(v.cause?.kind).toBe("timeout");
    expect(v.otherFailures.map((f) => f.message).join("\n")).toMatch(/SignalException: Process 1200 got signal: 15/);
    // Without the harness saying it killed the run, the same traceback is the failure.
    expect(verdict(log, 1).cause?.kind).toBe("python-exception");
    // A real failure before the kill (a hang after an OOM, say) still comes first.
    const oom = rankTraceback(2, [["/opt/x.py", 7, "f", "x = g()"]], "torch.OutOfMemoryError: CUDA out of memory.");
    expect(verdict(trainingLog({ iterations: [iterationLine(1, 1000)], tail: [...oom, ...killed], done: false }), null, {}, { timedOut: true }).cause?.kind).toBe("cuda-oom");
  });

  it("exit status 124 (coreutils timeout) → timeout", () => {
    expect(verdict(trainingLog({ done: false }), 124).cause?.kind).toBe("timeout");
  });

  it("log cut mid-run without an exit status → truncated", () => {
    const v = verdict(trainingLog({ iterations: [iterationLine(1, 1000)], done: false }), null);
    expect(v.cause?.kind).toBe("truncated");
  });

  it("a rank SIGKILLed without a traceback → child-failed with the signal", () => {
    const box = CHILD_FAILED_BOX(1, -9).map((l) => l.replace("To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html", "Signal 9 (SIGKILL) received by PID 1250"));
    const v = verdict(trainingLog({ iterations: [iterationLine(1, 2)], tail: box, done: false }), 1);
    expect(v.cause?.kind).toBe("child-failed");
    expect(v.childFailed?.rootCause).toMatchObject({ rank: 1, exitcode: -9, signal: "SIGKILL" });
  });

  it("any other traceback → python-exception, even with exit 0 (SMOKE2)", () => {
    const tail = rankTraceback(0, [["/opt/x.py", 1, "f", "g()"]], "KeyError: 'lm loss'");
    const v = verdict(trainingLog({ tail }), 0);
    expect(v.cause).toMatchObject({ kind: "python-exception", message: "KeyError: 'lm loss'" });
  });

  it("tracebacks after `Exception ignored in` (interpreter exit) are only notes", () => {
    const tail = ["Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f>", "Traceback (most recent call last):", '  File "/x.py", line 1, in __del__', "    self._shutdown_workers()", "AttributeError: 'NoneType' object has no attribute 'x'"];
    const v = verdict(trainingLog({ tail }), 0);
    expect(v.status).toBe("pass");
    expect(v.notes.some((n) => n.includes("ignored exception"))).toBe(true);
  });

  it("non-zero exit with nothing in the log → nonzero-exit", () => {
    expect(verdict(trainingLog(), 3).cause?.kind).toBe("nonzero-exit");
  });
});

describe("log noise", () => {
  it("ANSI colours and CRLF line ends do not change the verdict", () => {
    const plain = trainingLog({ tail: rankTraceback(0, [["/opt/x.py", 1, "f", "g()"]], "ValueError: Unsupported communication type: allgather!") });
    const noisy = plain
      .split("\n")
      .map((l) => (l.includes("iteration") || l.includes("Error") ? `\x1b[31m${l}\x1b[0m` : l.replace("Rank 0]", "Rank 0]\x1b[0m")))
      .join("\r\n");
    const a = verdict(plain, 1);
    const b = verdict(noisy, 1);
    expect(b.status).toBe(a.status);
    expect(b.cause).toEqual(a.cause);
    expect(b.iterations).toEqual(a.iterations);
    expect(b.hcp).toEqual(a.hcp);
  });

  it("ranks merged on one line: each `[rankN]:` segment is read on its own", () => {
    const merged = [
      constructionLine(2, 5, 10, 0, 2),
      "[rank2]:[I1130 04:42:10.4 ProcessGroupNCCL.cpp:1068] [PG ID 5 PG GUID 10(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 0] Using non-blocking mode: 0[rank1]: Traceback (most recent call last):",
      '[rank3]: some other output[rank1]:   File "/opt/a.py", line 3, in f',
      "[rank1]:     assert np.prod(hierarchical_context_parallel_sizes) == context_parallel_size",
      "[rank1]: AssertionError",
    ];
    const v = verdict(trainingLog({ hcp: [], iterations: [], tail: merged, done: false }), 1);
    expect(v.hcp.active).toBe(true);
    expect(v.cause).toMatchObject({ kind: "config-assertion", ruleId: "HCP002", rank: 1 });
  });

  it("probe annotations of the fixture driver are not HCP evidence", () => {
    const v = verdict(trainingLog({ hcp: ["[probe rank 0] HCP level L0: name=10 desc=HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0 size=2 ranks=[0, 1]"] }));
    expect(v.hcp.active).toBeNull();
    expect(v.status).toBe("inconclusive");
  });
});

describe("a run that did something else does not pass", () => {
  const request = { contextParallelSize: 4, sizes: [2, 2], cpCommType: "a2a+p2p", worldSize: 4 };

  it("reports from every rank of the request, authenticated and matching: pass", () => {
    expect(verdict(trainingLog(), 0, request).status).toBe("pass");
  });

  it("probe reports of another CP size, with no config summary at all: fail config-mismatch (item 11)", () => {
    const cp2 = probeLines(true).map((l) => l.replace('"cp_size":4', '"cp_size":2'));
    // The edit breaks the MACs: re-sign the edited reports as a probe of a CP=2 run would.
    const resigned = cp2.map((l) => formatProbeLine(JSON.parse(l.slice("HCP-PROBE ".length)), PROBE_KEY));
    const v = verdict(trainingLog({ config: [], hcp: resigned }), 0, request);
    expect(v.markers.configSummary).toBe(false);
    expect(v.status).toBe("fail");
    expect(v.cause?.message).toMatch(/cp_size 2 \(asked 4\)/);
    // The edited but unsigned ones are no evidence: only unproven.
    expect(verdict(trainingLog({ config: [], hcp: cp2 }), 0, request).status).toBe("inconclusive");
  });

  it("reports without cp_size and no configuration line that prints it: inconclusive, never a pass (item 11)", () => {
    const noCp = probeLines(true).map((l) => {
      const { cp_size: _dropped, mac: _mac, ...rest } = JSON.parse(l.slice("HCP-PROBE ".length));
      return formatProbeLine(rest, PROBE_KEY);
    });
    const v = verdict(trainingLog({ config: [], hcp: noCp }), 0, request);
    expect(v.status).toBe("inconclusive");
    expect(v.cause?.message).toMatch(/ranks 0, 1, 2, 3 give no cp_size and the log prints no context_parallel_size \(asked 4\)/);
    // The summary prints the CP size: then the level sizes and the summary together prove the layout.
    expect(verdict(trainingLog({ hcp: noCp }), 0, request).status).toBe("pass");
  });

  it("reports missing for one rank of four: inconclusive, naming the rank", () => {
    const v = verdict(trainingLog({ hcp: probeLines(true).filter((_, r) => r !== 2) }), 0, request);
    expect(v.status).toBe("inconclusive");
    expect(v.cause?.message).toMatch(/no authenticated HCP-PROBE report from rank 2 of 4/);
  });

  it("no summary and no report: inconclusive", () => {
    const v = verdict(trainingLog({ config: [], hcp: [] }), 0, request);
    expect(v.status).toBe("inconclusive");
    expect(v.cause?.kind).toBe("hcp-unverified");
  });

  it("torch's group names alone (even linked to their construction lines) are not a pass: the probe must report", () => {
    const v = verdict(trainingLog({ hcp: HCP_NAMES }), 0, request);
    expect(v.hcp.active).toBe(true);
    expect(v.status).toBe("inconclusive");
    expect(v.cause?.message).toMatch(/torch's log names the hierarchical groups, but a pass needs the probe's report from every rank/);
  });

  it("a group-name line without its construction line, or with one from another rank, is not evidence", () => {
    const [, , l0, l1] = HCP_NAMES;
    const alone = verdict(trainingLog({ hcp: [l0!, l1!] }), 0, { expectHcp: false });
    expect(alone.hcp).toMatchObject({ hierarchicalLines: 0, unlinkedLines: 2, active: null });
    expect(alone.notes.join("\n")).toMatch(/2 line\(s\) name a CP group without its ProcessGroupNCCL construction line/);
    const otherRank = verdict(trainingLog({ hcp: [constructionLine(1, 5, 10, 0, 2), l0!] }), 0, { expectHcp: false });
    expect(otherRank.hcp).toMatchObject({ hierarchicalLines: 0, unlinkedLines: 1 });
  });

  it("an unsigned report claiming HCP adds nothing to a pass: listed as untrusted", () => {
    const unsignedHcp = probeLines(true, 4, null)[0]!;
    const v = verdict(trainingLog({ hcp: [...probeLines(true), unsignedHcp] }), 0, request);
    expect(v.status).toBe("pass");
    expect(v.hcp.untrustedReports).toBe(1);
    expect(v.evidence.some((e) => e.kind === "untrusted-probe")).toBe(true);
    // Without the signed ones it is no evidence: rank 0's unsigned claim leaves ranks 0-3 unproven.
    const alone = verdict(trainingLog({ config: [], hcp: probeLines(true, 4, null) }), 0, request);
    expect(alone).toMatchObject({ status: "inconclusive", cause: { kind: "hcp-unverified" }, hcp: { active: null, probeReports: 0, untrustedReports: 4 } });
  });

  it("an unsigned report showing flat CP counts against the run, even among signed HCP ones (it can only make the verdict worse)", () => {
    const unsignedFlat = probeLines(false, 4, null)[2]!;
    const v = verdict(trainingLog({ hcp: [...probeLines(true), unsignedFlat] }), 0, request);
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause).toMatchObject({ kind: "hcp-flat", rank: 2 });
    expect(v.cause?.message).toContain("not authenticated, but a report against the run counts");
    expect(v.hcp).toMatchObject({ active: false, probeReports: 4, untrustedReports: 1 });
    // A report with a MAC made with another key is unsigned for this run, and counts the same way.
    const otherKey = verdict(trainingLog({ config: [], hcp: probeLines(false, 4, "1".repeat(64)) }), 0, request);
    expect(otherKey).toMatchObject({ status: "hcp-inactive", cause: { kind: "hcp-flat", rank: 0 } });
  });

  it("a report with a MAC made with another key is untrusted", () => {
    const v = verdict(trainingLog({ hcp: probeLines(true, 4, "1".repeat(64)) }), 0, request);
    expect(v.hcp).toMatchObject({ probeReports: 0, untrustedReports: 4 });
    expect(v.status).toBe("inconclusive");
  });

  it("reports found anywhere in a line, several per line (ranks interleave on one pipe, item 15)", () => {
    const [r0, r1, r2, r3] = probeLines(true);
    const merged = [`[probe rank 0] pg_map[6] backend=gloo name=15 desc=CONTEXT_PARALLEL_GROUP size=4 ranks=[0, 1, 2, 3]${r0}`, `${r1}${r2}[probe rank 1] done`, `[rank3]: text ${r3}`];
    const v = verdict(trainingLog({ hcp: merged }), 0, request);
    expect(v.hcp.ranksReported).toEqual([0, 1, 2, 3]);
    expect(v.status).toBe("pass");
  });
});

describe("degenerate levels (item 12)", () => {
  it.each([[[2, 1]], [[1, 2]], [[4, 1]]])("probe levels %j: not hierarchical, HCP004, never 'HCP active'", (sizes) => {
    const reports = [0, 1, 2, 3].map((rank) =>
      formatProbeLine({ v: 2, rank, world_size: 4, cp_size: 4, levels: sizes.map((size, level) => ({ level, size })) }, PROBE_KEY),
    );
    const v = verdict(trainingLog({ config: [], hcp: reports }), 0, { sizes, worldSize: 4 });
    expect(v.hcp.active).toBe(false);
    expect(v.hcp.levelSizes).toEqual(sizes);
    expect(v.status).toBe("hcp-degenerate");
    expect(v.cause).toMatchObject({ kind: "hcp-degenerate", ruleId: "HCP004" });
    expect(v.cause?.message).toContain(sizes[0] === 1 ? "plain p2p" : "plain a2a");
    // CP 4 (the reports' cp_size): the one split with both levels above 1.
    expect(v.cause?.fix).toContain("context_parallel_size 4: [2,2]");
  });

  it("the request alone says [4, 1] and the log shows no sizes: still not hierarchical", () => {
    const v = verdict(trainingLog({ config: [], hcp: [] }), 0, { sizes: [4, 1] });
    expect(v.cause).toMatchObject({ kind: "hcp-degenerate", ruleId: "HCP004" });
    expect(v.cause?.message).toContain("level sizes [4,1] (from the request)");
  });
});

describe("the cause of a failure (item 13)", () => {
  it("a config assertion on rank 1 is the cause although torchrun names rank 0 first; its root cause stays in the evidence", () => {
    const file = "/opt/Megatron-Bridge/src/megatron/bridge/training/config.py";
    const tail = [
      ...rankTraceback(0, [["/opt/x.py", 3, "f", "g()"]], "RuntimeError: rank 0 saw its peer go away"),
      ...rankTraceback(1, [[file, 1576, "validate", "assert False"]], "AssertionError: Product of hierarchical_context_parallel_sizes [2, 4] (=8) must equal context_parallel_size (=4)."),
      ...CHILD_FAILED_BOX(0, 1),
    ];
    const v = verdict(trainingLog({ hcp: [], iterations: [], tail, done: false }), 1);
    expect(v.cause).toMatchObject({ kind: "config-assertion", ruleId: "HCP002", upstream: "B7", rank: 1 });
    expect(v.childFailed?.rootCause).toMatchObject({ rank: 0 });
    expect(v.otherFailures.map((f) => f.kind)).toEqual(expect.arrayContaining(["python-exception", "child-failed"]));
    expect(v.notes).toContain("torchrun names rank 0 as the first failure; the config-assertion on rank 1 is the cause (configuration is validated on every rank)");
    expect(v.evidence.some((e) => e.kind === "child-failed")).toBe(true);
  });

  it("other failures of another rank stay behind the root cause's rank", () => {
    const tail = [...rankTraceback(0, [["/opt/x.py", 3, "f", "g()"]], "RuntimeError: boom"), ...rankTraceback(1, [["/opt/y.py", 3, "f", "g()"]], "ValueError: other"), ...CHILD_FAILED_BOX(1, 1)];
    expect(verdict(trainingLog({ hcp: [], iterations: [], tail, done: false }), 1).cause).toMatchObject({ kind: "python-exception", rank: 1 });
  });
});

describe("the sorted config summary proves the sizes absent (item 14)", () => {
  const block = (fields: string[]) => ["Configuration Summary (Non-Default Values vs Megatron Core)", "", "[model] Non-default values (vs Mcore TransformerConfig):", ...fields, "", "----"];
  const cp = "  context_parallel_size: 4  (Mcore default: 1)";
  const type = "  cp_comm_type: 'a2a+p2p'  (Mcore default: None)";
  const after = "  num_layers: 16  (Mcore default: 1)";

  it("a2a+p2p and the block goes past where hierarchical_context_parallel_sizes would stand: sizes None → hcp-inactive HCP001", () => {
    const v = verdict(trainingLog({ config: block([cp, type, "  hidden_size: 2048  (Mcore default: 0)", after]), hcp: [] }), 0);
    expect(v.config.hierarchicalSizesState).toBe("none");
    expect(v.hcp.active).toBe(false);
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause).toMatchObject({ kind: "hcp-flat", ruleId: "HCP001" });
    expect(v.cause?.message).toContain("sorted [model] block");
  });

  it("the block ends before that place: the sizes stay unknown (inconclusive, not inactive)", () => {
    const v = verdict(trainingLog({ config: block([cp, type, "  gradient_accumulation_fusion: True  (Mcore default: False)"]), hcp: [] }), 0);
    expect(v.config.hierarchicalSizesState).toBe("unknown");
    expect(v.status).toBe("inconclusive");
  });

  it("the sizes listed in their place: set", () => {
    const v = verdict(trainingLog({ config: block([cp, type, "  hierarchical_context_parallel_sizes: [2, 2]  (Mcore default: None)", after]) }), 0);
    expect(v.config).toMatchObject({ hierarchicalSizesState: "set", hierarchicalSizes: [2, 2] });
    expect(v.status).toBe("pass");
  });

  it("fields past the sizes in another section ([optimizer], printed first) prove nothing about the model's", () => {
    const config = ["Configuration Summary (Non-Default Values vs Megatron Core)", "", "[optimizer] Non-default values (vs Mcore OptimizerConfig):", "  lr: 0.0003  (Mcore default: None)", ...block([cp, type]).slice(1)];
    expect(verdict(trainingLog({ config, hcp: [] }), 0).config.hierarchicalSizesState).toBe("unknown");
  });
});

describe("missing facts make the verdict worse, never better", () => {
  it("no exit status (no runner facts) with everything else passing: inconclusive exit-unknown", () => {
    const v = verdict(trainingLog(), null);
    expect(v.status).toBe("inconclusive");
    expect(v.cause?.kind).toBe("exit-unknown");
  });

  it("no probe key: no report counts", () => {
    const v = verdict(trainingLog(), 0, { probeKey: undefined });
    expect(v.status).toBe("inconclusive");
    expect(v.cause?.message).toMatch(/no probe key was given/);
  });
});
