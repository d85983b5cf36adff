// HCP023: eval-time CP rebinding cannot coexist with hierarchical CP.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { hcpContext, hcpTrigger, resolve, settingOf, valueOf } from "./effective.ts";
import { defineRule, describe, editFor, fixOf, relatedTo, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP023",
  name: "eval-cp-with-hcp",
  severity: "error",
  doc: {
    checks: "dist.eval_context_parallel_size is set in a unit that uses hierarchical CP (a2a+p2p or hierarchical sizes).",
    why:
      "Eval-time CP rebinding requires dist.use_decentralized_pg = True (DistributedInitConfig docstring), and decentralized " +
      `process groups reject hierarchical CP: ${quote(UPSTREAM.B11)}`,
    example: 'cfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\ncfg.dist.eval_context_parallel_size = 2',
    fix: "Remove dist.eval_context_parallel_size (evaluate with the training layout), or drop hierarchical CP.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    if (hcpContext(unit) !== "yes") return [];
    const res = resolve(unit, "dist.eval_context_parallel_size");
    const setting = settingOf(res);
    const value = valueOf(res);
    if (!setting || value === undefined || value === null) return [];
    const trigger = hcpTrigger(unit);
    const message =
      `${describe(setting)} while the unit uses hierarchical CP${trigger ? ` (${describe(trigger)})` : ""}. Eval-time CP ` +
      "rebinding requires dist.use_decentralized_pg = True, and decentralized process groups reject hierarchical CP: " +
      `${quote(UPSTREAM.B11)} Remove dist.eval_context_parallel_size, or drop hierarchical CP.`;
    const fix = fixOf("Unset dist.eval_context_parallel_size", [editFor(unit, "dist.eval_context_parallel_size", null)]);
    return [reportAt(unit, setting, message, { fix, related: relatedTo(trigger, "hierarchical CP is requested here") })];
  },
});
