// The layout advisor as users reach it (`hcp-bot advise`, `/hcp advise`, the playground):
// the recommendation of layout.ts with its reasons, every alternative it rejected and why,
// and the rank groups of the recommended layout on the job's nodes. Pure: numbers in,
// a value out; renderers in src/core/render/layout draw it.
import * as z from "zod";
import { headsNotDividedText, placementText, recommendLayout, staysInsideDomains, type CpCommType, type Layout } from "./layout.ts";
import { rankGrid, type RankGrid } from "./ranks.ts";

const Count = z.number().int().min(1).max(1_000_000);

export const AdviseInputSchema = z.object({
  cp: Count,
  tp: Count.default(1),
  pp: Count.default(1),
  numAttentionHeads: Count.optional(),
  numQueryGroups: Count.optional(),
  /** GPUs of one NVLink domain: a node's GPUs, or an NVL72 rack's. */
  domainGpus: Count.default(8),
  /** Whether domainGpus came from --nvlink-domain (the picture then says "NVLink domain", not "node"). */
  domain: z.enum(["node", "nvlink"]).default("node"),
  /** Nodes (domains) of the job; the GPUs beyond TP × CP × PP are data parallel. */
  nodes: Count.optional(),
});
export type AdviseInput = z.input<typeof AdviseInputSchema>;
type Input = z.output<typeof AdviseInputSchema>;

export interface Candidate {
  cpCommType: CpCommType;
  sizes?: [number, number];
}

export interface Rejected extends Candidate {
  why: string;
}

export interface Advice {
  input: Input;
  recommendation: Layout;
  rejected: Rejected[];
  /** The recommended layout's groups on the whole job (DP replicas included). */
  grid: RankGrid;
  /** Domains the job spans (the last may be partly used). */
  domains: number;
}

export class AdviseError extends Error {}

export function candidateText(c: Candidate): string {
  return c.sizes ? `${c.cpCommType} [${c.sizes.join(", ")}]` : c.cpCommType;
}

interface Heads {
  q: number;
  kv: number;
}

function headsPerRank(input: Input): Heads | undefined {
  const { numAttentionHeads: q, numQueryGroups: kv, tp } = input;
  if (q === undefined || kv === undefined || q % tp !== 0 || kv % tp !== 0) return undefined;
  return { q: q / tp, kv: kv / tp };
}

const where = (input: Input): string => (input.domain === "nvlink" ? `one ${input.domainGpus}-GPU NVLink domain` : `one ${input.domainGpus}-GPU node`);

/** Why pure a2a over all of CP was not chosen. */
function whyNotA2a(input: Input, heads: Heads | undefined): string {
  const { cp, tp } = input;
  if (!heads) return "the head counts are not known, so pure a2a cannot be shown to divide them (give --heads and --kv-heads)";
  if (heads.q % cp !== 0 || heads.kv % cp !== 0) {
    return `${headsNotDividedText(heads, cp, `CP ${cp}`)}; Transformer Engine refuses it (cp_comm_type='a2a' requires num_heads % cp_size == 0)`;
  }
  if (tp * cp > input.domainGpus) {
    return `its all-to-all would span TP ${tp} × CP ${cp} = ${tp * cp} GPUs, more than ${where(input)}, so the latency-bound exchange would cross the slower inter-node fabric`;
  }
  return `${placementText("its CP groups", tp, cp, input.domainGpus)}; give --nvlink-domain with the GPUs a job really places per domain (Bridge's performance guide suggests 64 of an NVL72's 72)`;
}

const allCpInside = (input: Input): boolean => input.tp * input.cp <= input.domainGpus;

/** Why a two-level split other than the chosen one was not chosen. */
function whyNotSplit(input: Input, heads: Heads | undefined, a2a: number, chosen: Layout): string {
  const { tp } = input;
  if (!staysInsideDomains(tp * a2a, input.domainGpus)) {
    return `${placementText("the a2a groups", tp, a2a, input.domainGpus)}, putting the all-to-all on the inter-node fabric (HCP018)`;
  }
  if (heads && (heads.q % a2a !== 0 || heads.kv % a2a !== 0)) {
    return `${headsNotDividedText(heads, a2a, String(a2a))}, so the a2a level cannot split them`;
  }
  if (chosen.cpCommType === "a2a") return "pure a2a fits, and the HCP guide prefers pure a2a whenever CP divides the KV heads per TP rank: one level, no p2p ring to add";
  if (allCpInside(input)) {
    return `all of CP (TP ${tp} × CP ${input.cp} = ${tp * input.cp} GPUs) fits in ${where(input)}: there is no slower level for the p2p ring, and Bridge's HCP guide uses a2a+p2p only with a bandwidth hierarchy`;
  }
  if (chosen.sizes && a2a < chosen.sizes[0]) {
    return `a smaller a2a level leaves more of CP on the p2p ring; a2a ${chosen.sizes[0]} still fits in ${where(input)}`;
  }
  return "not a better fit than the recommendation";
}

function whyNotP2p(input: Input, chosen: Layout): string {
  if (chosen.cpCommType === "a2a") {
    return `p2p needs nothing from the heads and Bridge's performance guide recommends it for small and medium CP; pure a2a is chosen because all of CP divides the heads and fits in ${where(input)}, which the HCP guide prefers for its simplicity`;
  }
  return `p2p needs nothing from the heads but runs every CP step as a ring exchange; here the a2a level (${chosen.sizes?.[0]}) fits in ${where(input)} as an all-to-all, which upstream prefers for large CP (a2a inside the NVLink domain, p2p across it)`;
}

function rejectedAlternatives(input: Input, chosen: Layout): Rejected[] {
  const heads = headsPerRank(input);
  const out: Rejected[] = [];
  if (input.cp === 1) return out;
  if (chosen.cpCommType !== "a2a") out.push({ cpCommType: "a2a", why: whyNotA2a(input, heads) });
  for (let a2a = input.cp - 1; a2a > 1; a2a--) {
    if (input.cp % a2a !== 0) continue;
    const sizes: [number, number] = [a2a, input.cp / a2a];
    if (chosen.sizes && chosen.sizes[0] === sizes[0]) continue;
    out.push({ cpCommType: "a2a+p2p", sizes, why: whyNotSplit(input, heads, a2a, chosen) });
  }
  if (chosen.cpCommType !== "p2p") out.push({ cpCommType: "p2p", why: whyNotP2p(input, chosen) });
  return out;
}

/**
 * The most GPUs the advisor lays out (64 Ki, past the largest jobs Megatron-Bridge's recipes
 * describe). Every rank's groups are computed, so a larger job would take memory and time in
 * proportion (4096 nodes of 1024 GPUs took 2.7 GB and 16 s); a layout repeats past its first
 * nodes, and the drawings show only those.
 */
export const MAX_ADVISE_GPUS = 65_536;

function refuseOverBound(what: string, gpus: number): void {
  if (gpus > MAX_ADVISE_GPUS) throw new AdviseError(`${what} = ${gpus} GPUs is more than the advisor lays out (at most ${MAX_ADVISE_GPUS}; the layout repeats past the first nodes, so fewer nodes show the same answer)`);
}

function dataParallel(input: Input): { dp: number; domains: number } {
  const modelGpus = input.tp * input.cp * input.pp;
  refuseOverBound(`TP ${input.tp} × CP ${input.cp} × PP ${input.pp}`, modelGpus);
  if (input.nodes !== undefined) refuseOverBound(`${input.nodes} × ${input.domainGpus}`, input.nodes * input.domainGpus);
  if (input.nodes === undefined) return { dp: 1, domains: Math.ceil(modelGpus / input.domainGpus) };
  const world = input.nodes * input.domainGpus;
  if (world % modelGpus !== 0) {
    throw new AdviseError(`${input.nodes} × ${input.domainGpus} = ${world} GPUs is not a multiple of TP ${input.tp} × CP ${input.cp} × PP ${input.pp} = ${modelGpus}`);
  }
  return { dp: world / modelGpus, domains: input.nodes };
}

export function adviseLayout(raw: AdviseInput): Advice {
  const parsed = AdviseInputSchema.safeParse(raw);
  if (!parsed.success) throw new AdviseError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  const input = parsed.data;
  const { dp, domains } = dataParallel(input);
  const recommendation = recommendLayout({
    cp: input.cp,
    tp: input.tp,
    gpusPerNode: input.domainGpus,
    ...(input.numAttentionHeads !== undefined ? { numAttentionHeads: input.numAttentionHeads } : {}),
    ...(input.numQueryGroups !== undefined ? { numQueryGroups: input.numQueryGroups } : {}),
  });
  const grid = rankGrid({ tp: input.tp, cp: input.cp, pp: input.pp, dp, ...(recommendation.sizes ? { sizes: recommendation.sizes } : {}) });
  return { input, recommendation, rejected: rejectedAlternatives(input, recommendation), grid, domains };
}
