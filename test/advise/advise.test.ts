// The advisor as users see it: the recommendation, the rejected alternatives with their
// reasons, the job's rank groups, and each drawing of them.
import { describe, expect, it } from "vitest";
import { adviseLayout, candidateText } from "../../src/core/advise/advise.ts";
import { rankGrid } from "../../src/core/advise/ranks.ts";
import { advicePicture, formatAdviceMarkdown, formatAdviceSlack, formatAdviceText } from "../../src/core/render/layout/advice.ts";
import { formatLayoutMermaid, MERMAID_MAX_RANKS } from "../../src/core/render/layout/mermaid.ts";
import { pictureOf, proposedPicture } from "../../src/core/render/layout/picture.ts";
import { formatLayoutSvg } from "../../src/core/render/layout/svg.ts";
import { formatLayoutGrid } from "../../src/core/render/layout/text.ts";

const llama8b = { numAttentionHeads: 32, numQueryGroups: 8 };

describe("adviseLayout", () => {
  it("HCP doc example A: TP 1, CP 16, 8 KV heads on 8-GPU nodes → a2a+p2p [8, 2], everything else rejected with a reason", () => {
    const advice = adviseLayout({ cp: 16, ...llama8b });
    expect(advice.recommendation).toMatchObject({ cpCommType: "a2a+p2p", sizes: [8, 2] });
    expect(advice.rejected.map(candidateText)).toEqual(["a2a", "a2a+p2p [4, 4]", "a2a+p2p [2, 8]", "p2p"]);
    expect(advice.rejected[0]!.why).toMatch(/CP 16 does not divide the 8 KV heads per TP rank/);
    expect(advice.rejected[1]!.why).toMatch(/smaller a2a level/);
    expect(advice.rejected[3]!.why).toMatch(/a2a inside the NVLink domain, p2p across it/);
    expect(advice.grid.world).toBe(16);
    expect(advice.domains).toBe(2);
  });

  it("HCP doc example B: TP 2, CP 4 → pure a2a; the split is rejected because pure a2a fits", () => {
    const advice = adviseLayout({ cp: 4, tp: 2, ...llama8b });
    expect(advice.recommendation.cpCommType).toBe("a2a");
    expect(advice.rejected.find((r) => r.sizes)?.why).toMatch(/pure a2a fits/);
  });

  it("an a2a level too large for the node is rejected as crossing it (the HCP018 case)", () => {
    const advice = adviseLayout({ cp: 16, tp: 2, ...llama8b });
    expect(advice.recommendation.sizes).toEqual([4, 4]);
    expect(advice.rejected.find((r) => r.sizes?.[0] === 8)?.why).toMatch(/TP 2 × 8 = 16 GPUs, more than one 8-GPU NVLink domain/);
  });

  it("an NVL72 domain: CP 16 fits but 16 does not divide 72, so p2p, never a2a+p2p; counted as 64 placed GPUs, pure a2a", () => {
    const advice = adviseLayout({ cp: 16, numAttentionHeads: 64, numQueryGroups: 16, domainGpus: 72, domain: "nvlink" });
    expect(advice.recommendation.cpCommType).toBe("p2p");
    expect(advice.rejected.find((r) => r.cpCommType === "a2a")?.why).toMatch(/16 does not divide the 72 GPUs/);
    expect(advice.rejected.find((r) => r.sizes?.[0] === 8)?.why).toMatch(/no slower level for the p2p ring/);
    expect(advicePicture(advice).domainName).toBe("NVLink domain");
    expect(adviseLayout({ cp: 16, numAttentionHeads: 64, numQueryGroups: 16, domainGpus: 64, domain: "nvlink" }).recommendation.cpCommType).toBe("a2a");
  });

  it("TP 1, CP 12 on 8-GPU nodes: [4, 3], and [6, 2] is rejected because its groups straddle nodes in Megatron-Core's order", () => {
    const advice = adviseLayout({ cp: 12, nodes: 3 });
    expect(advice.recommendation).toMatchObject({ cpCommType: "a2a+p2p", sizes: [4, 3] });
    expect(advice.rejected.find((r) => r.sizes?.[0] === 6)?.why).toMatch(/6 does not divide the 8 GPUs of one NVLink domain/);
    for (const group of advice.grid.levels[0]!) expect(new Set(group.map((r) => Math.floor(r / 8))).size).toBe(1);
    const six = rankGrid({ tp: 1, cp: 12, dp: 2, sizes: [6, 2] });
    expect(six.levels[0]!.some((g) => new Set(g.map((r) => Math.floor(r / 8))).size > 1)).toBe(true);
  });

  it("all of CP inside one node: the advisor never prefers a2a+p2p", () => {
    for (const cp of [2, 4, 8]) {
      for (const tp of [1, 2]) {
        if (tp * cp > 8) continue;
        const advice = adviseLayout({ cp, tp, numAttentionHeads: 8, numQueryGroups: 2 });
        expect(advice.recommendation.cpCommType).not.toBe("a2a+p2p");
      }
    }
    expect(adviseLayout({ cp: 8, numAttentionHeads: 8, numQueryGroups: 2 }).recommendation.reasons[0]).toBe("CP 8 does not divide the 2 KV heads per TP rank");
  });

  it("the remaining GPUs of --nodes are data parallel; a node count that does not fit is refused", () => {
    const advice = adviseLayout({ cp: 8, tp: 2, nodes: 4, ...llama8b });
    expect(advice.grid).toMatchObject({ dp: 2, world: 32 });
    expect(() => adviseLayout({ cp: 16, nodes: 3 })).toThrow(/3 × 8 = 24 GPUs is not a multiple of TP 1 × CP 16 × PP 1 = 16/);
    expect(() => adviseLayout({ cp: 0 })).toThrow(/cp/);
  });

  it("head counts unknown: the advice says so instead of guessing", () => {
    const advice = adviseLayout({ cp: 16 });
    expect(advice.recommendation.reasons.join(" ")).toMatch(/head counts unknown/);
    expect(advice.rejected[0]!.why).toMatch(/not known/);
  });
});

describe("the drawings show the groups Megatron builds", () => {
  const advice = adviseLayout({ cp: 8, tp: 2, nodes: 2, ...llama8b });
  const picture = advicePicture(advice);
  const grid = rankGrid({ tp: 2, cp: 8, sizes: [4, 2] });

  it("the picture's sets are the rank grid's TP groups, a2a and p2p levels", () => {
    expect(picture.sets.map((s) => [s.kind, s.groups])).toEqual([
      ["tp", grid.tpGroups],
      ["a2a", grid.levels[0]],
      ["p2p", grid.levels[1]],
    ]);
    expect(picture.title).toBe("TP 2 × CP 8 (a2a 4 × p2p 2) × DP 1 × PP 1 = 16 GPUs on 2 nodes of 8 GPUs");
  });

  it("text grid: a block per node, each rank's TP group, a2a group and p2p ring under its GPU", () => {
    const text = formatLayoutGrid(picture);
    expect(text).toMatch(/^node 0 +GPU +0 +1 +2 +3 +4 +5 +6 +7$/m);
    expect(text).toMatch(/^node 1 +GPU +0 /m);
    expect(text).toMatch(/^ +rank +8 +9 +10 +11 +12 +13 +14 +15$/m);
    expect(text).toMatch(/^ +tp +t0 +t0 +t1 +t1 +t2 +t2 +t3 +t3$/m);
    // a0 = [0, 2, 4, 6] and a2 = [1, 3, 5, 7] interleave in node 0; every p2p ring joins the two nodes.
    expect(text).toMatch(/^ +a2a +a0 +a2 +a0 +a2 +a0 +a2 +a0 +a2$/m);
    expect(text).toContain("a0 [0, 2, 4, 6]");
    expect(text).toContain("p0 [0, 8]");
    expect(text).toMatch(/a2a groups .*each inside one node/);
    expect(text).toMatch(/p2p rings .*across nodes/);
  });

  it("SVG: one cell per rank, well-formed, every label a number or a fixed word", () => {
    const svg = formatLayoutSvg(picture);
    expect(svg.startsWith("<svg ")).toBe(true);
    const ranks = [...svg.matchAll(/class="rank">(\d+)</g)].map((m) => Number(m[1]));
    expect(ranks).toEqual([...Array(16).keys()]);
    expect(svg.match(/class="tp"/g)).toHaveLength(8);
    expect(svg.match(/class="ring"/g)).toHaveLength(8);
    expect(balancedTags(svg)).toBe(true);
  });

  it("Mermaid: a subgraph per node holding the a2a groups, and a dotted link along each ring", () => {
    const md = formatLayoutMermaid(picture);
    const block = /```mermaid\n([\s\S]*?)```/.exec(md)![1]!;
    expect(block).toMatch(/^flowchart TB/);
    expect(block).toContain('subgraph n0["node 0"]');
    expect(block).toContain('subgraph n0a0["a2a a0"]');
    for (const [a, b] of grid.levels[1]!) expect(block).toContain(`r${a} -.- r${b}`);
    expect(block).toContain('r3["3 · t1"]');
    // Only numbers and fixed words: nothing a PR could have written.
    expect(block.replace(/(node|a2a|direction|subgraph|end|flowchart|TB|LR|r\d+|n\d+(a\d+)?|a\d+|t\d+|\d+|[\s"[\]·.-])/g, "")).toBe("");
  });

  it("Mermaid caps big jobs at the first nodes and says so", () => {
    const big = formatLayoutMermaid(pictureOf({ grid: rankGrid({ tp: 1, cp: 16, dp: 8, sizes: [8, 2] }), cpCommType: "a2a+p2p", domainGpus: 8 }));
    expect(big.match(/\["\d+"\]/g)).toHaveLength(MERMAID_MAX_RANKS);
    expect(big).toMatch(/The first 8 node\(s\) are drawn; 64 more ranks/);
  });

  it("the words: recommendation, settings, rejected choices, then the picture", () => {
    const text = formatAdviceText(advice);
    expect(text).toMatch(/^Recommended: cp_comm_type="a2a\+p2p", hierarchical_context_parallel_sizes=\[4, 2\]/);
    expect(text).toContain('cfg.model.hierarchical_context_parallel_sizes = [4, 2]');
    expect(text).toMatch(/Rejected:\n {2}a2a +CP 8 does not divide/);
    expect(formatAdviceMarkdown(advice)).toContain("```mermaid");
    const slack = formatAdviceSlack(advice);
    expect(slack).toMatch(/```TP 2 × CP 8/);
    expect(slack).not.toContain("mermaid");
  });

  it("a fix's proposed sizes draw one model replica", () => {
    const p = proposedPicture({ tp: 1, sizes: [8, 2], domainGpus: 8 });
    expect(p.world).toBe(16);
    expect(p.sets.map((s) => s.kind)).toEqual(["a2a", "p2p"]);
  });
});

/** A tag-stack check: every element that opens is closed, in order. */
function balancedTags(xml: string): boolean {
  const stack: string[] = [];
  for (const m of xml.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing) continue;
    if (closing) {
      if (stack.pop() !== name) return false;
    } else stack.push(name!);
  }
  return stack.length === 0;
}
