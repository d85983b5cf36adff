// The rank groups the advisor draws must be the ones Megatron-Core builds. Checked against
// two real records: the runner's HCP probe in a real 4-rank torchrun (real-probe), and the
// groups initialize_model_parallel built for 9 layouts up to 16 ranks (fixtures/megatron-groups/groups.log).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rankGrid } from "../../src/core/advise/ranks.ts";
import { parseProbeLine } from "../../src/core/verdict/probe.ts";

const here = import.meta.dirname;

interface RankReport {
  rank: number;
  world_size: number;
  tp_size: number;
  pp_size: number;
  cp_size: number;
  hcp_sizes: number[] | null;
  tp: number[];
  cp: number[];
  dp: number[];
  pp: number[];
  hcp: number[][] | null;
}

interface RecordedCase {
  title: string;
  reports: RankReport[];
}

function recordedCases(): RecordedCase[] {
  const cases: RecordedCase[] = [];
  for (const line of readFileSync(join(here, "..", "..", "fixtures", "megatron-groups", "groups.log"), "utf8").split("\n")) {
    if (line.startsWith("# case ")) cases.push({ title: line.slice(7), reports: [] });
    // Ranks write concurrently: a report can start in the middle of another one's line.
    else for (const json of line.split("MEGATRON-GROUPS ").slice(1)) cases.at(-1)!.reports.push(JSON.parse(json) as RankReport);
  }
  return cases;
}

/** The distinct groups seen by all ranks, each as written (group-rank order kept). */
const distinct = (groups: readonly (readonly number[])[]) => [...new Set(groups.map((g) => JSON.stringify(g)))].sort();

describe("rank groups against Megatron-Core's own (fixtures/megatron-groups/groups.log)", () => {
  const cases = recordedCases();

  it("has every layout of run.sh, each with one report per rank", () => {
    expect(cases).toHaveLength(9);
    for (const c of cases) {
      expect(c.reports.map((r) => r.rank).sort((a, b) => a - b)).toEqual([...Array(c.reports[0]!.world_size).keys()]);
    }
    // TP > 1 is what the probe log cannot show: at least four layouts have it.
    expect(cases.filter((c) => c.reports[0]!.tp_size > 1).length).toBeGreaterThanOrEqual(4);
  });

  it.each(cases.map((c) => [c.title, c] as const))("%s", (_title, c) => {
    const first = c.reports[0]!;
    const dp = first.world_size / (first.tp_size * first.cp_size * first.pp_size);
    const grid = rankGrid({ tp: first.tp_size, cp: first.cp_size, pp: first.pp_size, dp, sizes: first.hcp_sizes ?? undefined });
    expect(grid.world).toBe(first.world_size);
    expect(distinct(grid.tpGroups)).toEqual(distinct(c.reports.map((r) => r.tp)));
    expect(distinct(grid.cpGroups)).toEqual(distinct(c.reports.map((r) => r.cp)));
    expect(distinct(grid.dpGroups)).toEqual(distinct(c.reports.map((r) => r.dp)));
    expect(distinct(grid.ppGroups)).toEqual(distinct(c.reports.map((r) => r.pp)));
    if (first.hcp_sizes) {
      expect(grid.levels).toHaveLength(first.hcp_sizes.length);
      grid.levels.forEach((groups, level) => expect(distinct(groups)).toEqual(distinct(c.reports.map((r) => r.hcp![level]!))));
    } else {
      expect(grid.levels).toEqual([]);
      expect(c.reports.every((r) => r.hcp === null)).toBe(true);
    }
  });
});

describe("rank groups against the real HCP probe (fixtures/logs/real-probe/s1_gloo_cp4_hcp2x2.v1.log)", () => {
  it("L0 = [0,1],[2,3] and L1 = [0,2],[1,3] for TP 1, CP 4, sizes [2, 2]", () => {
    const log = readFileSync(join(here, "..", "..", "fixtures", "logs", "real-probe", "s1_gloo_cp4_hcp2x2.v1.log"), "utf8");
    const reports = log
      .split("\n")
      .map((l) => parseProbeLine(l))
      .flatMap((p) => (p?.ok ? [p.report] : []));
    expect(reports).toHaveLength(4);
    const seen = (level: number) => distinct(reports.map((r) => r.levels!.find((l) => l.level === level)!.ranks ?? []));
    const grid = rankGrid({ tp: 1, cp: 4, sizes: [2, 2] });
    expect(seen(0)).toEqual(distinct([[0, 1], [2, 3]]));
    expect(seen(1)).toEqual(distinct([[0, 2], [1, 3]]));
    expect(distinct(grid.levels[0]!)).toEqual(seen(0));
    expect(distinct(grid.levels[1]!)).toEqual(seen(1));
  });
});

describe("rankGrid", () => {
  it("strides CP by TP (TP 2, CP 4: CP groups [0,2,4,6] and [1,3,5,7])", () => {
    const grid = rankGrid({ tp: 2, cp: 4, sizes: [2, 2] });
    expect(grid.cpGroups).toEqual([[0, 2, 4, 6], [1, 3, 5, 7]]);
    expect(grid.levels[0]).toEqual([[0, 2], [4, 6], [1, 3], [5, 7]]);
    expect(grid.levels[1]).toEqual([[0, 4], [2, 6], [1, 5], [3, 7]]);
  });
  it("refuses sizes whose product is not CP, and non-integers", () => {
    expect(() => rankGrid({ tp: 1, cp: 4, sizes: [2, 4] })).toThrow(/multiply to 8, not CP 4/);
    expect(() => rankGrid({ tp: 0, cp: 4 })).toThrow(/tp must be a positive integer/);
    expect(() => rankGrid({ tp: 1, cp: 2.5 })).toThrow(/cp must be/);
  });
});
