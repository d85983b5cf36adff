// A synthetic but realistic `torchrun` training log, assembled from the real GPU captures in
// fixtures/logs (c10d/NCCL INFO lines, warnings, probe annotations, merged rank output) plus
// Bridge iteration lines in the docs/domain.md 4.2 format, with `[rankN]:` prefixes spread over 4
// ranks. Used by the benchmark (1 GB on disk) and by the bounded-memory test (200 MB in memory,
// never stored).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatProbeLine } from "../src/core/verdict/probe.ts";

const BACKGROUND_LOGS = ["a_nccl_cp2_hcp2x1.log", "c_nccl_cp2_flat.log", "e_gloo_cp4_hcp2x2.log", "h_nccl_cp2_hcp2x1_default_verbosity.log"];

/**
 * Non-empty lines of the successful real runs (no tracebacks, no failure box), without the
 * construction lines of size-1 groups: case a's L1 groups have size 1 (a CP=2 [2, 1] run), which
 * would contradict the header's CP=4 [2, 2] layout wherever a moved rank prefix links them.
 */
export function backgroundLines(fixturesDir = join(import.meta.dirname, "..", "fixtures", "logs")): string[] {
  return BACKGROUND_LOGS.flatMap((name) => readFileSync(join(fixturesDir, name), "utf8").split("\n")).filter(
    (l) => l.trim() !== "" && !l.includes("ProcessGroupNCCL initialization options: size: 1,"),
  );
}

/** The key the corpus's probe reports are signed with (the verdict needs it to count them). */
export const CORPUS_PROBE_KEY = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0";

/** Rank r's signed report of a CP=4 [2, 2] layout, as the runner's probe writes it. */
export function corpusProbeLine(rank: number): string {
  const levels = [
    { level: 0, desc: "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0", size: 2, ranks: rank < 2 ? [0, 1] : [2, 3] },
    { level: 1, desc: "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1", size: 2, ranks: rank % 2 === 0 ? [0, 2] : [1, 3] },
  ];
  return formatProbeLine({ v: 2, rank, world_size: 4, hcp_sizes: [2, 2], cp_size: 4, levels, pid: 4000 + rank }, CORPUS_PROBE_KEY);
}

export const CONFIG_HEADER = [
  "Configuration Summary (Non-Default Values vs Megatron Core)",
  "[model] Non-default values (vs Mcore TransformerConfig):",
  "  context_parallel_size: 4  (Mcore default: 1)",
  "  cp_comm_type: 'a2a+p2p'  (Mcore default: None)",
  "  hierarchical_context_parallel_sizes: [2, 2]  (Mcore default: None)",
  "Starting training loop at iteration 0",
];

export function iterationLine(iteration: number, total: number, opts: { loss?: string; tflops?: number; nan?: number } = {}): string {
  const pad = (n: number, w: number) => String(n).padStart(w);
  const loss = opts.loss ?? (10 - Math.log1p(iteration) / 3).toExponential(6).toUpperCase().replace(/E([+-])(\d)$/, "E$10$2");
  return (
    ` [2026-11-30 05:00:00] iteration ${pad(iteration, 8)}/${pad(total, 8)} | consumed samples: ${pad(iteration * 8, 12)} |` +
    ` elapsed time per iteration (ms): 1234.5 |` +
    (opts.tflops !== undefined ? ` throughput per GPU (TFLOP/s/GPU): ${opts.tflops.toFixed(1)} |` : "") +
    ` learning rate: 1.000000E-05 | global batch size:     8 | lm loss: ${loss} | loss scale: 1.0 | grad norm: 3.210 |` +
    ` number of skipped iterations:   0 | number of nan iterations: ${pad(opts.nan ?? 0, 3)} |`
  );
}

/**
 * Endless log body: each call returns about `chars` characters of complete lines. Every 20th
 * line is an iteration line from the last rank; background lines get their `[rankN]:` prefix
 * moved round-robin over 4 ranks, and every 97th pair of lines is merged the way a shared pipe
 * merges them.
 */
export class SyntheticLog {
  private next = 0;
  private iteration = 0;
  constructor(
    private readonly background: string[],
    private readonly total = 1_000_000_000,
  ) {}

  header(): string {
    return [...CONFIG_HEADER.slice(0, -1), ...[0, 1, 2, 3].map(corpusProbeLine), CONFIG_HEADER.at(-1)!].join("\n") + "\n";
  }

  footer(): string {
    return "[after training is done] datetime: 2026-11-30 05:10:00 \n";
  }

  block(chars: number): string {
    const out: string[] = [];
    let size = 0;
    while (size < chars) {
      const i = this.next++;
      let line: string;
      if (i % 20 === 19) line = iterationLine(++this.iteration, this.total, { tflops: 400 + (i % 50) });
      else {
        const base = this.background[i % this.background.length]!;
        const rank = i % 4;
        line = base.startsWith("[rank") ? base.replace(/^\[rank\d+\]:/, `[rank${rank}]:`) : base;
        if (i % 97 === 0) line += this.background[(i * 7) % this.background.length]!;
      }
      out.push(line);
      size += line.length + 1;
    }
    return out.join("\n") + "\n";
  }
}
