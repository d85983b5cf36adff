// HCP013: cp_comm_type values Transformer Engine (or DSA attention) does not accept.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Known } from "../model/settings.ts";
import { VALID_CP_COMM_TYPES, commTypes, contextParallel, isDsaModel, type CommTypes } from "./effective.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

const VALID: readonly string[] = VALID_CP_COMM_TYPES;
const VALID_TEXT = "'p2p', 'all_gather', 'a2a' and 'a2a+p2p'";

export const rule = defineRule({
  id: "HCP013",
  name: "invalid-cp-comm-type",
  severity: "error",
  doc: {
    checks:
      "Every cp_comm_type entry is one of 'p2p', 'all_gather', 'a2a', 'a2a+p2p'. 'allgather' (no underscore) is valid only " +
      "for DeepSeek Sparse Attention models (GLM-5, DeepSeek-V3.2), which in turn require it when context_parallel_size > 1.",
    why:
      `Transformer Engine raises at the first attention forward with CP: ${quote(UPSTREAM.T12("allgather"))} DSA attention ` +
      `asserts ${quote(UPSTREAM.M3)} A value that is neither str nor list of str fails Bridge: ${quote(UPSTREAM.B5("<class 'int'>"))}`,
    example: 'cfg.model.context_parallel_size = 2\ncfg.model.cp_comm_type = "allgather"',
    fix: "Use a valid Transformer Engine value (note 'all_gather' with an underscore); on DSA models use 'allgather'.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const types = commTypes(unit);
    const cp = contextParallel(unit);
    // Invalid values crash only once CP > 1; at a known CP of 1 they are a trap for the next `-cp N`.
    const severity = cp?.value === 1 ? "warning" : "error";
    const latent = cp?.value === 1 ? " This fails as soon as context_parallel_size > 1 (e.g. -cp on the command line)." : "";
    if (types.state === "malformed") {
      const message =
        `${describe(types.setting)}, which is neither a str nor a list of str. Megatron-Bridge rejects this: ` +
        `${quote(UPSTREAM.B5(pythonType(types.raw)))}.${latent} Use one of ${VALID_TEXT}.`;
      return [reportAt(unit, types.setting, message, { severity })];
    }
    if (types.state !== "types") return [];
    return isDsaModel(unit) ? checkDsa(unit, types) : checkTe(unit, types, severity, latent);
  },
});

function pythonType(value: Known): string {
  if (typeof value === "number") return Number.isInteger(value) ? "<class 'int'>" : "<class 'float'>";
  if (typeof value === "boolean") return "<class 'bool'>";
  if (Array.isArray(value)) return "<class 'list'>";
  return "<class 'dict'>";
}

/** 'allgather' -> 'all_gather', 'P2P' -> 'p2p'; undefined when no valid value is meant unambiguously. */
function correction(type: string): string | undefined {
  if (type === "allgather") return "all_gather";
  const lower = type.toLowerCase().replace(/\s+/g, "");
  if (VALID.includes(lower)) return lower;
  return lower === "allgather" ? "all_gather" : undefined;
}

function corrected(types: Extract<CommTypes, { state: "types" }>, map: (t: string) => string): Known {
  return types.perLayer ? types.types.map(map) : map(types.types[0] ?? "");
}

function checkTe(unit: ConfigUnit, types: Extract<CommTypes, { state: "types" }>, severity: "error" | "warning", latent: string): RuleReport[] {
  const invalid = [...new Set(types.types.filter((t) => !VALID.includes(t)))];
  if (invalid.length === 0) return [];
  const fixable = invalid.every((t) => correction(t) !== undefined);
  const value = corrected(types, (t) => (VALID.includes(t) ? t : (correction(t) ?? t)));
  const dsaNote = invalid.includes("allgather")
    ? " ('allgather' without underscore is valid only for DeepSeek Sparse Attention models such as GLM-5.)"
    : "";
  const advice = fixable ? `Set cp_comm_type = ${repr(value)}.` : `Use one of ${VALID_TEXT}.`;
  const message =
    `${describe(types.setting)}: ${invalid.map(repr).join(", ")} ${invalid.length === 1 ? "is" : "are"} not a Transformer ` +
    `Engine communication type (${VALID_TEXT}); attention with CP raises ${quote(UPSTREAM.T12(invalid[0] ?? ""))}${dsaNote}` +
    `${latent} ${advice}`;
  const fix = fixable ? fixOf(`Set model.cp_comm_type to ${repr(value)}`, [editFor(unit, "model.cp_comm_type", value)]) : undefined;
  return [reportAt(unit, types.setting, message, { severity, fix })];
}

/** MCore normalises by removing "_", so 'all_gather' passes too (M3). */
function checkDsa(unit: ConfigUnit, types: Extract<CommTypes, { state: "types" }>): RuleReport[] {
  const cp = contextParallel(unit);
  if (!cp || cp.value <= 1) return [];
  const wrong = types.types.filter((t) => t.replace(/_/g, "") !== "allgather");
  if (wrong.length === 0) return [];
  const message =
    `${describe(types.setting)} on a DeepSeek Sparse Attention model (${unit.name}) with ` +
    `${describeResolution("model.context_parallel_size", cp.res)}. Megatron-Core asserts ${quote(UPSTREAM.M3)} ` +
    "Set cp_comm_type = 'allgather'.";
  const fix = fixOf("Set model.cp_comm_type to 'allgather'", [editFor(unit, "model.cp_comm_type", "allgather")]);
  return [reportAt(unit, types.setting, message, { fix, related: relatedTo(cp.setting, "context parallel size") })];
}
