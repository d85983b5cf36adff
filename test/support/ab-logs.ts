// Artifacts of A/B smoke runs (`/hcp smoke compare=p2p`) built from real GPU logs: the HCP leg
// is the real signed CP=4 [2, 2] probe run on 4 ranks, the p2p reference leg the real signed
// flat CP=4 run on 4 ranks (fixtures/logs/real-probe, each with its own key, as the runner
// makes one per leg), each followed by Bridge iteration lines of the plan's batch (4 GPUs,
// global batch 4, micro batch 1) and iteration count. Only the timings and losses vary.
import { fixtureLog, probeKeyOf } from "./bot-harness.ts";

export const HCP_LEG_LOG = "real-probe/s1_gloo_cp4_hcp2x2.v2.log";
export const P2P_LEG_LOG = "real-probe/s2_gloo_cp4_flat.v2.log";

export interface Steps {
  /** Elapsed time per iteration (ms), one per iteration. */
  ms: number[];
  lmLoss: number[];
  /** TFLOP/s/GPU as logger.log_throughput prints it (same FLOPs per step in both legs). */
  tflops?: number[];
}

/** Bridge iteration lines (docs/domain.md 4.2) for the plan's batch: 4 GPUs, global batch 4. */
export function bridgeSteps(s: Steps): string {
  const n = s.ms.length;
  return s.ms
    .map((ms, k) => {
      const tflops = s.tflops ? ` throughput per GPU (TFLOP/s/GPU): ${s.tflops[k]!.toFixed(1)} |` : "";
      const iter = `${k + 1}`.padStart(8);
      return ` [2026-11-30 10:00:${String(10 + k).padStart(2, "0")}] iteration ${iter}/${String(n).padStart(8)} | consumed samples: ${String(4 * (k + 1)).padStart(12)} | elapsed time per iteration (ms): ${ms.toFixed(1)} |${tflops} learning rate: 1.000000E-05 | global batch size:     4 | lm loss: ${s.lmLoss[k]!.toExponential(6).toUpperCase()} | loss scale: 1.0 | grad norm: 3.210 | number of skipped iterations:   0 | number of nan iterations:   0 |`;
    })
    .join("\n");
}

/** Same FLOPs per step in both legs, so TFLOP/s scale with 1 / time (a 1B model at 8k tokens: ~245 TFLOP/s at 1 s). */
export function tflopsFor(ms: number[]): number[] {
  return ms.map((t) => (245 * 1000) / t);
}

function verdictJson(log: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ exitCode: 0, probeKey: probeKeyOf(log.replace(/^real-probe\//, "")), worldSize: 4, ...extra });
}

/** The artifact of an A/B run: both legs' logs and the runner's verdict.json facts for each. */
export function abArtifact(hcp: Steps, reference: Steps | { failed: true; tail?: string }): Record<string, string> {
  const files: Record<string, string> = {
    "smoke.log": `${fixtureLog(HCP_LEG_LOG)}\n${bridgeSteps({ ...hcp, tflops: hcp.tflops ?? tflopsFor(hcp.ms) })}\n`,
    "verdict.json": verdictJson(HCP_LEG_LOG),
  };
  if ("failed" in reference) {
    // The p2p leg set up its groups (the real flat run's signed reports) and then exited 1
    // without a training step, as a crash before the first iteration does (`tail`: what it printed).
    files["reference.log"] = `${fixtureLog(P2P_LEG_LOG)}${reference.tail ? `\n${reference.tail}\n` : ""}`;
    files["reference.verdict.json"] = verdictJson(P2P_LEG_LOG, { exitCode: 1 });
  } else {
    files["reference.log"] = `${fixtureLog(P2P_LEG_LOG)}\n${bridgeSteps({ ...reference, tflops: reference.tflops ?? tflopsFor(reference.ms) })}\n`;
    files["reference.verdict.json"] = verdictJson(P2P_LEG_LOG);
  }
  return files;
}
