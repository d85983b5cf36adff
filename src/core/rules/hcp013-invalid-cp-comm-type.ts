// HCP013: cp_comm_type values Transformer Engine (or DSA attention) does not accept.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Known } from "../model/settings.ts";
import { VALID_CP_COMM_TYPES, commTypes, contextParallel, dsaAttention, namedLikeDsa, settingOf, resolve, type CommTypes } from "./effective.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedAll, relatedTo, repr, reportAt } from "./report.ts";
import { oneLine, typesText, valueOfSetting } from "./short-message.ts";
import { UPSTREAM, quote } from "./upstream.ts";

const VALID: readonly string[] = VALID_CP_COMM_TYPES;
const VALID_TEXT = "'p2p', 'all_gather', 'a2a' and 'a2a+p2p'";

export const rule = defineRule({
  id: "HCP013",
  name: "invalid-cp-comm-type",
  severity: "error",
  summary: "a cp_comm_type entry upstream does not accept",
  doc: {
    checks:
      "Every cp_comm_type entry is one of 'p2p', 'all_gather', 'a2a', 'a2a+p2p'; on DeepSeek Sparse Attention " +
      "(model.experimental_attention_variant == 'dsa') with context_parallel_size > 1 every entry must be 'allgather' " +
      "(Megatron-Core compares after removing '_' and lower-casing, so 'all_gather' passes and an unset type fails). " +
      "'allgather' outside DSA is an error when the variant is known, an info when it is not (a model name may add a hint, never decide).",
    why:
      `Transformer Engine raises at the first attention forward with CP: ${quote(UPSTREAM.T12("allgather"))} Megatron-Core's ` +
      `TransformerConfig asserts for DSA (MCore pin 2a75ac1 and HEAD): ${quote(UPSTREAM.M3)} A value that is neither a str nor a ` +
      `list fails Bridge with ${quote(UPSTREAM.B5("<class 'int'>"))} (Megatron-Core: ${quote(UPSTREAM.M2)}); a list is only checked for its length there.`,
    example: 'cfg.model.context_parallel_size = 2\ncfg.model.cp_comm_type = "allgather"',
    fix: "Use a valid Transformer Engine value (note 'all_gather' with an underscore); on DSA models use 'allgather'.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const types = commTypes(unit);
    const cp = contextParallel(unit);
    // Invalid values crash only once CP > 1; at a known CP of 1 they are a trap for the next `-cp N`.
    const severity = cp?.value === 1 ? "warning" : "error";
    const latent = cp?.value === 1 ? " This fails as soon as context_parallel_size > 1 (e.g. -cp on the command line)." : "";
    if (types.state === "malformed") return [malformed(unit, types, severity, latent)];
    const dsa = dsaAttention(unit);
    if (dsa === "yes") return checkDsa(unit, types);
    if (types.state !== "types") return [];
    return checkTe(unit, types, severity, latent, dsa);
  },
});

function malformed(unit: ConfigUnit, types: Extract<CommTypes, { state: "malformed" }>, severity: "error" | "warning", latent: string): RuleReport {
  // Bridge prints B5 only for a value that is not a list (a list is checked for its length only).
  const rejects = Array.isArray(types.raw)
    ? "Megatron-Bridge checks a list only for its length and then fails testing 'a2a+p2p' in each entry (a TypeError); " +
      `Transformer Engine raises ${quote(UPSTREAM.T12(String(types.raw.find((t) => typeof t !== "string"))))}`
    : unit.kind === "mlm-launch"
      ? `Megatron-Core asserts ${quote(UPSTREAM.M2)}`
      : `Megatron-Bridge rejects this: ${quote(UPSTREAM.B5(pythonType(types.raw)))}`;
  const message = `${describe(types.setting)}, which is neither a str nor a list of str. ${rejects}.${latent} Use one of ${VALID_TEXT}.`;
  const summary = oneLine(
    `cp_comm_type ${valueOfSetting(types.setting)} is neither a str nor a list of str; use 'p2p', 'all_gather', 'a2a' or 'a2a+p2p'${shortLatent(severity)}`,
    `cp_comm_type is neither a str nor a list of str; use 'p2p', 'all_gather', 'a2a' or 'a2a+p2p'${shortLatent(severity)}`,
  );
  return reportAt(unit, types.setting, message, { summary, severity });
}

/** A trap at CP 1 says when it springs. */
function shortLatent(severity: "error" | "warning"): string {
  return severity === "warning" ? " (fails once CP > 1)" : "";
}

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

function checkTe(
  unit: ConfigUnit,
  types: Extract<CommTypes, { state: "types" }>,
  severity: "error" | "warning",
  latent: string,
  dsa: "no" | "unknown",
): RuleReport[] {
  const invalid = [...new Set(types.types.filter((t) => !VALID.includes(t)))];
  if (invalid.length === 0) return [];
  if (dsa === "unknown" && invalid.every((t) => t.replace(/_/g, "").toLowerCase() === "allgather")) return [allgatherUnknownVariant(unit, types)];
  const fixable = invalid.every((t) => correction(t) !== undefined);
  const value = corrected(types, (t) => (VALID.includes(t) ? t : (correction(t) ?? t)));
  const dsaNote = invalid.includes("allgather")
    ? ` ('allgather' without underscore is valid only for DeepSeek Sparse Attention, experimental_attention_variant 'dsa'; here it is ${variantText(unit)}.)`
    : "";
  const advice = fixable ? `Set cp_comm_type = ${repr(value)}.` : `Use one of ${VALID_TEXT}.`;
  const message =
    `${describe(types.setting)}: ${invalid.map(repr).join(", ")} ${invalid.length === 1 ? "is" : "are"} not a Transformer ` +
    `Engine communication type (${VALID_TEXT}); attention with CP raises ${quote(UPSTREAM.T12(invalid[0] ?? ""))}${dsaNote}` +
    `${latent} ${advice}`;
  const fix = fixable ? fixOf(`Set model.cp_comm_type to ${repr(value)}`, [editFor(unit, "model.cp_comm_type", value)]) : undefined;
  const short = fixable ? `set it to ${repr(value)}` : "use 'p2p', 'all_gather', 'a2a' or 'a2a+p2p'";
  const what = `${invalid.map(repr).join(", ")} ${invalid.length === 1 ? "is" : "are"} not a Transformer Engine type`;
  const summary = oneLine(
    `cp_comm_type ${what}${invalid.includes("allgather") ? " (only DSA attention takes 'allgather')" : ""}; ${short}${shortLatent(severity)}`,
    `cp_comm_type ${what}; ${short}${shortLatent(severity)}`,
    `cp_comm_type ${what}; use 'p2p', 'all_gather', 'a2a' or 'a2a+p2p'${shortLatent(severity)}`,
  );
  return [reportAt(unit, types.setting, message, { summary, severity, fix })];
}

function variantText(unit: ConfigUnit): string {
  const res = resolve(unit, "model.experimental_attention_variant");
  const setting = settingOf(res);
  return setting ? describe(setting) : res.state === "default" ? `unset (upstream default ${repr(res.value)})` : "not known";
}

/** 'allgather' while nothing says whether attention is DSA: an info, never an error. */
function allgatherUnknownVariant(unit: ConfigUnit, types: Extract<CommTypes, { state: "types" }>): RuleReport {
  const res = resolve(unit, "model.experimental_attention_variant");
  const why = res.state === "unknown" ? res.reason : "not set";
  const hint = namedLikeDsa(unit) ? ` The name ${unit.name} suggests a DSA family (GLM-5, DeepSeek-V3.2), but only the setting decides.` : "";
  const message =
    `${describe(types.setting)}: 'allgather' is accepted only by DeepSeek Sparse Attention (model.experimental_attention_variant ` +
    `== 'dsa'), which requires it; elsewhere Transformer Engine raises ${quote(UPSTREAM.T12("allgather"))} The variant is not ` +
    `known here (${why}).${hint} ` +
    "If the model is not DSA, use 'all_gather'.";
  const summary = "cp_comm_type 'allgather' is valid only for DeepSeek Sparse Attention, not known here; use 'all_gather' if not DSA";
  return reportAt(unit, types.setting, message, { summary, severity: "info" });
}

/** MCore normalises by removing "_" and lower-casing, so 'all_gather' passes; None (unset) fails (M3). */
function checkDsa(unit: ConfigUnit, types: CommTypes): RuleReport[] {
  const cp = contextParallel(unit);
  if (!cp || cp.value <= 1 || types.state === "unknown" || types.state === "malformed") return [];
  const entries = types.state === "types" ? types.types : [null];
  const wrong = entries.filter((t) => t === null || t.replace(/_/g, "").toLowerCase() !== "allgather");
  if (wrong.length === 0) return [];
  const variant = settingOf(resolve(unit, "model.experimental_attention_variant"));
  const typeText = types.state === "types" ? describe(types.setting) : types.setting ? describe(types.setting) : "model.cp_comm_type is not set (None)";
  const message =
    `${typeText} on DeepSeek Sparse Attention (${variant ? describe(variant) : "experimental_attention_variant 'dsa'"}) with ` +
    `${describeResolution("model.context_parallel_size", cp.res)}. Megatron-Core asserts ${quote(UPSTREAM.M3)} ` +
    "Set cp_comm_type = 'allgather'.";
  const fix = fixOf("Set model.cp_comm_type to 'allgather'", [editFor(unit, "model.cp_comm_type", "allgather")]);
  const at = types.state === "types" ? types.setting : (types.setting ?? variant);
  const now = types.state === "types" ? typesText(types) : "not set";
  const summary = oneLine(
    `DeepSeek Sparse Attention with CP ${cp.value} needs cp_comm_type 'allgather', and it is ${now}; set it to 'allgather'`,
    `DeepSeek Sparse Attention with CP ${cp.value} needs cp_comm_type 'allgather'; set it to 'allgather'`,
  );
  return [reportAt(unit, at, message, { summary, fix, related: relatedAll(relatedTo(cp.setting, "context parallel size"), relatedTo(variant, "DSA attention")) })];
}
