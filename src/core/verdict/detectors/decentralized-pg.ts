// Detector: Bridge's line for decentralized process groups. With dist.use_decentralized_pg=True,
// Bridge builds every group through Megatron-Core's HyperCommGrid and never calls
// parallel_state.initialize_model_parallel, so no hierarchical CP group exists for Transformer
// Engine to find (Megatron-Bridge 067f987, src/megatron/bridge/training/initialize.py:762-786:
// `_create_pg_collection` builds tp/cp/dp/pp groups only, then rank 0 prints
// `> initialized HyperCommGrid with tp=…, pp=…, cp=…, dp=…`; the dist-train path prints the
// same per model, lines 637 and 646). Anyone can print the line, so it only ever counts
// against a run: it can make the verdict worse, never better.
import type { Findings } from "../findings.ts";

const HYPER_COMM_GRID_RE = /> initialized HyperCommGrid (?:for (?:vision|language) model )?with tp=(\d+), pp=(\d+), cp=(\d+), dp=(\d+)/;

export interface DecentralizedPgFacts {
  /** The first `> initialized HyperCommGrid …` line, or null when the log has none. */
  grid: { line: number; tp: number; pp: number; cp: number; dp: number } | null;
}

export class DecentralizedPgDetector {
  private grid: DecentralizedPgFacts["grid"] = null;

  constructor(private readonly findings: Findings) {}

  /** A line holding "HyperCommGrid". */
  line(seg: string, line: number): void {
    if (this.grid) return;
    const m = HYPER_COMM_GRID_RE.exec(seg);
    if (!m) return;
    this.grid = { line, tp: Number(m[1]), pp: Number(m[2]), cp: Number(m[3]), dp: Number(m[4]) };
    this.findings.addEvidence("decentralized-pg", line, seg.trim());
  }

  facts(): DecentralizedPgFacts {
    return { grid: this.grid };
  }
}
