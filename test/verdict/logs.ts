// Builders for Bridge training logs in the formats of docs/domain.md 4.2 (iteration line,
// config summary, markers) around real torchrun lines from fixtures/logs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { iterationLine } from "../../bench/verdict-corpus.ts";
import { formatProbeLine } from "../../src/core/verdict/index.ts";

export { iterationLine };

export const BANNER = [
  "*****************************************",
  "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
  "*****************************************",
];

export const HCP_SUMMARY = [
  "Configuration Summary (Non-Default Values vs Megatron Core)",
  "[model] Non-default values (vs Mcore TransformerConfig):",
  "  context_parallel_size: 4  (Mcore default: 1)",
  "  cp_comm_type: 'a2a+p2p'  (Mcore default: None)",
  "  hierarchical_context_parallel_sizes: [2, 2]  (Mcore default: None)",
];

export const REAL_PROBE_DIR = join(import.meta.dirname, "..", "..", "fixtures", "logs", "real-probe");
/** The key of each signed real-probe run (fixtures/logs/real-probe/keys.json). */
export const REAL_PROBE_KEYS: Record<string, string> = JSON.parse(readFileSync(join(REAL_PROBE_DIR, "keys.json"), "utf8"));

/** The probe key the test logs are signed with (smoke-run makes a fresh one per run). */
export const PROBE_KEY = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e70001";

/** torch's construction line of a group (what links its named lines to the rank, fixtures/logs/README.md). */
export function constructionLine(rank: number, pgId: number, guid: number, groupRank: number, size: number): string {
  return `[rank${rank}]:[I1130 04:42:09.720586771 ProcessGroupNCCL.cpp:988] [PG ID ${pgId} PG GUID ${guid} Rank ${groupRank}] ProcessGroupNCCL initialization options: size: ${size}, global rank: ${rank}, TIMEOUT(ms): 1800000, USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: -2, PG Name: ${guid}`;
}

/** Real C++ INFO lines (case a's format) naming rank 0's HCP groups of a [2, 2] layout, after their construction lines. */
export const HCP_NAMES = [
  constructionLine(0, 5, 10, 0, 2),
  constructionLine(0, 6, 11, 0, 2),
  "[rank0]:[I1130 04:42:10.424537069 ProcessGroupNCCL.cpp:1068] [PG ID 5 PG GUID 10(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 0] Using non-blocking mode: 0",
  "[rank0]:[I1130 04:42:10.597510399 ProcessGroupNCCL.cpp:1068] [PG ID 6 PG GUID 11(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1) Rank 0] Using non-blocking mode: 0",
];

export const FLAT_NAMES = [
  constructionLine(0, 4, 9, 0, 4),
  constructionLine(1, 4, 9, 1, 4),
  "[rank0]:[I1130 04:42:09.755265272 ProcessGroupNCCL.cpp:1068] [PG ID 4 PG GUID 9(CONTEXT_PARALLEL_GROUP) Rank 0] Using non-blocking mode: 0",
  "[rank1]:[I1130 04:42:56.157604014 ProcessGroupNCCL.cpp:1561] [PG ID 4 PG GUID 9(CONTEXT_PARALLEL_GROUP) Rank 1] Destroy complete.",
];

/** A probe report per rank of a CP=4 [2, 2] run (levels null: flat), signed with `key` (null: unsigned). */
export function probeLines(hcp: boolean, world = 4, key: string | null = PROBE_KEY): string[] {
  return Array.from({ length: world }, (_, rank) =>
    formatProbeLine(
      {
        v: 2,
        rank,
        world_size: world,
        cp_size: 4,
        levels: hcp
          ? [
              { level: 0, desc: "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0", size: 2, ranks: rank < 2 ? [0, 1] : [2, 3] },
              { level: 1, desc: "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1", size: 2, ranks: rank % 2 === 0 ? [0, 2] : [1, 3] },
            ]
          : null,
      },
      key ?? undefined,
    ),
  );
}

export interface TrainingLogParts {
  config?: string[];
  hcp?: string[];
  iterations?: string[];
  tail?: string[];
  done?: boolean;
}

/** A 4-GPU Bridge smoke run: banner, config summary, group lines, iterations, end marker. */
export function trainingLog(parts: TrainingLogParts = {}): string {
  const lines = [
    ...BANNER,
    ...(parts.config ?? HCP_SUMMARY),
    "> initialized tensor model parallel with size 1",
    "> initialized pipeline model parallel with size 1",
    "[after megatron is initialized] datetime: 2026-11-30 05:00:00 ",
    ...(parts.hcp ?? [...HCP_NAMES, ...probeLines(true)]),
    "Starting training loop at iteration 0",
    ...(parts.iterations ?? [iterationLine(1, 2), iterationLine(2, 2)]),
    ...(parts.tail ?? []),
    ...(parts.done === false ? [] : ["[after training is done] datetime: 2026-11-30 05:01:00 "]),
  ];
  return lines.join("\n") + "\n";
}

/** A Python traceback from one rank, every line prefixed the way torchrun children print it. */
export function rankTraceback(rank: number, frames: [file: string, line: number, fn: string, source: string][], exception: string): string[] {
  const p = `[rank${rank}]: `;
  return [
    `${p}Traceback (most recent call last):`,
    ...frames.flatMap(([file, line, fn, source]) => [`${p}  File "${file}", line ${line}, in ${fn}`, `${p}    ${source}`]),
    `${p}${exception}`,
  ];
}

export const CHILD_FAILED_BOX = (rank: number, exitcode: number) => [
  `E1130 04:43:17.286000 1206 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: ${exitcode}) local_rank: ${rank} (pid: 1250) of binary: /opt/venv/bin/python3`,
  "Traceback (most recent call last):",
  '  File "/opt/venv/lib/python3.12/site-packages/torch/distributed/launcher/api.py", line 317, in launch_agent',
  "    raise ChildFailedError(",
  "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
  "============================================================",
  "scripts/training/run_recipe.py FAILED",
  "------------------------------------------------------------",
  "Failures:",
  "  <NO_OTHER_FAILURES>",
  "------------------------------------------------------------",
  "Root Cause (first observed failure):",
  "[0]:",
  "  time      : 2026-11-30_04:43:17",
  "  host      : localhost",
  `  rank      : ${rank} (local_rank: ${rank})`,
  `  exitcode  : ${exitcode} (pid: 1250)`,
  "  error_file: <N/A>",
  "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
  "============================================================",
];

/**
 * A failed run for chunking tests: probe lines, three iterations, an OOM traceback on rank 2
 * and torchrun's failure box (the multi-line state machines), CRLF on every third line.
 * `unicode` adds 2-, 3- and 4-byte characters for the splits to cut through; without them the
 * log is ASCII, which the parser's WebAssembly path takes.
 */
export function chunkingSample(unicode: boolean): string {
  const note = unicode ? "[rank0]: note: réglage ✓ 𝜆 ok" : "[rank0]:[W] a warning with context in it";
  const file = unicode ? "/opt/é.py" : "/opt/x.py";
  const source = unicode ? "x = 𝜆()" : "x = g()";
  const oom = unicode ? "torch.OutOfMemoryError: CUDA out of memory. ✓" : "torch.OutOfMemoryError: CUDA out of memory.";
  return trainingLog({
    hcp: [...probeLines(true).slice(0, 2), note],
    iterations: [iterationLine(1, 3), iterationLine(2, 3, { tflops: 512.5 }), iterationLine(3, 3)],
    tail: [...rankTraceback(2, [[file, 7, "f", source]], oom), ...CHILD_FAILED_BOX(2, 1)],
    done: false,
  })
    .split("\n")
    .map((l, i) => (i % 3 === 0 ? l + "\r" : l))
    .join("\n");
}

/** `bytes` cut at the given offsets (taken modulo its length + 1, duplicates ignored). */
export function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  return [...points, bytes.length].map((p, i, all) => bytes.subarray(i === 0 ? 0 : all[i - 1]!, p));
}
