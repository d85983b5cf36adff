// Training logs built from the Bridge formats of HCP-RULES.md 4.2/4.3 around real torchrun lines.
import { describe, expect, it } from "vitest";
import { verdictOf, VerdictSchema, type Verdict, type VerdictOptions } from "../../src/core/verdict/index.ts";
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
