// HCP005: hierarchical sizes given, but no layer uses a2a+p2p, so attention ignores them.
import type { Fix, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, hcpSizes, positiveIntSizes, product, usesA2aP2p, type CommTypes } from "./effective.ts";
import { defineRule, describe, editFor, fixOf, relatedTo, reportAt } from "./report.ts";
import { oneLine, valueOfSetting } from "./short-message.ts";

export const rule = defineRule({
  id: "HCP005",
  name: "sizes-without-a2a-p2p",
  severity: "warning",
  summary: "hierarchical sizes set but cp_comm_type has no 'a2a+p2p' (the sizes do nothing)",
  doc: {
    checks: "hierarchical_context_parallel_sizes is set but no cp_comm_type entry is 'a2a+p2p' (including cp_comm_type unset/None, 'p2p' or 'a2a').",
    why:
      "Only the a2a+p2p attention path reads the hierarchical groups. With any other type Megatron-Core still builds the " +
      "extra HIERARCHICAL_CONTEXT_PARALLEL_GROUP NCCL groups, but attention runs flat CP: the author most likely believes HCP is on when it is not.",
    example: "cfg.model.context_parallel_size = 4\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]",
    fix: 'Set cfg.model.cp_comm_type = "a2a+p2p" if hierarchical CP was meant, or remove the sizes.',
  },
  check(unit: ConfigUnit): RuleReport[] {
    const sizes = hcpSizes(unit);
    if (sizes.state !== "list" && sizes.state !== "malformed") return [];
    const types = commTypes(unit);
    if (usesA2aP2p(types) !== "no") return [];
    const { text, short, fix } = remedy(unit, types);
    const typeValue = types.state !== "unknown" && types.setting ? `cp_comm_type is ${valueOfSetting(types.setting)}` : "cp_comm_type is not set";
    const summary = oneLine(
      `hierarchical_context_parallel_sizes ${valueOfSetting(sizes.setting)} does nothing: ${typeValue}, not 'a2a+p2p'; ${short}`,
      `hierarchical sizes ${valueOfSetting(sizes.setting)} do nothing: no layer uses 'a2a+p2p'; ${short}`,
      `hierarchical sizes do nothing: no layer uses 'a2a+p2p'; ${short}`,
    );
    const message =
      `${describe(sizes.setting)} but ${typesText(types)}, so no layer uses 'a2a+p2p'. Attention ignores the sizes: ` +
      `Megatron-Core only builds extra hierarchical NCCL groups and context parallelism runs ${runsAs(types)}. ${text}`;
    return [reportAt(unit, sizes.setting, message, { summary, fix, related: relatedTo(types.state === "unknown" ? undefined : types.setting, "communication type") })];
  },
});

function typesText(types: CommTypes): string {
  if (types.state === "types" || types.state === "malformed") return describe(types.setting);
  if (types.state === "none" && types.setting) return describe(types.setting);
  if (types.state === "none") return "model.cp_comm_type is not set (None)";
  // Unknown stays unknown: the recipe or the model's bridge may set a type (never a2a+p2p upstream).
  return types.setting ? describe(types.setting) : `model.cp_comm_type is not set here (${types.reason}; no upstream recipe, provider or bridge sets 'a2a+p2p')`;
}

function runsAs(types: CommTypes): string {
  if (types.state === "types") return types.perLayer ? "with the per-layer types given" : `as plain '${types.types[0] ?? "p2p"}'`;
  if (types.state === "none") return "as plain p2p (Transformer Engine's default)";
  return "flat, with whatever type the recipe or the model's bridge chooses";
}

function remedy(unit: ConfigUnit, types: CommTypes): { text: string; short: string; fix: Fix | undefined } {
  const sizes = hcpSizes(unit);
  const ints = positiveIntSizes(sizes);
  const cp = contextParallel(unit);
  const sizesFitCp = ints !== undefined && ints.length === 2 && cp !== undefined && product(ints) === cp.value && cp.value > 1;
  if (types.state !== "types" && sizesFitCp) {
    // No type chosen and valid two-level sizes for this CP: the sizes state the intent.
    return {
      text: "If hierarchical CP was meant, set cp_comm_type = 'a2a+p2p'; otherwise remove the sizes.",
      short: "set cp_comm_type to 'a2a+p2p', or remove them",
      fix: fixOf("Set model.cp_comm_type to 'a2a+p2p'", [editFor(unit, "model.cp_comm_type", "a2a+p2p")]),
    };
  }
  return {
    text: "Remove hierarchical_context_parallel_sizes, or set cp_comm_type = 'a2a+p2p' if hierarchical CP was meant.",
    short: "remove them, or set cp_comm_type to 'a2a+p2p'",
    fix: fixOf("Unset model.hierarchical_context_parallel_sizes", [editFor(unit, "model.hierarchical_context_parallel_sizes", null)]),
  };
}
