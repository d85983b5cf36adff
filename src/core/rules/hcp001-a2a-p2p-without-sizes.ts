// HCP001: cp_comm_type contains a2a+p2p but hierarchical_context_parallel_sizes is unset.
import type { Fix, ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, hcpSizes, replaceA2aP2p, usesA2aP2p } from "./effective.ts";
import { layoutFor, setSizesFix, splitFor, splitText } from "./layout-fix.ts";
import { defineRule, describe, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { oneLine, typesText } from "./short-message.ts";
import { BRIDGE_PR_2665, UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP001",
  name: "a2a-p2p-without-sizes",
  severity: "error",
  summary: "cp_comm_type a2a+p2p without hierarchical_context_parallel_sizes",
  doc: {
    checks:
      "A cp_comm_type that contains 'a2a+p2p' (as a string or in a per-layer list) while hierarchical_context_parallel_sizes is unset or None.",
    why:
      `Megatron-Bridge (since ${BRIDGE_PR_2665}) rejects it: ${quote(UPSTREAM.B6)} ` +
      "Stacks without that check build no hierarchical groups, Transformer Engine sees no CP group and silently runs " +
      "without context parallelism (Bridge issue #2667: ~4200 vs ~1200 tokens/s/GPU, impossible TFLOP/s, worse loss). " +
      `A Megatron-LM launch line stops in its own argument check: ${quote(UPSTREAM.M11)}`,
    example: 'cfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = "a2a+p2p"',
    fix:
      "Set cfg.model.hierarchical_context_parallel_sizes = [a2a, p2p] with a2a × p2p == context_parallel_size, the a2a " +
      "level inside one node and dividing the heads per TP rank (CP=4 → [2, 2]; CP=16 on 8-GPU nodes → [8, 2]).",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const types = commTypes(unit);
    if (types.state !== "types" || usesA2aP2p(types) !== "yes") return [];
    if (hcpSizes(unit).state !== "none") return [];
    const cp = contextParallel(unit);
    if (cp?.value === 1) return []; // HCP020 reports a2a+p2p pre-armed at CP 1

    const consequence =
      unit.kind === "mlm-launch"
        ? `Megatron-LM's argument check (megatron/training/arguments.py) rejects this: ${quote(UPSTREAM.M11)}`
        : `Megatron-Bridge rejects this: ${quote(UPSTREAM.B6)}; stacks without ${BRIDGE_PR_2665} silently disable context parallelism`;
    const { text, short, fix } = cp ? fixForCp(unit, project, cp.value, types) : { text: unknownCpAdvice(), short: "set it to [a2a, p2p] with a2a × p2p = CP", fix: undefined };
    const message = `${describe(types.setting)} but model.hierarchical_context_parallel_sizes is not set. ${consequence}. ${text}`;
    const summary = oneLine(
      `cp_comm_type ${typesText(types)}${cp ? ` at CP ${cp.value}` : ""} needs hierarchical_context_parallel_sizes, which is not set; ${short}`,
      `cp_comm_type has 'a2a+p2p'${cp ? ` at CP ${cp.value}` : ""} but hierarchical_context_parallel_sizes is not set; ${short}`,
      `cp_comm_type has 'a2a+p2p'${cp ? ` at CP ${cp.value}` : ""} but no hierarchical sizes are set; ${short}`,
    );
    return [reportAt(unit, types.setting, message, { summary, fix, related: relatedTo(cp?.setting, "context parallel size") })];
  },
});

function unknownCpAdvice(): string {
  return (
    "context_parallel_size is not known here, so no sizes can be computed: set hierarchical_context_parallel_sizes = " +
    "[a2a, p2p] with a2a × p2p = context_parallel_size (e.g. CP 4 → [2, 2])."
  );
}

function fixForCp(
  unit: ConfigUnit,
  project: ProjectFacts,
  cp: number,
  types: Extract<ReturnType<typeof commTypes>, { state: "types" }>,
): { text: string; short: string; fix: Fix | undefined } {
  const split = splitFor(unit, project, cp);
  if (split) {
    return {
      text: `Set hierarchical_context_parallel_sizes = ${splitText(split.sizes, unit, project)}; ${split.reasons.slice(1).join("; ")}.`,
      short: `set it to ${repr([...split.sizes])}`,
      fix: setSizesFix(unit, project, split.sizes),
    };
  }
  const layout = layoutFor(unit, project, cp);
  if (layout && !layout.sizes) {
    // No two-level split exists (CP prime, or TP fills the node): a2a+p2p would degenerate to one level anyway.
    const value = replaceA2aP2p(types, layout.cpCommType);
    return {
      text: `No two-level split of context_parallel_size ${cp} fits (${layout.reasons[0]}); use cp_comm_type ${repr(layout.cpCommType)} instead.`,
      short: `no two-level split fits: use cp_comm_type ${repr(layout.cpCommType)}`,
      fix: fixOf(`Set model.cp_comm_type to ${repr(value)}`, [editFor(unit, "model.cp_comm_type", value)]),
    };
  }
  return {
    short: `set it to [a2a, p2p] with a2a × p2p = ${cp}`,
    text: `Set hierarchical_context_parallel_sizes = [a2a, p2p] with a2a × p2p = ${cp} (tensor_model_parallel_size is not known here, so the a2a level cannot be placed within a node).`,
    fix: undefined,
  };
}
