// HCP003: a2a+p2p needs exactly two hierarchical sizes, [a2a_size, p2p_size].
import type { ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, hcpSizes, usesA2aP2p } from "./effective.ts";
import { setSizesFix, splitFor, splitText } from "./layout-fix.ts";
import { at, defineRule, describe, relatedTo, repr, reportAt, teQuote } from "./report.ts";
import { oneLine } from "./short-message.ts";
import { UPSTREAM, quote, type TeText } from "./upstream.ts";

/** The assertion, by Transformer Engine release (the wording changed in 2.8). */
const TWO_GROUPS: readonly TeText[] = [
  { since: "1.12", until: "2.8", text: UPSTREAM.T1_BEFORE_2_8 },
  { since: "2.8", text: UPSTREAM.T1 },
];

export const rule = defineRule({
  id: "HCP003",
  name: "sizes-not-two-levels",
  severity: "error",
  summary: "hierarchical_context_parallel_sizes is not two levels [a2a, p2p]",
  doc: {
    checks: "cp_comm_type contains 'a2a+p2p' and hierarchical_context_parallel_sizes does not have exactly two entries.",
    why:
      "Megatron-Core builds one group per entry, but Transformer Engine's a2a+p2p takes exactly an a2a group and a p2p group " +
      `and fails at the first attention forward. Transformer Engine 2.8 and later: ${quote(UPSTREAM.T1)} ` +
      `Transformer Engine 1.12 … 2.7: ${quote(UPSTREAM.T1_BEFORE_2_8)}`,
    example: 'cfg.model.context_parallel_size = 8\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2, 2]',
    fix: "Use exactly [a2a_size, p2p_size] with a2a_size × p2p_size == context_parallel_size keeping the a2a level inside one node (CP=8, TP=1 → [4, 2]).",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const types = commTypes(unit);
    const sizes = hcpSizes(unit);
    if (types.state !== "types" || usesA2aP2p(types) !== "yes" || sizes.state !== "list") return [];
    if (sizes.values.length === 2) return [];
    const cp = contextParallel(unit);
    const split = cp && cp.value > 1 ? splitFor(unit, project, cp.value) : undefined;
    const advice = split
      ? `Set hierarchical_context_parallel_sizes = ${splitText(split.sizes, unit, project)}.`
      : "Use exactly two entries, [a2a_size, p2p_size], whose product is context_parallel_size.";
    const message =
      `${describe(sizes.setting)}: ${sizes.values.length} level(s), but cp_comm_type 'a2a+p2p' (${at(types.setting.origin.location)}) ` +
      `needs exactly two, [a2a_size, p2p_size]. Transformer Engine fails at the first attention forward: ${teQuote(project, TWO_GROUPS)} ${advice}`;
    const short = split ? `set it to ${repr([...split.sizes])}` : "use two, [a2a, p2p], whose product is context_parallel_size";
    const levels = `${sizes.values.length} level${sizes.values.length === 1 ? "" : "s"}`;
    const summary = oneLine(
      `hierarchical_context_parallel_sizes ${repr(sizes.values)} has ${levels}, but 'a2a+p2p' needs two; ${short}`,
      `hierarchical_context_parallel_sizes has ${levels}, but 'a2a+p2p' needs two; ${short}`,
    );
    return [
      reportAt(unit, sizes.setting, message, {
        summary,
        fix: split ? setSizesFix(unit, project, split.sizes) : undefined,
        related: [...relatedTo(types.setting, "a2a+p2p communication"), ...relatedTo(cp?.setting, "context parallel size")],
      }),
    ];
  },
});
