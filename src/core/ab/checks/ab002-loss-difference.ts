// AB002: the two legs' lm loss differs by more than reduction-order noise.
import { defineCheck } from "./check.ts";

/** Largest relative lm-loss difference between the legs taken as the same numerics. */
export const LOSS_TOLERANCE = 0.01;

export const check = defineCheck({
  id: "AB002",
  name: "loss-difference",
  severity: "warning",
  doc: {
    checks: `In \`/hcp smoke compare=p2p|a2a\`, an iteration whose lm loss differs between the legs by more than ${LOSS_TOLERANCE * 100} % (|hcp − reference| / |reference|).`,
    why:
      "Same recipe, seed, data and batch: the legs differ only in the order in which attention partial results are exchanged and merged, which in BF16 " +
      "(unit roundoff 2^-8 ≈ 0.4 %, averaged over thousands of tokens in the loss) moves the loss far less than 1 %. A larger difference means the legs did not " +
      "compute the same attention (CP off, a wrong split of heads or sequence). It is a warning, not a failure: a smoke run has a couple of iterations " +
      "from random initialisation, where the loss is close to ln(vocabulary) whatever attention does, so a match proves little and a small mismatch can be noise.",
    example: "iteration 2: lm loss 10.34 (HCP) vs 10.61 (p2p), 2.5 % apart",
    fix: "Re-run with more iterations (`iters=10`) to see whether the curves separate; compare the config summaries of both legs in the log artifact.",
  },
});
