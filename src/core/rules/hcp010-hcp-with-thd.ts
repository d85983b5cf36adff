// HCP010: a2a+p2p with packed sequences (THD layout) needs Transformer Engine >= 2.19.
import type { ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Setting } from "../model/settings.ts";
import { commTypes, isEnabled, teOlderThan, usesA2aP2p } from "./effective.ts";
import { defineRule, describe, relatedAll, relatedTo, reportAt, teDescription, teRelated } from "./report.ts";
import { teShort } from "./short-message.ts";
import { UPSTREAM, quote } from "./upstream.ts";

const THD_FIXED_IN = "2.19";

export const rule = defineRule({
  id: "HCP010",
  name: "hcp-with-thd",
  severity: "error",
  summary: "hierarchical CP with the thd (packed) format (not supported)",
  doc: {
    checks:
      "cp_comm_type 'a2a+p2p' with packed sequences (dataset.packed_sequence, enable_offline_packing, enable_in_batch_packing, " +
      "packed_sequence_specs) or qkv_format 'thd', when the pinned Transformer Engine is older than 2.19; info when the TE pin is " +
      "unknown. Packing is judged on the settings (including those Bridge's _sft_common/_peft_common write, when they are " +
      "among the analyzed files), never on a recipe's name.",
    why: `Transformer Engine 1.12 … 2.18 rejects THD with hierarchical CP at the first forward: ${quote(UPSTREAM.T2)} (TE #2208); Transformer Engine commit 8ff60f8 (PR #3290) allows it, first in release_v2.19 (not in v2.18).`,
    example: 'cfg.model.cp_comm_type = "a2a+p2p"\ncfg.dataset.packed_sequence = True  # with transformer-engine 2.15 pinned',
    fix: "Use cp_comm_type 'a2a' or 'p2p' for packed data, or move to Transformer Engine >= 2.19.",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const types = commTypes(unit);
    if (types.state !== "types" || usesA2aP2p(types) !== "yes") return [];
    const te = teOlderThan(project, THD_FIXED_IN);
    if (te === "no") return [];
    const packing = packingEvidence(unit);
    if (!packing) return [];

    const teText = teDescription(project);
    const trigger = `${describe(packing)}, so sequences are packed (THD layout)`;
    const severity = te === "yes" ? "error" : "info";
    const message =
      `${describe(types.setting)} and ${trigger}. ${teText} ${te === "yes" ? "rejects" : "rejects, up to 2.18,"} THD with ` +
      `hierarchical CP at the first forward: ${quote(UPSTREAM.T2)} Use cp_comm_type 'a2a' or 'p2p' for packed data, or ` +
      `Transformer Engine >= ${THD_FIXED_IN}.`;
    const summary =
      `${packing.key} (THD) fails with a2a+p2p on ${te === "yes" ? teShort(project.transformerEngine) : "Transformer Engine up to 2.18"}; ` +
      `use 'a2a' or 'p2p', or TE >= ${THD_FIXED_IN}`;
    return [reportAt(unit, packing, message, { summary, severity, related: relatedAll(relatedTo(types.setting, "a2a+p2p communication"), teRelated(project)) })];
  },
});

/** The first setting that proves packed/THD input. */
function packingEvidence(unit: ConfigUnit): Setting | undefined {
  const flags = ["dataset.packed_sequence", "dataset.enable_offline_packing", "dataset.enable_in_batch_packing"] as const;
  for (const key of flags) {
    const s = unit.settings[key];
    if (s?.value.known && isEnabled(s.value.value)) return s;
  }
  const qkv = unit.settings["model.qkv_format"];
  if (qkv?.value.known && qkv.value.value === "thd") return qkv;
  const specs = unit.settings["dataset.packed_sequence_specs"];
  if (specs?.value.known && typeof specs.value.value === "object" && specs.value.value && !Array.isArray(specs.value.value)) {
    const size = specs.value.value["packed_sequence_size"];
    if (typeof size === "number" && size > 0) return specs;
  }
  return undefined;
}
