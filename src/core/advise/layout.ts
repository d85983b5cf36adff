// Layout advisor: which cp_comm_type (and hierarchical sizes) fits a CP/TP/heads/node
// shape. Follows docs/domain.md 3.3-3.5 and the Bridge HCP doc (section 5):
//
// * a2a (Ulysses) splits attention heads across CP ranks, per TP rank. It needs CP to
//   divide both the Q heads and the KV heads per TP rank (T10); under GQA the KV heads
//   are the indivisible unit. Its all-to-all is latency-bound, so the group should live
//   inside one NVLink domain.
// * a2a+p2p runs a2a in the inner CP groups (sizes[0]) and a p2p ring across them
//   (sizes[1]). Megatron-Core (parallel_state.py, create_hierarchical_groups at Bridge's
//   pin 2a75ac1) cuts each CP group's rank list into contiguous runs of sizes[0]; CP
//   ranks are strided by TP, so each a2a group is a run of TP * sizes[0] consecutive
//   global ranks, aligned on multiples of that span. Such runs stay inside every
//   domain only when the span divides the domain's GPUs: TP 1 x a2a 6 on 8-GPU nodes
//   puts ranks 6..11 in one group, across nodes 0 and 1. Fitting (span <= GPUs) is
//   not enough.
// * p2p (ring) has no head constraint and is the fallback.
// Bridge's HCP guide (docs/training/hierarchical-context-parallel.md, "When to Use It")
// prefers pure a2a when it fits and HCP only when CP must exceed the KV heads per rank
// and there is a bandwidth hierarchy; its performance guide (upstream performance-guide.md,
// cp_comm_type) recommends p2p for small and medium CP. So when all of CP fits in one
// NVLink domain, there is no hierarchy to exploit and the advisor never picks a2a+p2p.
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
export interface RankHeads {
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

/**
 * Whether runs of `span` consecutive ranks, aligned on multiples of `span` (how
 * Megatron-Core places TP x CP and TP x a2a groups), stay inside every `domainGpus`-GPU
 * NVLink domain of a job that spans several: only when span divides the domain.
 */
export function staysInsideDomains(span: number, domainGpus: number): boolean {
  return span >= 1 && domainGpus % span === 0;
}

/** "one 8-GPU NVLink domain": a node's GPUs or an NVL72 rack's, never called a 72-GPU node. */
export const domainWords = (gpus: number): string => `one ${gpus}-GPU NVLink domain`;

/** Why `n` does not split the heads, naming only the count it fails ("the 2 KV heads per TP rank"). */
export function headsNotDividedText(heads: RankHeads, n: number, subject: string): string {
  const q = heads.q % n !== 0;
  const kv = heads.kv % n !== 0;
  const which = q && kv ? `the ${heads.q} Q heads or the ${heads.kv} KV heads` : q ? `the ${heads.q} Q heads` : `the ${heads.kv} KV heads`;
  return `${subject} does not divide ${which} per TP rank`;
}

/** Why a run of `span` ranks is not placed inside a domain: too wide, or not dividing it. */
export function placementText(what: string, tp: number, size: number, domainGpus: number): string {
  const span = tp * size;
  if (span > domainGpus) return `${what} would span TP ${tp} × ${size} = ${span} GPUs, more than ${domainWords(domainGpus)}`;
  return (
    `${what} would be runs of TP ${tp} × ${size} = ${span} consecutive ranks, and ${span} does not divide the ${domainGpus} GPUs of ` +
    `one NVLink domain, so in a job over several domains some groups cross from one into the next`
  );
}

/** Divisors d of n with 1 < d < n, largest first: candidate a2a sizes that leave a real p2p level. */
function properDivisorsDescending(n: number): number[] {
  const out: number[] = [];
  for (let d = n - 1; d > 1; d--) if (n % d === 0) out.push(d);
  return out;
}

/**
 * The best two-level split [a2a, p2p] for a2a+p2p, or undefined when none exists:
 * the largest a2a size that divides CP with a p2p level of at least 2, keeps every a2a
 * group inside one NVLink domain (TP * a2a divides its GPUs) and, when head counts are
 * known, divides the Q and KV heads per TP rank. Used by the advisor and by the
 * HCP001/2/3/9/18 fixes, which must keep cp_comm_type a2a+p2p.
 */
export function hierarchicalSplit(raw: LayoutInput): { sizes: [number, number]; reasons: string[] } | undefined {
  const input = LayoutInputSchema().parse(raw);
  const heads = rankHeads(input);
  for (const a2a of properDivisorsDescending(input.cp)) {
    const span = input.tp * a2a;
    if (!staysInsideDomains(span, input.gpusPerNode)) continue;
    if (heads && !headsDivisibleBy(heads, a2a)) continue;
    const p2p = input.cp / a2a;
    const reasons = [
      `a2a ${a2a} × p2p ${p2p} = context_parallel_size ${input.cp}`,
      `each a2a group is a run of TP ${input.tp} × ${a2a} = ${span} consecutive ranks, and ${span} divides the ${input.gpusPerNode} GPUs ` +
        `of one NVLink domain, so no a2a group crosses domains`,
      heads
        ? `${a2a} divides the ${heads.q} Q and ${heads.kv} KV heads per TP rank`
        : `head counts unknown: check that ${a2a} divides num_attention_heads/TP and num_query_groups/TP`,
    ];
    return { sizes: [a2a, p2p], reasons };
  }
  return undefined;
}

const NO_HIERARCHY =
  "Bridge's HCP guide uses a2a+p2p only where there is a bandwidth hierarchy to exploit, and its performance guide " +
  "recommends p2p for small and medium CP (the ring exchange overlaps with attention)";

/** All of CP in one NVLink domain: pure a2a when the heads and the placement allow it, else p2p; never a2a+p2p. */
function insideOneDomain(input: z.output<ReturnType<typeof LayoutInputSchema>>, heads: RankHeads | undefined): Layout {
  const { cp, tp, gpusPerNode } = input;
  const fits = `TP ${tp} × CP ${cp} = ${tp * cp} GPUs fits in ${domainWords(gpusPerNode)}`;
  if (heads && headsDivisibleBy(heads, cp) && staysInsideDomains(tp * cp, gpusPerNode)) {
    return {
      cpCommType: "a2a",
      reasons: [`CP ${cp} divides the ${heads.q} Q and ${heads.kv} KV heads per TP rank`, fits, "pure a2a is simpler than a2a+p2p and the HCP guide prefers it when it fits"],
    };
  }
  const whyNotA2a = !heads
    ? "head counts unknown, so pure a2a cannot be shown to divide them"
    : !headsDivisibleBy(heads, cp)
      ? headsNotDividedText(heads, cp, `CP ${cp}`)
      : placementText("the a2a groups", tp, cp, gpusPerNode);
  return { cpCommType: "p2p", reasons: [whyNotA2a, `${fits}: no slower level for a2a+p2p to keep its ring on`, NO_HIERARCHY] };
}

export function recommendLayout(raw: LayoutInput): Layout {
  const input = LayoutInputSchema().parse(raw);
  const { cp, tp, gpusPerNode } = input;
  if (cp === 1) return { cpCommType: "p2p", reasons: ["context_parallel_size 1: no context parallelism, the type does not matter"] };

  const heads = rankHeads(input);
  if (tp * cp <= gpusPerNode) return insideOneDomain(input, heads);

  const split = hierarchicalSplit(input);
  if (split) {
    const why = heads
      ? headsDivisibleBy(heads, cp)
        ? `pure a2a over CP ${cp} would span TP ${tp} × ${cp} = ${tp * cp} GPUs, more than ${domainWords(gpusPerNode)}`
        : `${headsNotDividedText(heads, cp, `CP ${cp}`)}, so pure a2a is impossible`
      : "head counts unknown, so pure a2a cannot be shown to fit";
    return { cpCommType: "a2a+p2p", sizes: split.sizes, reasons: [why, ...split.reasons] };
  }

  const reasons = [
    heads
      ? `no a2a size divides CP ${cp} and the ${heads.q} Q / ${heads.kv} KV heads per TP rank while TP ${tp} × a2a divides the ${gpusPerNode} GPUs of one NVLink domain`
      : `no a2a size between 2 and ${cp - 1} divides CP ${cp} while TP ${tp} × a2a divides the ${gpusPerNode} GPUs of one NVLink domain (head counts unknown)`,
  ];
  reasons.push("p2p (ring) has no head or placement constraint");
  return { cpCommType: "p2p", reasons };
}
