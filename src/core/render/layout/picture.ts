// What every drawing of a layout shows (terminal grid, SVG, Mermaid): the GPUs domain by
// domain in global-rank order, and for each rank its TP group, a2a group and p2p ring,
// numbered in Megatron-Core's group order. Only numbers computed here end up in a drawing.
import type { CpCommType } from "../../advise/layout.ts";
import { groupIndexOfRank, rankGrid, type RankGrid } from "../../advise/ranks.ts";

export type GroupKind = "tp" | "a2a" | "p2p";

export interface GroupSet {
  kind: GroupKind;
  /** "t", "a", "p": the prefix of a group's label (t0, a3, p1). */
  prefix: string;
  title: string;
  groups: number[][];
  /** For each global rank, its group's index. */
  ofRank: number[];
}

export interface Picture {
  world: number;
  domainGpus: number;
  /** "node" or "NVLink domain". */
  domainName: string;
  /** Domains the ranks fill (the last may be partly used). */
  domains: number;
  /** "TP 2 × CP 8 (a2a 4 × p2p 2) × DP 1 × PP 1 = 16 GPUs on 2 nodes of 8 GPUs". */
  title: string;
  sets: GroupSet[];
}

export interface PictureInput {
  grid: RankGrid;
  cpCommType: CpCommType;
  domainGpus: number;
  domain?: "node" | "nvlink";
}

export interface ProposedLayout {
  tp: number;
  sizes: readonly [number, number];
  domainGpus: number;
}

/** The picture of a fix's proposed a2a+p2p sizes (one model replica). */
export function proposedPicture(layout: ProposedLayout): Picture {
  const cp = layout.sizes[0] * layout.sizes[1];
  return pictureOf({ grid: rankGrid({ tp: layout.tp, cp, sizes: layout.sizes }), cpCommType: "a2a+p2p", domainGpus: layout.domainGpus });
}

function cpText(grid: RankGrid, type: CpCommType): string {
  if (type === "a2a+p2p" && grid.sizes) return `CP ${grid.cp} (a2a ${grid.sizes[0]} × p2p ${grid.sizes[1]})`;
  return `CP ${grid.cp} (${type})`;
}

export function pictureOf({ grid, cpCommType, domainGpus, domain = "node" }: PictureInput): Picture {
  const domainName = domain === "nvlink" ? "NVLink domain" : "node";
  const domains = Math.ceil(grid.world / domainGpus);
  const sets: GroupSet[] = [];
  const add = (kind: GroupKind, prefix: string, title: string, groups: number[][]) =>
    sets.push({ kind, prefix, title, groups, ofRank: groupIndexOfRank(groups, grid.world) });
  if (grid.tp > 1) add("tp", "t", "TP groups (tensor parallel)", grid.tpGroups);
  const hierarchical = cpCommType === "a2a+p2p" && grid.levels.length === 2;
  if (hierarchical) {
    add("a2a", "a", "a2a groups (level 0 of hierarchical CP: all-to-all)", grid.levels[0]!);
    add("p2p", "p", "p2p rings (level 1: ring exchange between the a2a groups)", grid.levels[1]!);
  } else if (grid.cp > 1 && cpCommType === "a2a") add("a2a", "a", "a2a groups (CP: all-to-all)", grid.cpGroups);
  else if (grid.cp > 1) add("p2p", "p", "p2p rings (CP: ring exchange)", grid.cpGroups);
  const plural = domains === 1 ? domainName : `${domainName}s`;
  const title =
    `TP ${grid.tp} × ${cpText(grid, cpCommType)} × DP ${grid.dp} × PP ${grid.pp} = ${grid.world} GPUs ` +
    `on ${domains} ${plural} of ${domainGpus} GPUs`;
  return { world: grid.world, domainGpus, domainName, domains, title, sets };
}

export function groupLabel(set: GroupSet, index: number): string {
  return `${set.prefix}${index}`;
}

/** Which domain a global rank sits in (torchrun fills each node's GPUs with consecutive ranks). */
export function domainOf(picture: Picture, rank: number): number {
  return Math.floor(rank / picture.domainGpus);
}

/** Whether every group of `set` stays inside one domain. */
export function staysInDomain(picture: Picture, set: GroupSet): boolean {
  return set.groups.every((g) => g.every((r) => domainOf(picture, r) === domainOf(picture, g[0]!)));
}

export const RANK_ORDER_NOTE = "global ranks in Megatron-Core's order tp-cp-dp-pp: rank = tp + TP·(cp + CP·(dp + DP·pp))";
