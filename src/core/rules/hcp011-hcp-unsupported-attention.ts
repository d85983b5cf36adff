// HCP011: a2a+p2p with sliding-window attention, attention bias or a non-vanilla softmax.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Known, Setting } from "../model/settings.ts";
import { commTypes, contextParallel, hcpSizes, headsPerRank, replaceA2aP2p, usesA2aP2p } from "./effective.ts";
import { defineRule, describe, editFor, fixOf, relatedAll, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP011",
  name: "hcp-unsupported-attention",
  severity: "error",
  doc: {
    checks:
      "cp_comm_type 'a2a+p2p' together with sliding-window attention (window_size), an attention bias " +
      "(position_embedding_type 'alibi'/'relative') or a non-vanilla softmax (softmax_type 'learnable'/'off-by-one', e.g. gpt-oss sinks).",
    why:
      `Transformer Engine supports these only with other CP types: ${quote(UPSTREAM.T8)} ${quote(UPSTREAM.T9)} ` +
      `${quote(UPSTREAM.T3("alibi"))}`,
    example: 'cfg.model.window_size = [4096, 0]\ncfg.model.cp_comm_type = "a2a+p2p"',
    fix: "Use cp_comm_type 'a2a' (sliding window also works with 'all_gather') and drop hierarchical_context_parallel_sizes.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const types = commTypes(unit);
    if (types.state !== "types" || usesA2aP2p(types) !== "yes") return [];
    const features = unsupportedFeatures(unit);
    if (features.length === 0) return [];

    const target = replacementType(unit, features);
    const edits = target ? [editFor(unit, "model.cp_comm_type", replaceA2aP2p(types, target))] : [];
    const sizes = hcpSizes(unit);
    if (target && sizes.state === "list") edits.push(editFor(unit, "model.hierarchical_context_parallel_sizes", null));
    const advice = target
      ? `Set cp_comm_type = ${repr(target)}${sizes.state === "list" ? " and remove hierarchical_context_parallel_sizes" : ""}.`
      : "Use cp_comm_type 'a2a' with a context_parallel_size that divides the heads per TP rank.";
    const message =
      `${describe(types.setting)} but ${features.map((f) => `${describe(f.setting)} (${f.what})`).join(" and ")}. ` +
      `Transformer Engine rejects this combination at the first forward: ${features.map((f) => quote(f.upstream)).join(" ")} ${advice}`;
    const fix = target ? fixOf(advice.replace(/\.$/, ""), edits) : undefined;
    return [reportAt(unit, types.setting, message, { fix, related: relatedAll(...features.map((f) => relatedTo(f.setting, f.what))) })];
  },
});

interface Feature {
  setting: Setting;
  what: string;
  upstream: string;
  /** Only a2a works; sliding window alone also allows all_gather. */
  a2aOnly: boolean;
}

/** MCore's "no window" spellings: None, or (-1, -1) as Transformer Engine writes it. */
function isSlidingWindow(value: Known): boolean {
  if (value === null || value === false) return false;
  if (Array.isArray(value)) return !value.every((v) => v === -1 || v === null);
  return typeof value === "number" ? value > 0 : true;
}

function unsupportedFeatures(unit: ConfigUnit): Feature[] {
  const out: Feature[] = [];
  const window = unit.settings["model.window_size"];
  if (window?.value.known && isSlidingWindow(window.value.value)) {
    out.push({ setting: window, what: "sliding-window attention", upstream: UPSTREAM.T8, a2aOnly: false });
  }
  const softmax = unit.settings["model.softmax_type"];
  if (softmax?.value.known && typeof softmax.value.value === "string" && softmax.value.value !== "vanilla") {
    out.push({ setting: softmax, what: "non-vanilla softmax", upstream: UPSTREAM.T9, a2aOnly: true });
  }
  const pos = unit.settings["model.position_embedding_type"];
  if (pos?.value.known && (pos.value.value === "alibi" || pos.value.value === "relative")) {
    const bias = pos.value.value === "alibi" ? "alibi" : "post_scale_bias";
    out.push({ setting: pos, what: "attention bias", upstream: UPSTREAM.T3(bias), a2aOnly: true });
  }
  return out;
}

/**
 * a2a, unless the heads are known not to divide by CP: then all_gather when only the
 * sliding window is in the way, otherwise no mechanical fix.
 */
function replacementType(unit: ConfigUnit, features: Feature[]): "a2a" | "all_gather" | undefined {
  const cp = contextParallel(unit);
  const heads = headsPerRank(unit);
  const a2aFits = !cp || !heads || (heads.q % cp.value === 0 && heads.kv % cp.value === 0);
  if (a2aFits) return "a2a";
  return features.every((f) => !f.a2aOnly) ? "all_gather" : undefined;
}
