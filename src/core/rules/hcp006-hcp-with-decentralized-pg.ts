// HCP006: hierarchical CP on Bridge's decentralized process groups.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { hcpContext, hcpTrigger, knownBool, resolve, settingOf } from "./effective.ts";
import { defineRule, describe, editFor, fixOf, relatedTo, reportAt } from "./report.ts";
import { BRIDGE_PR_2665, UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP006",
  name: "hcp-with-decentralized-pg",
  severity: "error",
  summary: "hierarchical CP together with dist.use_decentralized_pg = True",
  doc: {
    checks: "cp_comm_type 'a2a+p2p' or hierarchical_context_parallel_sizes together with dist.use_decentralized_pg = True.",
    why:
      "Bridge builds hierarchical CP groups only on the MPU path; Transformer Engine looks them up in MPU globals. " +
      "With decentralized process groups and Gloo groups on, Bridge's config validation fails first " +
      "(megatron/bridge/training/config.py:1551-1555 at 067f987): \"Gloo process groups are not supported when " +
      "use_decentralized_pg=True.\" With Gloo off, Bridge raises at init " +
      `(training/initialize.py:412): ${quote(UPSTREAM.B11)} Before ${BRIDGE_PR_2665} no error was raised and the ` +
      "hierarchical CP groups were never built.",
    example: 'cfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\ncfg.dist.use_decentralized_pg = True',
    fix: "Set cfg.dist.use_decentralized_pg = False, or use cp_comm_type 'a2a' or 'p2p' without hierarchical sizes.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    if (hcpContext(unit) !== "yes" || knownBool(unit, "dist.use_decentralized_pg") !== true) return [];
    const dpg = settingOf(resolve(unit, "dist.use_decentralized_pg"));
    if (!dpg) return [];
    const trigger = hcpTrigger(unit);
    const message =
      `${describe(dpg)} while the unit uses hierarchical CP${trigger ? ` (${describe(trigger)})` : ""}. Decentralized process ` +
      `groups cannot build hierarchical CP groups: Megatron-Bridge raises at init ${quote(UPSTREAM.B11)}; stacks without ` +
      `${BRIDGE_PR_2665} raise nothing and never build the hierarchical CP groups. Set dist.use_decentralized_pg = False (the MPU path supports ` +
      "'a2a+p2p'), or use cp_comm_type 'a2a' or 'p2p' without hierarchical sizes.";
    const fix = fixOf("Set dist.use_decentralized_pg to False", [editFor(unit, "dist.use_decentralized_pg", false)]);
    const summary = "dist.use_decentralized_pg = True cannot build hierarchical CP groups; set it to False, or drop hierarchical CP";
    return [reportAt(unit, dpg, message, { summary, fix, related: relatedTo(trigger, "hierarchical CP is requested here") })];
  },
});
