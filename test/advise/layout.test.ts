import { describe, expect, it } from "vitest";
import { hierarchicalSplit, recommendLayout, type LayoutInput } from "../../src/core/advise/layout.ts";

type Case = [string, LayoutInput, "p2p" | "a2a" | "a2a+p2p", [number, number] | undefined];

const CASES: Case[] = [
  // HCP doc decision example: 8 KV heads, 4×8 GPUs.
  ["llama3-8B TP1 CP16 → HCP [8,2]", { cp: 16, tp: 1, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "a2a+p2p", [8, 2]],
  ["llama3-8B TP2 CP4 → pure a2a", { cp: 4, tp: 2, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "a2a", undefined],
  // docs/domain.md 1.5: 2 KV heads per TP rank, CP 4 → a2a impossible, [2,2] fits.
  ["llama3-8B TP4 CP4 → HCP [2,2]", { cp: 4, tp: 4, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "a2a+p2p", [2, 2]],
  ["MQA (1 KV head) → p2p", { cp: 8, tp: 1, numAttentionHeads: 32, numQueryGroups: 1, gpusPerNode: 8 }, "p2p", undefined],
  ["heads fit but a2a would leave the node → HCP", { cp: 16, tp: 1, numAttentionHeads: 64, numQueryGroups: 16, gpusPerNode: 8 }, "a2a+p2p", [8, 2]],
  ["NVL72 domain keeps pure a2a", { cp: 16, tp: 1, numAttentionHeads: 64, numQueryGroups: 16, gpusPerNode: 72 }, "a2a", undefined],
  ["TP fills the node → p2p", { cp: 4, tp: 8, numAttentionHeads: 64, numQueryGroups: 8, gpusPerNode: 8 }, "p2p", undefined],
  ["CP prime, heads do not divide → p2p", { cp: 3, tp: 1, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "p2p", undefined],
  ["CP 1 → p2p", { cp: 1, tp: 1, numAttentionHeads: 32, numQueryGroups: 8, gpusPerNode: 8 }, "p2p", undefined],
  ["heads unknown CP16 → [8,2]", { cp: 16, tp: 1, gpusPerNode: 8 }, "a2a+p2p", [8, 2]],
  ["heads unknown CP4 → [2,2] (keeps a p2p level)", { cp: 4, tp: 1, gpusPerNode: 8 }, "a2a+p2p", [2, 2]],
  ["heads unknown TP4 CP8 → [2,4]", { cp: 8, tp: 4, gpusPerNode: 8 }, "a2a+p2p", [2, 4]],
  ["heads unknown CP2 → p2p (no two-level split)", { cp: 2, tp: 1, gpusPerNode: 8 }, "p2p", undefined],
  ["only Q heads known counts as unknown", { cp: 4, tp: 1, numAttentionHeads: 32, gpusPerNode: 8 }, "a2a+p2p", [2, 2]],
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
    expect(layout.reasons[0]).toContain("does not divide the 32 Q / 8 KV heads");
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
  it("never puts more than a node in the a2a level", () => {
    for (const tp of [1, 2, 4]) {
      for (const cp of [4, 8, 16, 32]) {
        const split = hierarchicalSplit({ cp, tp, gpusPerNode: 8 });
        if (split) {
          expect(tp * split.sizes[0]).toBeLessThanOrEqual(8);
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
