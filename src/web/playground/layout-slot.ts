// The layout advisor's rank-layout picture in the playground: when a finding's fix proposes
// hierarchical sizes (HCP001, HCP002, HCP018, …), the page shows which global ranks form each
// TP group, a2a group and p2p ring of that layout, node by node, in a "Rank layout" section
// between the inline comments and the summary. Built with DOM nodes and textContent only.
import { proposedPicture } from "../../core/render/layout/picture.ts";
import { formatLayoutGrid } from "../../core/render/layout/text.ts";
import type { PlaygroundReview } from "./review.ts";

export interface ProposedLayout {
  ruleId: string;
  unitName: string;
  description: string;
  tp: number;
  sizes: readonly [number, number];
  /** GPUs per NVLink domain the fix placed the sizes for, when the analyzer knew it. */
  domainGpus?: number;
}

/** Each distinct layout a fix proposes, with the first finding that proposes it. */
export function proposedSizes(review: PlaygroundReview): ProposedLayout[] {
  const seen = new Set<string>();
  const out: ProposedLayout[] = [];
  for (const f of review.findings) {
    const layout = f.fix?.layout;
    if (!layout) continue;
    const key = `${layout.tp}:${layout.sizes.join(",")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ ruleId: f.ruleId, unitName: f.unitName, description: f.fix!.description, tp: layout.tp, sizes: layout.sizes, ...(layout.domainGpus ? { domainGpus: layout.domainGpus } : {}) });
  }
  return out;
}

export function layoutPictureFor(review: PlaygroundReview, gpusPerNode = 8): HTMLElement | undefined {
  const layouts = proposedSizes(review);
  if (layouts.length === 0) return undefined;
  const box = document.createElement("div");
  for (const l of layouts) {
    const domain = l.domainGpus ?? gpusPerNode;
    const heading = document.createElement("p");
    heading.textContent = `${l.ruleId} in ${l.unitName}: ${l.description} (a2a ${l.sizes[0]} × p2p ${l.sizes[1]}, TP ${l.tp}, ${domain}-GPU NVLink domains)`;
    const grid = document.createElement("pre");
    grid.className = "layout-grid";
    grid.textContent = formatLayoutGrid(proposedPicture({ tp: l.tp, sizes: l.sizes, domainGpus: domain }), { maxDomains: 4 });
    box.append(heading, grid);
  }
  return box;
}
