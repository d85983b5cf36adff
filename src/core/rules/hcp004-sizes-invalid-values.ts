// HCP004: hierarchical sizes must be positive integers; a 1 in a slot makes a2a+p2p degenerate.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Known } from "../model/settings.ts";
import { commTypes, hcpSizes, isInt, replaceA2aP2p, usesA2aP2p, type CommTypes, type HcpSizes } from "./effective.ts";
import { isInexact } from "./hcp024-inexact-number.ts";
import { defineRule, describe, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { oneLine, valueOfSetting } from "./short-message.ts";

export const rule = defineRule({
  id: "HCP004",
  name: "sizes-invalid-values",
  severity: "error",
  summary: "hierarchical_context_parallel_sizes is not positive integers, or a level is 1",
  doc: {
    checks:
      "hierarchical_context_parallel_sizes is not a list of positive integers (error), or, with a2a+p2p, one of its two slots is 1 (warning).",
    why:
      "Megatron-Core carves the CP ranks into groups with integer arithmetic (parallel_state.create_hierarchical_groups); " +
      "a float, string or size < 1 breaks the product check or group creation. A size of 1 is legal but Transformer " +
      "Engine then silently runs one level only: [1, N] is plain p2p and [N, 1] is plain a2a, with extra NCCL groups for nothing.",
    example: 'cfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [4, 1]',
    fix: "Use positive integers. For [1, N] set cp_comm_type = \"p2p\", for [N, 1] cp_comm_type = \"a2a\", and drop the sizes.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const sizes = hcpSizes(unit);
    if (sizes.state === "malformed") {
      const message =
        `${describe(sizes.setting)}, which is not a list. Megatron-Core expects a list of positive integers, one per ` +
        "level, e.g. [2, 2] for cp_comm_type 'a2a+p2p' with context_parallel_size 4.";
      const summary = oneLine(
        `hierarchical_context_parallel_sizes is ${valueOfSetting(sizes.setting)}, not a list; use positive integers, e.g. [2, 2]`,
        "hierarchical_context_parallel_sizes is not a list; use positive integers, e.g. [2, 2]",
      );
      return [reportAt(unit, sizes.setting, message, { summary })];
    }
    if (sizes.state !== "list") return [];
    // An integer past 2^53 is HCP024's finding; this rule cannot tell what it was meant to be.
    const bad = sizes.values.filter((v) => !(isInt(v) && v >= 1) && !(typeof v === "number" && isInexact(v)));
    if (bad.length > 0) return [invalidEntries(unit, sizes, bad)];
    if (!sizes.values.every(isInt)) return [];
    return degenerateSlot(unit, sizes, commTypes(unit));
  },
});

function invalidEntries(unit: ConfigUnit, sizes: Extract<HcpSizes, { state: "list" }>, bad: Known[]): RuleReport {
  const message =
    `${describe(sizes.setting)}: ${bad.map(repr).join(", ")} ${bad.length === 1 ? "is not a positive integer" : "are not positive integers"}. ` +
    "Megatron-Core builds the hierarchical CP groups with integer rank arithmetic, so group creation or the product check " +
    "fails. Use positive integers whose product is context_parallel_size.";
  const what = `${bad.map(repr).join(", ")} ${bad.length === 1 ? "is not a positive integer" : "are not positive integers"}`;
  const summary = oneLine(
    `hierarchical_context_parallel_sizes ${repr(sizes.values)}: ${what}; use positive integers whose product is CP`,
    `hierarchical_context_parallel_sizes: ${what}; use positive integers whose product is CP`,
    "hierarchical_context_parallel_sizes has entries that are not positive integers; use positive integers",
  );
  return reportAt(unit, sizes.setting, message, { summary });
}

function degenerateSlot(unit: ConfigUnit, sizes: Extract<HcpSizes, { state: "list" }>, types: CommTypes): RuleReport[] {
  if (types.state !== "types" || usesA2aP2p(types) !== "yes" || sizes.values.length !== 2) return [];
  const [a2a, p2p] = sizes.values as [number, number];
  if (a2a !== 1 && p2p !== 1) return [];
  const becomes = a2a === 1 ? "p2p" : "a2a";
  const value = replaceA2aP2p(types, becomes);
  const message =
    `${describe(sizes.setting)} with cp_comm_type 'a2a+p2p': the ${a2a === 1 ? "a2a" : "p2p"} level has size 1, so ` +
    `Transformer Engine silently runs plain ${becomes} while Megatron-Core still builds the extra hierarchical NCCL groups. ` +
    `Set cp_comm_type = ${repr(becomes)} and remove hierarchical_context_parallel_sizes.`;
  const fix = fixOf(`Set model.cp_comm_type to ${repr(value)} and unset model.hierarchical_context_parallel_sizes`, [
    editFor(unit, "model.cp_comm_type", value),
    editFor(unit, "model.hierarchical_context_parallel_sizes", null),
  ]);
  return [
    reportAt(unit, sizes.setting, message, {
      summary: `hierarchical_context_parallel_sizes ${repr(sizes.values)} has ${a2a === 1 ? "an a2a" : "a p2p"} level of 1, so it runs plain ${becomes}; set cp_comm_type to ${repr(becomes)}`,
      severity: "warning",
      fix, related: relatedTo(types.setting, "a2a+p2p communication") }),
  ];
}

