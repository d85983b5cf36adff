// The layout as a Mermaid flowchart, for PR comments (GitHub renders ```mermaid blocks):
// a subgraph per node holding a subgraph per a2a group, each rank labelled with its TP
// group, and a dotted link along each p2p ring. Every label is a number or a fixed word.
import { domainOf, groupLabel, RANK_ORDER_NOTE, staysInDomain, type GroupSet, type Picture } from "./picture.ts";

/** Ranks drawn at most; a larger job shows its first nodes and says how many it left out. */
export const MERMAID_MAX_RANKS = 64;

function rankNode(picture: Picture, tp: GroupSet | undefined, rank: number): string {
  return `r${rank}["${rank}${tp ? ` · ${groupLabel(tp, tp.ofRank[rank]!)}` : ""}"]`;
}

export function formatLayoutMermaid(picture: Picture): string {
  const tp = picture.sets.find((s) => s.kind === "tp");
  const a2a = picture.sets.find((s) => s.kind === "a2a");
  const p2p = picture.sets.find((s) => s.kind === "p2p");
  const domainsDrawn = Math.max(1, Math.min(picture.domains, Math.floor(MERMAID_MAX_RANKS / picture.domainGpus)));
  const limit = Math.min(picture.world, domainsDrawn * picture.domainGpus);
  const drawn = (rank: number) => rank < limit;
  const lines = ["flowchart TB"];
  const nested = !a2a || staysInDomain(picture, a2a);
  if (nested) {
    for (let d = 0; d < domainsDrawn; d++) {
      lines.push(`  subgraph n${d}["${picture.domainName} ${d}"]`, "    direction LR");
      const ranks = Array.from({ length: picture.domainGpus }, (_, i) => d * picture.domainGpus + i).filter(drawn);
      if (a2a) {
        const groups = a2a.groups.map((g, i) => [g, i] as const).filter(([g]) => drawn(g[0]!) && domainOf(picture, g[0]!) === d);
        for (const [group, i] of groups) {
          lines.push(`    subgraph n${d}${groupLabel(a2a, i)}["a2a ${groupLabel(a2a, i)}"]`, ...group.map((r) => `      ${rankNode(picture, tp, r)}`), "    end");
        }
      } else lines.push(...ranks.map((r) => `    ${rankNode(picture, tp, r)}`));
      lines.push("  end");
    }
  } else {
    for (const [i, group] of a2a.groups.entries()) {
      if (!group.some(drawn)) continue;
      lines.push(`  subgraph ${groupLabel(a2a, i)}["a2a ${groupLabel(a2a, i)}"]`, ...group.filter(drawn).map((r) => `    ${rankNode(picture, tp, r)}`), "  end");
    }
  }
  if (p2p) {
    for (const ring of p2p.groups) {
      const members = ring.filter(drawn);
      for (let i = 1; i < members.length; i++) lines.push(`  r${members[i - 1]} -.- r${members[i]}`);
    }
  }
  const left = picture.world - limit;
  const note = [
    `${picture.title}; ${RANK_ORDER_NOTE}. Boxes: ${picture.domainName}s and a2a groups; dotted links: p2p rings${tp ? "; tN: the TP group" : ""}.`,
    left > 0 ? `The first ${domainsDrawn} ${picture.domainName}(s) are drawn; ${left} more ranks follow the same pattern.` : "",
  ]
    .filter(Boolean)
    .join(" ");
  return `${note}\n\n\`\`\`mermaid\n${lines.join("\n")}\n\`\`\`\n`;
}
