// HCP014: a2a+p2p needs Transformer Engine >= 1.12.
import type { ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, teOlderThan, usesA2aP2p } from "./effective.ts";
import { defineRule, describe, reportAt, teDescription, teRelated } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP014",
  name: "a2a-p2p-te-too-old",
  severity: "error",
  summary: "a2a+p2p with a pinned Transformer Engine older than 1.12",
  doc: {
    checks: "cp_comm_type 'a2a+p2p' while the pinned Transformer Engine (uv.lock, pyproject, submodule, base image) is older than 1.12.",
    why:
      "a2a+p2p first shipped in Transformer Engine 1.12 (PR #1209). With Transformer Engine 1.10 or 1.11 Megatron-Core asserts while " +
      `building attention: ${quote(UPSTREAM.M8("1.11.0"))} Before 1.10 Megatron-Core passes no cp_comm_type to Transformer Engine at ` +
      "all (TEDotProductAttention checks is_te_min_version('1.10.0'), MCore pin 2a75ac1): nothing asserts and attention runs TE's " +
      "default p2p ring, not hierarchical CP.",
    example: 'cfg.model.cp_comm_type = "a2a+p2p"  # with transformer-engine 1.11 pinned',
    fix: "Upgrade Transformer Engine to >= 1.12.0, or use cp_comm_type 'p2p' or 'a2a'.",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const types = commTypes(unit);
    const te = project.transformerEngine;
    if (types.state !== "types" || usesA2aP2p(types) !== "yes" || !te || teOlderThan(project, "1.12") !== "yes") return [];
    const consequence =
      teOlderThan(project, "1.10") === "yes"
        ? "Megatron-Core passes cp_comm_type to Transformer Engine only from 1.10, so nothing asserts: attention silently runs TE's default p2p ring, not hierarchical CP."
        : `Megatron-Core asserts while building attention: ${quote(UPSTREAM.M8(te.version))}`;
    const message =
      `${describe(types.setting)} but ${teDescription(project)} is older than 1.12.0, the first release with a2a+p2p. ` +
      `${consequence} Upgrade Transformer Engine to >= 1.12.0, or use cp_comm_type 'p2p' or 'a2a'.`;
    const summary = `a2a+p2p needs Transformer Engine >= 1.12.0, and ${te.version} is pinned; upgrade it, or use cp_comm_type 'p2p' or 'a2a'`;
    return [reportAt(unit, types.setting, message, { summary, related: teRelated(project) })];
  },
});
