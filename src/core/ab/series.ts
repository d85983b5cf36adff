// The per-iteration series of one leg's log: elapsed time, TFLOP/s/GPU and lm loss of every
// Bridge iteration line (docs/domain.md 4.2). The verdict keeps only the first and the last
// iteration; the comparison needs them all (a median after the first, a loss per step).
// Streams: bytes in, bounded memory out (a smoke run has at most 50 iterations; the first
// line seen for an iteration number counts, later repeats are ignored).
import { parseIteration } from "../verdict/detectors/iterations.ts";
import { MAX_LINE } from "../verdict/index.ts";

export interface IterationPoint {
  iteration: number;
  elapsedMs: number | null;
  tflopsPerGpu: number | null;
  /** null when not printed or not finite. */
  lmLoss: number | null;
}

/** More iteration numbers than any smoke run asks for (iters ≤ 50); the rest are not kept. */
export const MAX_POINTS = 200;
const HINT = "iteration";

export interface SeriesCollector {
  push(chunk: Uint8Array | string): void;
  end(): IterationPoint[];
}

export function createSeriesCollector(): SeriesCollector {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const points = new Map<number, IterationPoint>();
  let carry = "";
  let lineNo = 0;
  const take = (line: string) => {
    lineNo++;
    if (points.size >= MAX_POINTS || !line.includes(HINT)) return;
    const it = parseIteration(line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line, lineNo);
    if (!it || points.has(it.iteration)) return;
    points.set(it.iteration, { iteration: it.iteration, elapsedMs: it.elapsedMs, tflopsPerGpu: it.tflopsPerGpu, lmLoss: it.lmLoss !== null && Number.isFinite(it.lmLoss) ? it.lmLoss : null });
  };
  const feed = (text: string) => {
    const parts = (carry + text).split("\n");
    carry = parts.pop() ?? "";
    // A line longer than the parser reads is cut, not held: memory stays bounded.
    if (carry.length > MAX_LINE * 2) carry = carry.slice(0, MAX_LINE);
    for (const line of parts) take(line);
  };
  return {
    push(chunk) {
      feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    },
    end() {
      feed(decoder.decode());
      if (carry) take(carry);
      carry = "";
      return [...points.values()].sort((a, b) => a.iteration - b.iteration);
    },
  };
}

/** The series of a whole log held in memory (tests, the CLI). */
export function seriesOf(log: string | Uint8Array): IterationPoint[] {
  const c = createSeriesCollector();
  c.push(log);
  return c.end();
}
