// The hcp-degenerate outcome: CP ran, but a level of the hierarchical sizes is 1, so
// a2a+p2p ran over one level only. Megatron-Core builds the size-1 groups without complaint
// (parallel_state.create_hierarchical_groups, fixtures/logs/a_nccl_cp2_hcp2x1.log shows L1 of
// size 1 on both ranks) and Transformer Engine then runs plain a2a ([N, 1]) or plain p2p
// ([1, N]): not the silent-off of hcp-inactive, and not HCP either (the linter's HCP004).
import type { Cause } from "./schema.ts";

const show = (v: unknown) => JSON.stringify(v);

/** What a single level of `sizes` amounts to: [1, N] is the p2p ring alone, [N, 1] the a2a alone. */
export function singleLevelType(sizes: readonly number[]): "a2a" | "p2p" {
  return sizes[0] === 1 ? "p2p" : "a2a";
}

/** Every [a2a, p2p] with both levels above 1 and a2a × p2p = cp, the larger a2a level first. */
export function twoLevelSplits(cp: number): [number, number][] {
  const out: [number, number][] = [];
  for (let a2a = Math.floor(cp / 2); a2a >= 2; a2a--) if (cp % a2a === 0 && cp / a2a >= 2) out.push([a2a, cp / a2a]);
  return out;
}

/** The sizes to use instead, for context_parallel_size `cp` (null: unknown). */
export function degenerateFix(sizes: readonly number[], cp: number | null): string {
  const single = singleLevelType(sizes);
  const flat = `set cp_comm_type '${single}' and drop hierarchical_context_parallel_sizes (what the run did anyway)`;
  if (cp === null) return `Use two levels both above 1 whose product is context_parallel_size (e.g. [2, 2] for CP 4), or ${flat}.`;
  const splits = twoLevelSplits(cp);
  if (splits.length === 0) {
    return (
      `context_parallel_size ${cp} cannot be split into two levels both above 1: ${flat}, ` +
      "or test HCP with a CP that can be split (at least 4, e.g. context_parallel_size 4 with sizes [2, 2] on 4 GPUs)."
    );
  }
  const shown = splits.slice(0, 4).map(show).join(", ");
  return (
    `Use two levels both above 1 whose product is context_parallel_size ${cp}: ${shown}${splits.length > 4 ? ", …" : ""} ` +
    `(a2a level first; TP × a2a must divide the GPUs of one NVLink domain: \`hcp-bot advise --cp ${cp} --tp TP\` picks one), or ${flat}.`
  );
}

/** The cause of an hcp-degenerate verdict. */
export function degenerateCause(degenerate: { sizes: number[]; from: string }, cp: number | null): Cause {
  const { sizes, from } = degenerate;
  return {
    kind: "hcp-degenerate",
    message:
      `HCP was not hierarchical: level sizes ${show(sizes)} (from ${from}); a level of size 1 makes a2a+p2p plain ${singleLevelType(sizes)} ` +
      "over one level: CP was on, but without the hierarchy (HCP004)",
    line: null,
    rank: null,
    ruleId: "HCP004",
    fix: degenerateFix(sizes, cp),
  };
}
