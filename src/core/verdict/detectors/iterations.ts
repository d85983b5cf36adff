// Detector: Bridge iteration lines (docs/domain.md 4.2), the training-loop markers and the TFLOP/s
// they print. The hot path of a long run: every iteration line costs a regex and four field
// lookups; the full field set is parsed for the first and the last line only.
import { clip, num, type Findings } from "../findings.ts";
import type { Iteration, Iterations } from "../schema.ts";

const ITERATION_RE = /\biteration\s+(\d+)\s*\/\s*(\d+)\s*\|/;
const START_LOOP_RE = /Starting training loop at iteration (\d+)/;

export interface IterationFacts extends Iterations {
  /** Lines of the first NaN and of the highest TFLOP/s. */
  firstNanLine: number | null;
  tflopsSamples: number;
  maxTflops: number | null;
  maxTflopsLine: number | null;
  trainingDone: boolean;
  trainingDoneLine: number | null;
}

/** Where the last fieldAfter's value ended (the next field's search starts there). */
let fieldEnd = 0;

/**
 * The value of `| key: value |` in an iteration line, without splitting the whole line. The
 * search starts at `from` (Bridge prints the fields in a fixed order, so each lookup goes on
 * where the last one stopped) and falls back to the whole line.
 */
function fieldAfter(seg: string, key: string, from = 0): string | null {
  let i = seg.indexOf(key, from);
  if (i < 0 && from > 0) i = seg.indexOf(key);
  if (i < 0) return null;
  const start = i + key.length;
  const end = seg.indexOf("|", start);
  fieldEnd = end < 0 ? seg.length : end;
  return seg.slice(start, fieldEnd).trim();
}

/** The loss of an iteration line: `lm loss`, else the first other `… loss` field (not `loss scale`). */
function lossText(seg: string, from = 0): string | null {
  const lm = fieldAfter(seg, "| lm loss:", from);
  if (lm !== null) return lm;
  const other = /\|\s*([^|:]*\bloss):\s*([^|]*)\|/.exec(seg);
  return other ? other[2]!.trim() : null;
}

/** Every field of one iteration line. */
export function parseIteration(seg: string, line: number): Iteration | null {
  const m = ITERATION_RE.exec(seg);
  if (!m) return null;
  const it: Iteration = {
    iteration: Number(m[1]),
    total: Number(m[2]),
    consumedSamples: null,
    elapsedMs: null,
    tflopsPerGpu: null,
    learningRate: null,
    globalBatchSize: null,
    lmLoss: null,
    lmLossText: lossText(seg),
    lossScale: null,
    gradNorm: null,
    skippedIterations: 0,
    nanIterations: 0,
    line,
  };
  for (const part of seg.slice(m.index + m[0].length).split("|")) {
    const colon = part.indexOf(":");
    if (colon < 0) continue;
    const value = part.slice(colon + 1).trim();
    switch (part.slice(0, colon).trim()) {
      case "consumed samples": it.consumedSamples = num(value); break;
      case "elapsed time per iteration (ms)": it.elapsedMs = num(value); break;
      case "throughput per GPU (TFLOP/s/GPU)": it.tflopsPerGpu = num(value); break;
      case "learning rate": it.learningRate = num(value); break;
      case "global batch size": it.globalBatchSize = num(value); break;
      case "loss scale": it.lossScale = num(value); break;
      case "grad norm": it.gradNorm = num(value); break;
      case "number of skipped iterations": it.skippedIterations = num(value) ?? 0; break;
      case "number of nan iterations": it.nanIterations = num(value) ?? 0; break;
    }
  }
  it.lmLoss = it.lmLossText === null ? null : num(it.lmLossText);
  return it;
}

export class IterationDetector {
  private count = 0;
  private finiteLossCount = 0;
  private nanIterations = 0;
  private skippedIterations = 0;
  private first: Iteration | null = null;
  // The highest iteration's line, parsed in full only by facts() (no object per line).
  private lastIteration = -1;
  private lastSeg: string | null = null;
  private lastLine = 0;
  private firstNanLine: number | null = null;
  private startIteration: number | null = null;
  private tflopsSamples = 0;
  private maxTflops: number | null = null;
  private maxTflopsLine: number | null = null;
  private trainingDone = false;
  private trainingDoneLine: number | null = null;

  constructor(private readonly findings: Findings) {}

  get lines(): number {
    return this.count;
  }

  /** An iteration line: true when `seg` was one (it then holds nothing else the verdict needs). */
  iteration(seg: string, line: number): boolean {
    const m = ITERATION_RE.exec(seg);
    if (!m) return false;
    const iteration = Number(m[1]);
    // In print order: throughput, lm loss, skipped, nan (each search goes on from the last).
    fieldEnd = m.index + m[0].length;
    const tflops = num(fieldAfter(seg, "throughput per GPU (TFLOP/s/GPU):", fieldEnd));
    const loss = lossText(seg, fieldEnd);
    const lossValue = loss === null ? null : num(loss);
    const lossNonFinite = loss !== null && lossValue === null;
    const skipped = num(fieldAfter(seg, "number of skipped iterations:", fieldEnd)) ?? 0;
    const nanCounter = num(fieldAfter(seg, "number of nan iterations:", fieldEnd)) ?? 0;
    const nanHere = Math.max(nanCounter, lossNonFinite ? 1 : 0);
    this.count++;
    if (lossValue !== null) this.finiteLossCount++;
    this.nanIterations += nanHere;
    this.skippedIterations += skipped;
    if (nanHere > 0 && this.firstNanLine === null) {
      this.firstNanLine = line;
      this.findings.addCandidate({
        kind: "nan-loss",
        message: lossNonFinite ? `iteration ${iteration}: lm loss is ${loss}` : `iteration ${iteration}: number of nan iterations is ${nanCounter}`,
        line,
        rank: null,
        text: clip(seg),
      });
    }
    if (tflops !== null) {
      this.tflopsSamples++;
      if (this.maxTflops === null || tflops > this.maxTflops) {
        this.maxTflops = tflops;
        this.maxTflopsLine = line;
      }
    }
    if (this.first === null) {
      this.first = parseIteration(seg, line);
      this.findings.addEvidence("iteration", line, seg);
    }
    if (this.lastSeg === null || iteration >= this.lastIteration) {
      this.lastIteration = iteration;
      this.lastSeg = clip(seg, 2000);
      this.lastLine = line;
    }
    return true;
  }

  /** `Starting training loop at iteration N` (N > 0: the run resumed from a checkpoint). */
  loopStart(seg: string, line: number): void {
    const start = START_LOOP_RE.exec(seg);
    if (!start) return;
    this.startIteration = Number(start[1]);
    this.findings.addEvidence("marker", line, seg);
  }

  /** `[after training is done]`. */
  done(seg: string, line: number): void {
    this.trainingDone = true;
    this.trainingDoneLine = line;
    this.findings.addEvidence("marker", line, seg);
  }

  facts(): IterationFacts {
    return {
      count: this.count,
      finiteLossCount: this.finiteLossCount,
      nanIterations: this.nanIterations,
      skippedIterations: this.skippedIterations,
      first: this.first,
      last: this.lastSeg === null ? null : parseIteration(this.lastSeg, this.lastLine),
      startIteration: this.startIteration,
      firstNanLine: this.firstNanLine,
      tflopsSamples: this.tflopsSamples,
      maxTflops: this.maxTflops,
      maxTflopsLine: this.maxTflopsLine,
      trainingDone: this.trainingDone,
      trainingDoneLine: this.trainingDoneLine,
    };
  }
}
