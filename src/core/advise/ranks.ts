// Which global ranks form each process group, in Megatron-Core's rank order.
//
// parallel_state.initialize_model_parallel places ranks by `order="tp-cp-ep-dp-pp"` (the
// default; EP is 1 on the dense grid): the first name varies fastest, so
//   rank = tp + TP·(cp + CP·(dp + DP·pp)).
// A group of kind X holds the ranks that differ only in X; groups are listed with the
// other coordinates counting up, the earliest name fastest (RankGenerator.get_ranks).
// The hierarchical CP groups split each CP group's rank list: level 0 takes contiguous
// runs of sizes[0] (the a2a groups), level 1 takes every sizes[0]-th rank of a run of
// sizes[0]·sizes[1] (the p2p rings), and so on (create_hierarchical_groups).
// test/advise/ranks.test.ts checks all of this against groups recorded from Megatron-Core.

export interface RankGridInput {
  tp: number;
  cp: number;
  /** Pipeline stages (default 1). */
  pp?: number;
  /** Data-parallel replicas (default 1). */
  dp?: number;
  /** hierarchical_context_parallel_sizes; its product must be cp. */
  sizes?: readonly number[];
}

export interface RankGrid {
  tp: number;
  cp: number;
  dp: number;
  pp: number;
  world: number;
  sizes?: readonly number[];
  /** Groups per kind, each in Megatron's order, each group's ranks in group-rank order. */
  tpGroups: number[][];
  cpGroups: number[][];
  dpGroups: number[][];
  ppGroups: number[][];
  /** levels[0]: the a2a groups, levels[1]: the p2p rings (two-level HCP); empty without sizes. */
  levels: number[][][];
}

type Axis = "tp" | "cp" | "dp" | "pp";
const ORDER: readonly Axis[] = ["tp", "cp", "dp", "pp"];

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer (got ${value})`);
  return value;
}

/**
 * The rank offset of mixed-radix `index` (the first radix fastest) along the axes whose
 * sizes and strides are given. Arithmetic only: at the advisor's bound (65,536 GPUs) this
 * runs for every rank of every kind of group, and an array per call cost most of its time.
 */
function offsetOf(index: number, radices: readonly number[], strides: readonly number[]): number {
  let offset = 0;
  for (let i = 0; i < radices.length; i++) {
    const r = radices[i]!;
    offset += (index % r) * strides[i]!;
    index = Math.floor(index / r);
  }
  return offset;
}

/** The groups of the ranks that differ only in the `varying` axes. */
function groupsAlong(sizes: Record<Axis, number>, varying: readonly Axis[]): number[][] {
  const stride: Record<Axis, number> = { tp: 1, cp: 0, dp: 0, pp: 0 };
  let s = 1;
  for (const axis of ORDER) {
    stride[axis] = s;
    s *= sizes[axis];
  }
  const inside = ORDER.filter((a) => varying.includes(a));
  const outside = ORDER.filter((a) => !varying.includes(a));
  const [inSizes, inStrides] = [inside.map((a) => sizes[a]), inside.map((a) => stride[a])];
  const [outSizes, outStrides] = [outside.map((a) => sizes[a]), outside.map((a) => stride[a])];
  const groupSize = inSizes.reduce((n, x) => n * x, 1);
  const groupCount = outSizes.reduce((n, x) => n * x, 1);
  // Every group is its base rank plus the same offsets.
  const offsets = Array.from({ length: groupSize }, (_, k) => offsetOf(k, inSizes, inStrides));
  const groups: number[][] = new Array(groupCount);
  for (let g = 0; g < groupCount; g++) {
    const base = offsetOf(g, outSizes, outStrides);
    groups[g] = offsets.map((o) => base + o);
  }
  return groups;
}

/** Level `level` of the hierarchical split of one CP group's ranks. */
function hierarchicalLevel(ranks: readonly number[], sizes: readonly number[], level: number): number[][] {
  const inner = sizes.slice(0, level).reduce((a, b) => a * b, 1);
  const size = sizes[level]!;
  const outer = sizes.slice(level + 1).reduce((a, b) => a * b, 1);
  const groups: number[][] = [];
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const group: number[] = [];
      for (let k = 0; k < size; k++) group.push(ranks[o * size * inner + k * inner + i]!);
      groups.push(group);
    }
  }
  return groups;
}

export function rankGrid(input: RankGridInput): RankGrid {
  const sizes: Record<Axis, number> = {
    tp: positiveInt("tp", input.tp),
    cp: positiveInt("cp", input.cp),
    dp: positiveInt("dp", input.dp ?? 1),
    pp: positiveInt("pp", input.pp ?? 1),
  };
  const hcp = input.sizes;
  if (hcp) {
    hcp.forEach((s, i) => positiveInt(`sizes[${i}]`, s));
    const product = hcp.reduce((a, b) => a * b, 1);
    if (product !== sizes.cp) throw new RangeError(`the hierarchical sizes multiply to ${product}, not CP ${sizes.cp}`);
  }
  const cpGroups = groupsAlong(sizes, ["cp"]);
  return {
    ...sizes,
    world: sizes.tp * sizes.cp * sizes.dp * sizes.pp,
    ...(hcp ? { sizes: [...hcp] } : {}),
    tpGroups: groupsAlong(sizes, ["tp"]),
    cpGroups,
    dpGroups: groupsAlong(sizes, ["dp"]),
    ppGroups: groupsAlong(sizes, ["pp"]),
    levels: hcp ? hcp.map((_, level) => cpGroups.flatMap((ranks) => hierarchicalLevel(ranks, hcp, level))) : [],
  };
}

/** For each rank, the index of the group holding it (groups partition the ranks). */
export function groupIndexOfRank(groups: readonly (readonly number[])[], world: number): number[] {
  const index = new Array<number>(world).fill(-1);
  groups.forEach((group, g) => group.forEach((rank) => (index[rank] = g)));
  return index;
}
