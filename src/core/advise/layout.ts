// Layout advisor: which cp_comm_type (and hierarchical sizes) fits a CP/TP/heads/node
// shape. Follows docs/domain.md 3.3-3.5 and the Bridge HCP doc (section 5):
//
// * a2a (Ulysses) splits attention heads across CP ranks, per TP rank. It needs CP to
//   divide both the Q heads and the KV heads per TP rank (T10); under GQA the KV heads
//   are the indivisible unit. Its all-to-all is latency-bound, so the group should live
//   inside one NVLink domain (TP * CP <= GPUs per node).
// * a2a+p2p runs a2a in the inner, contiguous CP group (sizes[0]; ranks strided by TP,
//   so the group spans TP * sizes[0] GPUs) and a p2p ring across those groups (sizes[1]).
// * p2p (ring) has no head constraint and is the fallback.
// The doc prefers pure a2a when it fits (same throughput, more headroom), HCP when CP
// must exceed the KV heads per rank and there is a bandwidth hierarchy.
import * as z from "zod";
import { deferred } from "../model/deferred.ts";

export const LayoutInputSchema = deferred(() =>
  z.object({
    cp: z.number().int().min(1),
    tp: z.number().int().min(1),
    numAttentionHeads: z.number().int().min(1).optional(),
    numQueryGroups: z.number().int().min(1).optional(),
    gpusPerNode: z.number().int().min(1),
  }),
);
export type LayoutInput = z.input<ReturnType<typeof LayoutInputSchema>>;

export type CpCommType = "p2p" | "a2a" | "a2a+p2p";

export interface Layout {
  cpCommType: CpCommType;
  sizes?: [number, number];
  reasons: string[];
}

/** Per-TP-rank head counts, when both are known and TP divides them. */
interface RankHeads {
  q: number;
  kv: number;
}

function rankHeads(input: z.output<ReturnType<typeof LayoutInputSchema>>): RankHeads | undefined {
  const { numAttentionHeads: q, numQueryGroups: kv, tp } = input;
  if (q === undefined || kv === undefined) return undefined;
  if (q % tp !== 0 || kv % tp !== 0) return undefined;
  return { q: q / tp, kv: kv / tp };
}

const headsDivisibleBy = (heads: RankHeads, n: number): boolean => heads.q % n === 0 && heads.kv % n === 0;

/** Divisors d of n with 1 < d < n, largest first: candidate a2a sizes that leave a real p2p level. */
function properDivisorsDescending(n: number): number[] {
  const out: number[] = [];
  for (let d = n - 1; d > 1; d--) if (n % d === 0) out.push(d);
  return out;
}

/**
 * The best two-level split [a2a, p2p] for a2a+p2p, or undefined when none exists:
 * the largest a2a size that divides CP with a p2p level of at least 2, keeps the a2a
 * group inside a node (TP * a2a <= gpusPerNode) and, when head counts are known,
 * divides the Q and KV heads per TP rank. Used by the advisor and by the HCP001/2/3
 * fixes, which must keep cp_comm_type a2a+p2p.
 */
export function hierarchicalSplit(raw: LayoutInput): { sizes: [number, number]; reasons: string[] } | undefined {
  const input = LayoutInputSchema().parse(raw);
  const heads = rankHeads(input);
  for (const a2a of properDivisorsDescending(input.cp)) {
    if (input.tp * a2a > input.gpusPerNode) continue;
    if (heads && !headsDivisibleBy(heads, a2a)) continue;
    const p2p = input.cp / a2a;
    const reasons = [
      `a2a ${a2a} × p2p ${p2p} = context_parallel_size ${input.cp}`,
      `the a2a group spans TP ${input.tp} × ${a2a} = ${input.tp * a2a} GPUs, within one ${input.gpusPerNode}-GPU node`,
      heads
        ? `${a2a} divides the ${heads.q} Q and ${heads.kv} KV heads per TP rank`
        : `head counts unknown: check that ${a2a} divides num_attention_heads/TP and num_query_groups/TP`,
    ];
    return { sizes: [a2a, p2p], reasons };
  }
  return undefined;
}

export function recommendLayout(raw: LayoutInput): Layout {
  const input = LayoutInputSchema().parse(raw);
  const { cp, tp, gpusPerNode } = input;
  if (cp === 1) return { cpCommType: "p2p", reasons: ["context_parallel_size 1: no context parallelism, the type does not matter"] };

  const heads = rankHeads(input);
  if (heads && headsDivisibleBy(heads, cp) && tp * cp <= gpusPerNode) {
    return {
      cpCommType: "a2a",
      reasons: [
        `CP ${cp} divides the ${heads.q} Q and ${heads.kv} KV heads per TP rank`,
        `TP ${tp} × CP ${cp} = ${tp * cp} GPUs fits in one ${gpusPerNode}-GPU node`,
        "pure a2a is simpler than a2a+p2p and the HCP doc prefers it when it fits",
      ],
    };
  }

  const split = hierarchicalSplit(input);
  if (split) {
    const why = heads
      ? headsDivisibleBy(heads, cp)
        ? `pure a2a over CP ${cp} would span TP ${tp} × ${cp} = ${tp * cp} GPUs, more than one ${gpusPerNode}-GPU node`
        : `CP ${cp} does not divide the ${heads.q} Q / ${heads.kv} KV heads per TP rank, so pure a2a is impossible`
      : "head counts unknown, so pure a2a cannot be shown to fit";
    return { cpCommType: "a2a+p2p", sizes: split.sizes, reasons: [why, ...split.reasons] };
  }

  const reasons = [
    heads
      ? `no a2a size divides CP ${cp} and the ${heads.q} Q / ${heads.kv} KV heads per TP rank while fitting TP ${tp} in a ${gpusPerNode}-GPU node`
      : `no a2a size between 2 and ${cp - 1} divides CP ${cp} and fits TP ${tp} in a ${gpusPerNode}-GPU node (head counts unknown)`,
  ];
  reasons.push("p2p (ring) has no head or placement constraint");
  return { cpCommType: "p2p", reasons };
}
