import { describe, expect, it } from "vitest";
import { hierarchicalSplit, recommendLayout, type LayoutInput } from "../../src/core/advise/layout.ts";
import { rankGrid } from "../../src/core/advise/ranks.ts";

type Case = [string, LayoutInput, "p2p" | "a2a" | "a2a+p2p", [number, number] | undefined];

const CASES: Case[] = [
  // HCP doc decision example: 8 KV heads, 4×8 GPUs.
  ["llama3-8B TP1 CP16 → HCP [8,2]", { cp: 16, tp: 1, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "a2a+p2p", [8, 2]],
  ["llama3-8B TP2 CP4 → pure a2a", { cp: 4, tp: 2, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "a2a", undefined],
  // docs/domain.md 1.5: 2 KV heads per TP rank, CP 4 → a2a impossible, [2,2] fits.
  ["llama3-8B TP4 CP4 → HCP [2,2]", { cp: 4, tp: 4, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "a2a+p2p", [2, 2]],
  ["MQA (1 KV head) → p2p", { cp: 8, tp: 1, numAttentionHeads: 32, numQueryGroups: 1, gpusPerNode: 8 }, "p2p", undefined],
  ["heads fit but a2a would leave the node → HCP", { cp: 16, tp: 1, numAttentionHeads: 64, numQueryGroups: 16, gpusPerNode: 8 }, "a2a+p2p", [8, 2]],
  // Megatron-Core places CP groups as runs of TP x CP consecutive ranks: 16 does not divide 72, so pure a2a would cross racks.
  ["NVL72: CP 16 fits but 16 does not divide 72 → p2p", { cp: 16, tp: 1, numAttentionHeads: 64, numQueryGroups: 16, gpusPerNode: 72 }, "p2p", undefined],
  ["NVL72 counted as 64 placed GPUs keeps pure a2a", { cp: 16, tp: 1, numAttentionHeads: 64, numQueryGroups: 16, gpusPerNode: 64 }, "a2a", undefined],
  ["NVL72: TP 4 CP 32 → a2a 2 (TP 4 × 2 = 8 divides 72; 4 × 4 = 16 does not)", { cp: 32, tp: 4, numAttentionHeads: 64, numQueryGroups: 8, gpusPerNode: 72 }, "a2a+p2p", [2, 16]],
  ["TP fills the node → p2p", { cp: 4, tp: 8, numAttentionHeads: 64, numQueryGroups: 8, gpusPerNode: 8 }, "p2p", undefined],
  ["CP prime, heads do not divide → p2p", { cp: 3, tp: 1, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "p2p", undefined],
  ["CP 1 → p2p", { cp: 1, tp: 1, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "p2p", undefined],
  ["heads unknown CP16 → [8,2]", { cp: 16, tp: 1, gpusPerNode: 8 }, "a2a+p2p", [8, 2]],
  // All of CP inside one NVLink domain: no bandwidth hierarchy, so never a2a+p2p (Bridge HCP guide, "When to Use It").
  ["heads unknown CP4 inside one node → p2p", { cp: 4, tp: 1, gpusPerNode: 8 }, "p2p", undefined],
  ["CP 8 over 2 KV heads inside one node → p2p, not HCP", { cp: 8, tp: 1, numAttentionHeads: 8, numQueryGroups: 2, gpusPerNode: 8 }, "p2p", undefined],
  ["CP 6 (heads divide) inside one node, 6 does not divide 8 → p2p", { cp: 6, tp: 1, numAttentionHeads: 48, numQueryGroups: 6, gpusPerNode: 8 }, "p2p", undefined],
  // TP 1, CP 12 on 8-GPU nodes: [6, 2] groups ranks 6..11 across nodes; [4, 3] stays inside.
  ["TP1 CP12 → [4,3], not [6,2]", { cp: 12, tp: 1, gpusPerNode: 8 }, "a2a+p2p", [4, 3]],
  ["TP2 CP12 → [4,3] (TP 2 × 4 = 8)", { cp: 12, tp: 2, numAttentionHeads: 96, numQueryGroups: 24, gpusPerNode: 8 }, "a2a+p2p", [4, 3]],
  ["heads unknown TP4 CP8 → [2,4]", { cp: 8, tp: 4, gpusPerNode: 8 }, "a2a+p2p", [2, 4]],
  ["heads unknown CP2 → p2p (no two-level split)", { cp: 2, tp: 1, gpusPerNode: 8 }, "p2p", undefined],
  ["only Q heads known counts as unknown", { cp: 16, tp: 1, numAttentionHeads: 32, gpusPerNode: 8 }, "a2a+p2p", [8, 2]],
];

describe("recommendLayout", () => {
  it.each(CASES)("%s", (_name, input, type, sizes) => {
    const layout = recommendLayout(input);
    expect(layout.cpCommType).toBe(type);
    expect(layout.sizes).toEqual(sizes);
    expect(layout.reasons.length).toBeGreaterThan(0);
    if (layout.sizes) expect(layout.sizes[0] * layout.sizes[1]).toBe(input.cp);
  });

  it("says when head counts are unknown", () => {
    const layout = recommendLayout({ cp: 16, tp: 1, gpusPerNode: 8 });
    expect(layout.reasons.join(" ")).toMatch(/head counts unknown/);
  });

  it("explains why pure a2a was rejected for llama3-8B CP16", () => {
    const layout = recommendLayout({ cp: 16, tp: 1, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 });
    expect(layout.reasons[0]).toBe("CP 16 does not divide the 8 KV heads per TP rank, so pure a2a is impossible");
  });

  it("names only the head count CP fails: CP 8 divides 8 Q heads, not 2 KV heads", () => {
    const layout = recommendLayout({ cp: 8, tp: 1, numAttentionHeads: 8, numQueryGroups: 2, gpusPerNode: 8 });
    expect(layout.reasons[0]).toBe("CP 8 does not divide the 2 KV heads per TP rank");
    expect(layout.reasons.join(" ")).toMatch(/bandwidth hierarchy/);
    expect(layout.reasons.join(" ")).toMatch(/recommends p2p for small and medium CP/);
  });

  it("calls an NVL72 rack an NVLink domain, never a 72-GPU node", () => {
    const layout = recommendLayout({ cp: 32, tp: 4, numAttentionHeads: 64, numQueryGroups: 8, gpusPerNode: 72 });
    const text = layout.reasons.join(" ");
    expect(text).not.toMatch(/GPU node/);
    expect(text).toContain("divides the 72 GPUs of one NVLink domain");
  });

  it("rejects non-positive or fractional input", () => {
    expect(() => recommendLayout({ cp: 0, tp: 1, gpusPerNode: 8 })).toThrow();
    expect(() => recommendLayout({ cp: 4, tp: 1.5, gpusPerNode: 8 })).toThrow();
  });
});

describe("hierarchicalSplit", () => {
  it("returns a split even where pure a2a would be preferred (HCP001 must keep a2a+p2p)", () => {
    expect(hierarchicalSplit({ cp: 4, tp: 2, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 })?.sizes).toEqual([2, 2]);
  });
  it("never builds an a2a group that crosses a domain, in Megatron-Core's rank order", () => {
    for (const tp of [1, 2, 3, 4]) {
      for (const cp of [4, 6, 8, 12, 16, 18, 24, 32]) {
        const split = hierarchicalSplit({ cp, tp, gpusPerNode: 8 });
        if (split) {
          // The groups Megatron-Core builds on four nodes' worth of DP replicas: each a2a group on one node.
          const dp = Math.max(1, Math.floor(32 / (tp * cp)));
          for (const group of rankGrid({ tp, cp, dp, sizes: split.sizes }).levels[0]!) {
            expect(new Set(group.map((r) => Math.floor(r / 8))).size).toBe(1);
          }
          expect(split.sizes[1]).toBeGreaterThanOrEqual(2);
          expect(split.sizes[0] * split.sizes[1]).toBe(cp);
        }
      }
    }
  });
  it("is undefined when no a2a size divides the KV heads", () => {
    expect(hierarchicalSplit({ cp: 8, tp: 1, numAttentionHeads: 12, numQueryGroups: 3, gpusPerNode: 8 })).toBeUndefined();
  });
});
