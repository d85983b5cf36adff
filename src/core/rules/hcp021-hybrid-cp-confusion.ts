// HCP021: MCore's hybrid/dynamic context parallel (packed-sequence load balancing) mistaken for hierarchical CP.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Setting, SettingKey } from "../model/settings.ts";
import { hcpContext, hcpTrigger, isEnabled } from "./effective.ts";
import { defineRule, describe, relatedTo, reportAt } from "./report.ts";
import { bare } from "./short-message.ts";
import { UPSTREAM, quote } from "./upstream.ts";

const FLAGS: readonly SettingKey[] = ["model.hybrid_context_parallel", "model.dynamic_context_parallel", "model.max_seqlen_per_dp_cp_rank"];

/** Names or notes that say "hierarchical CP"; "hybrid" alone is the other feature's name, so it does not count. */
const HCP_INTENT = /hierarchical|(?<![a-z0-9])hcp(?![a-z])|a2a\+p2p|a2a_p2p/i;

export const rule = defineRule({
  id: "HCP021",
  name: "hybrid-cp-confusion",
  severity: "warning",
  summary: "hybrid/dynamic CP settings in a unit that uses hierarchical CP",
  doc: {
    checks:
      "model.hybrid_context_parallel, model.dynamic_context_parallel or model.max_seqlen_per_dp_cp_rank enabled in a unit " +
      "that uses hierarchical CP (a2a+p2p or hierarchical sizes) or whose name/notes say hierarchical CP was meant.",
    why:
      "These flags are Megatron-Core's load balancer for packed variable-length sequences (renamed dynamic_context_parallel " +
      "on MCore dev), not hierarchical CP. They bring their own constraints " +
      `(${quote(UPSTREAM.M13_PP)}, calculate_per_token_loss required) and do not build hierarchical groups.`,
    example: 'cfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\ncfg.model.hybrid_context_parallel = True',
    fix: "Remove the flag unless you mean to balance packed sequences; hierarchical CP is cp_comm_type = \"a2a+p2p\" plus hierarchical_context_parallel_sizes.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const inHcp = hcpContext(unit) === "yes";
    if (!inHcp && !namesHcp(unit)) return [];
    const trigger = hcpTrigger(unit);
    return enabledFlags(unit).map((flag) => {
      const context = inHcp && trigger ? `in a unit that uses hierarchical CP (${describe(trigger)})` : `in a unit named or noted as hierarchical CP (${unit.name})`;
      const message =
        `${describe(flag)} ${context}. ${flag.key} belongs to Megatron-Core's hybrid/dynamic context parallelism, a load ` +
        "balancer for packed variable-length sequences with its own constraints (no pipeline parallelism, " +
        "calculate_per_token_loss required); it does not enable hierarchical CP. Hierarchical CP is cp_comm_type = " +
        "'a2a+p2p' plus hierarchical_context_parallel_sizes; remove the flag unless you mean to balance packed sequences.";
      const summary = `${bare(flag.key)} is hybrid/dynamic CP, not hierarchical CP; remove it unless you balance packed sequences`;
      return reportAt(unit, flag, message, { summary, related: relatedTo(trigger, "hierarchical CP is requested here") });
    });
  },
});

function enabledFlags(unit: ConfigUnit): Setting[] {
  return FLAGS.map((key) => unit.settings[key]).filter(
    (s): s is Setting => s !== undefined && s.value.known && isEnabled(s.value.value),
  );
}

function namesHcp(unit: ConfigUnit): boolean {
  return HCP_INTENT.test(unit.name) || HCP_INTENT.test(unit.id) || unit.notes.some((n) => HCP_INTENT.test(n.message));
}
