// HCP020: a2a+p2p pre-armed in a unit whose context_parallel_size is 1.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, hcpSizes, replaceA2aP2p, usesA2aP2p } from "./effective.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { oneLine } from "./short-message.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP020",
  name: "a2a-p2p-with-cp1",
  severity: "error",
  summary: "a2a+p2p at context_parallel_size 1 without hierarchical sizes",
  doc: {
    checks: "cp_comm_type contains 'a2a+p2p' in a unit whose context_parallel_size is 1 (set or by default) and hierarchical sizes are unset.",
    why:
      `Megatron-Bridge validates a2a+p2p regardless of the CP size, so a recipe that pre-arms the type for a later \`-cp N\` ` +
      `fails as it stands: ${quote(UPSTREAM.B6)}`,
    example: 'cfg.model.context_parallel_size = 1\ncfg.model.cp_comm_type = "a2a+p2p"',
    fix: "Leave cp_comm_type unset at CP 1, or set context_parallel_size, cp_comm_type and hierarchical_context_parallel_sizes together.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const types = commTypes(unit);
    const cp = contextParallel(unit);
    if (types.state !== "types" || usesA2aP2p(types) !== "yes" || cp?.value !== 1) return [];
    if (hcpSizes(unit).state !== "none") return []; // sizes given: HCP002/HCP004 judge them

    // Unsetting keeps Transformer Engine's default (p2p); a per-layer list keeps its length.
    const value = replaceA2aP2p(types, types.perLayer ? "p2p" : null);
    const rejects =
      unit.kind === "mlm-launch"
        ? `Megatron-LM's argument check tests a2a+p2p regardless of the CP size and rejects this: ${quote(UPSTREAM.M11)}.`
        : `Megatron-Bridge validates a2a+p2p regardless of the CP size and rejects this: ${quote(UPSTREAM.B6)}`;
    const message =
      `${describe(types.setting)} but ${describeResolution("model.context_parallel_size", cp.res)}. ${rejects} Remove the pre-armed ` +
      "cp_comm_type (Transformer Engine then uses p2p), or set context_parallel_size, cp_comm_type and " +
      "hierarchical_context_parallel_sizes together.";
    const fix = fixOf(value === null ? "Unset model.cp_comm_type" : `Set model.cp_comm_type to ${repr(value)}`, [
      editFor(unit, "model.cp_comm_type", value),
    ]);
    const cpText = cp.setting ? "context_parallel_size 1" : "context_parallel_size 1 (not set)";
    const short = value === null ? "unset cp_comm_type" : `set cp_comm_type to ${repr(value)}`;
    const summary = oneLine(
      `cp_comm_type has 'a2a+p2p' at ${cpText} and no hierarchical sizes; ${short}, or set CP and sizes`,
      `cp_comm_type has 'a2a+p2p' at ${cpText}; ${short}, or set CP and sizes`,
    );
    return [reportAt(unit, types.setting, message, { summary, fix, related: relatedTo(cp.setting, "context parallel size") })];
  },
});
