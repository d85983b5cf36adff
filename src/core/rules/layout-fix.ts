// Fixes that need a layout: the rules about hierarchical sizes ask the layout advisor
// for a split whose product is CP, with the a2a level inside a node and dividing the
// heads when they are known.
import { hierarchicalSplit, recommendLayout, type Layout } from "../advise/layout.ts";
import type { Fix, ProjectFacts } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { headsPerRank, nvlinkDomain, tensorParallel } from "./effective.ts";
import { editFor, fixOf, repr } from "./report.ts";

interface Split {
  sizes: [number, number];
  reasons: string[];
}

function advisorInput(unit: ConfigUnit, project: ProjectFacts, cp: number) {
  const tp = tensorParallel(unit);
  if (!tp || tp.value < 1 || cp < 1) return undefined;
  const heads = headsPerRank(unit);
  return {
    cp,
    tp: tp.value,
    gpusPerNode: nvlinkDomain(unit, project).gpus,
    ...(heads ? { numAttentionHeads: heads.q * heads.tp, numQueryGroups: heads.kv * heads.tp } : {}),
  };
}

/** The advisor's [a2a, p2p] for this unit at `cp`; undefined when TP is unknown or no split exists. */
export function splitFor(unit: ConfigUnit, project: ProjectFacts, cp: number): Split | undefined {
  const input = advisorInput(unit, project, cp);
  return input ? hierarchicalSplit(input) : undefined;
}

/** The advisor's full recommendation (may be pure a2a or p2p); undefined when TP is unknown. */
export function layoutFor(unit: ConfigUnit, project: ProjectFacts, cp: number): Layout | undefined {
  const input = advisorInput(unit, project, cp);
  return input ? recommendLayout(input) : undefined;
}

/** "8 GPUs per NVLink domain (the default for 8-GPU H100/H200 nodes)": the number a split was placed with, and its source. */
export function domainText(unit: ConfigUnit, project: ProjectFacts): string {
  const domain = nvlinkDomain(unit, project);
  return `${domain.gpus} GPUs per NVLink domain (${domain.source})`;
}

/** "[8, 2] (a2a 8 x p2p 2 = context_parallel_size 16, with 8 GPUs per NVLink domain (...))". */
export function splitText(sizes: readonly [number, number], unit: ConfigUnit, project: ProjectFacts): string {
  return `${repr([...sizes])} (a2a ${sizes[0]} × p2p ${sizes[1]} = context_parallel_size ${sizes[0] * sizes[1]}, placed for ${domainText(unit, project)})`;
}

export function setSizesFix(unit: ConfigUnit, project: ProjectFacts, sizes: [number, number]): Fix | undefined {
  const fix = fixOf(`Set model.hierarchical_context_parallel_sizes to ${repr([...sizes])} (for ${domainText(unit, project)})`, [
    editFor(unit, "model.hierarchical_context_parallel_sizes", [...sizes]),
  ]);
  const tp = tensorParallel(unit)?.value;
  return fix && tp ? { ...fix, layout: { tp, sizes: [sizes[0], sizes[1]], domainGpus: nvlinkDomain(unit, project).gpus } } : fix;
}
