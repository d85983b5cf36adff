// HCP011: a2a+p2p with sliding-window attention, attention bias or a non-vanilla softmax.
import type { ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Known, Setting } from "../model/settings.ts";
import {
  A2A_P2P,
  commTypes,
  contextParallel,
  hcpSizes,
  headsPerRank,
  isSlidingWindow,
  knownInt,
  teOlderThan,
  usesA2aP2p,
  windowLayers,
  type CommTypes,
} from "./effective.ts";
import { defineRule, describe, editFor, fixOf, relatedAll, relatedTo, repr, reportAt, teDescription, teQuote } from "./report.ts";
import { bare, oneLine, valueOfSetting } from "./short-message.ts";
import { UPSTREAM, quote, type TeText } from "./upstream.ts";

type Types = Extract<CommTypes, { state: "types" }>;

/** TE's window assertion (attn_forward_func_with_cp): added in 2.8, its value formatted from 2.12. */
const windowTexts = (type: string): TeText[] => [
  { since: "2.8", until: "2.12", text: UPSTREAM.T8_2_8_TO_2_11 },
  { since: "2.12", text: UPSTREAM.T8(type) },
];
const softmaxTexts = (softmax: string): TeText[] => [
  { since: "2.8", until: "2.12", text: UPSTREAM.T9_2_8_TO_2_11 },
  { since: "2.12", text: UPSTREAM.T9(softmax) },
];

export const rule = defineRule({
  id: "HCP011",
  name: "hcp-unsupported-attention",
  severity: "error",
  summary: "a2a+p2p on a layer type whose attention it does not support",
  doc: {
    checks:
      "A unit using cp_comm_type 'a2a+p2p' with context_parallel_size > 1 where a layer's type does not support its attention: " +
      "sliding-window layers need 'a2a' or 'all_gather' (window_size other than None, (-1, 0) and (-1, -1); Megatron-Core gives " +
      "the window only to the layers window_attn_skip_freq marks, so a per-layer list with a2a on the window layers and " +
      "a2a+p2p on the full layers is fine); a non-vanilla softmax_type ('learnable', 'off-by-one', e.g. gpt-oss sinks) needs " +
      "'a2a' on every layer; an attention bias (position_embedding_type 'relative', T5's relative position bias) is refused by " +
      "a2a+p2p. Megatron-Core has no alibi position embedding (position_embedding_type is learned_absolute, rope, mrope, yarn, " +
      "relative or none at Bridge's pin 2a75ac1), so 'alibi' is not treated as a bias.",
    why:
      `Transformer Engine rejects these at the first forward with CP. From TE 2.12: ${quote(UPSTREAM.T8("a2a+p2p"))} ` +
      `${quote(UPSTREAM.T9("learnable"))}; TE 2.8 … 2.11 print the same with the braces unformatted ` +
      `(${quote(UPSTREAM.T8_2_8_TO_2_11)}); before 2.8 there is no such check and softmax_type does not exist. ` +
      `Every release from 1.12: ${quote(UPSTREAM.T3("post_scale_bias"))}`,
    example:
      'cfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\n' +
      "cfg.model.window_size = (4096, 0)",
    fix: "Use cp_comm_type 'a2a' on the affected layers (sliding window also works with 'all_gather'); drop hierarchical_context_parallel_sizes when no a2a+p2p layer is left.",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const types = commTypes(unit);
    if (types.state !== "types" || usesA2aP2p(types) !== "yes") return [];
    if (contextParallel(unit)?.value === 1) return []; // TE's CP path runs only with CP > 1
    const problems = [windowProblem(unit, types, project), softmaxProblem(unit, types, project), biasProblem(unit, types)].filter(
      (p): p is Problem => p !== undefined,
    );
    if (problems.length === 0) return [];

    const layerCount = types.perLayer ? types.types.length : 1;
    const fixed = replacement(unit, types, problems, layerCount);
    const advice = fixed
      ? `Set cp_comm_type = ${repr(fixed.value)}${fixed.dropSizes ? " and remove hierarchical_context_parallel_sizes" : ""}.`
      : "Use cp_comm_type 'a2a' on the affected layers with a context_parallel_size that divides the heads per TP rank.";
    const message =
      `${describe(types.setting)} but ${problems.map((p) => p.text).join("; and ")}. Transformer Engine rejects this at the first ` +
      `forward: ${problems.map((p) => p.upstream).join(" ")} ${advice}`;
    const fix = fixed
      ? fixOf(advice.replace(/\.$/, ""), [
          editFor(unit, "model.cp_comm_type", fixed.value),
          ...(fixed.dropSizes ? [editFor(unit, "model.hierarchical_context_parallel_sizes", null)] : []),
        ])
      : undefined;
    const what = problems.map((p) => `${p.what} (${bare(p.setting.key)} ${valueOfSetting(p.setting)})`).join(" and ");
    const short = fixed ? `set cp_comm_type to ${repr(fixed.value)}${fixed.dropSizes ? " and remove the sizes" : ""}` : "use 'a2a' on the affected layers";
    const summary = oneLine(
      `a2a+p2p cannot run ${what}; ${short}`,
      `a2a+p2p cannot run ${problems.map((p) => p.what).join(" and ")}; ${short}`,
      `a2a+p2p cannot run ${problems.map((p) => p.what).join(" and ")}; change cp_comm_type on those layers (see the fix)`,
    );
    return [reportAt(unit, types.setting, message, { summary, fix, related: relatedAll(...problems.map((p) => relatedTo(p.setting, p.what))) })];
  },
});

interface Problem {
  setting: Setting;
  what: string;
  text: string;
  upstream: string;
  /** 0-based layer indexes whose type must change (all layers for a str type). */
  layers: number[];
  /** Types that work on those layers, best first. */
  allowed: readonly string[];
}

const layerOf = (types: Types, i: number): string => (types.perLayer ? (types.types[i] ?? "") : (types.types[0] ?? ""));

function layerList(types: Types): number[] {
  return types.perLayer ? types.types.map((_, i) => i) : [0];
}

function windowProblem(unit: ConfigUnit, types: Types, project: ProjectFacts): Problem | undefined {
  const window = unit.settings["model.window_size"];
  if (!window?.value.known || isSlidingWindow(window.value.value) !== true) return undefined;
  const numLayers = knownInt(unit, "model.num_layers")?.value ?? (types.perLayer ? types.types.length : undefined);
  const isWindow = windowLayers(unit, numLayers);
  const bad = (t: string) => t !== "a2a" && t !== "all_gather";
  let offenders: number[];
  let caveat = "";
  if (types.perLayer) {
    if (isWindow) offenders = types.types.flatMap((t, i) => (isWindow(i + 1) && bad(t) ? [i] : []));
    else {
      // Which layers get the window is not known: only a list that is wrong on every layer is certainly wrong.
      if (!types.types.every(bad)) return undefined;
      offenders = layerList(types);
      caveat = " (window_attn_skip_freq is not known here, and no layer uses 'a2a' or 'all_gather')";
    }
  } else {
    const anyWindowLayer = isWindow ? Array.from({ length: numLayers ?? 64 }, (_, i) => i + 1).some(isWindow) : true;
    if (!anyWindowLayer) return undefined;
    offenders = [0];
    if (!isWindow) caveat = " (unless window_attn_skip_freq, not known here, leaves no layer with the window)";
  }
  if (offenders.length === 0) return undefined;
  const offending = [...new Set(offenders.map((i) => layerOf(types, i)))];
  const where = types.perLayer ? ` on layer${offenders.length === 1 ? "" : "s"} ${offenders.map((i) => i + 1).join(", ")}` : "";
  return {
    setting: window,
    what: "sliding-window attention",
    text: `${describe(window)} (sliding-window attention${where}${caveat})`,
    upstream: teOlderThan(project, "2.8") === "yes" ? olderTe(project) : offending.map((t) => teQuote(project, windowTexts(t))).join(" "),
    layers: offenders,
    allowed: ["a2a", "all_gather"],
  };
}

function olderTe(project: ProjectFacts): string {
  return `(${teDescription(project)} has no check for this yet: the assertion came with 2.8, and its p2p code does not apply the window)`;
}

function softmaxProblem(unit: ConfigUnit, types: Types, project: ProjectFacts): Problem | undefined {
  const softmax = unit.settings["model.softmax_type"];
  if (!softmax?.value.known || typeof softmax.value.value !== "string" || softmax.value.value === "vanilla") return undefined;
  const value = softmax.value.value;
  const offenders = layerList(types).filter((i) => layerOf(types, i) !== "a2a");
  if (offenders.length === 0) return undefined;
  return {
    setting: softmax,
    what: "non-vanilla softmax",
    text: `${describe(softmax)} (non-vanilla softmax)`,
    upstream: teQuote(project, softmaxTexts(value)),
    layers: offenders,
    allowed: ["a2a"],
  };
}

function biasProblem(unit: ConfigUnit, types: Types): Problem | undefined {
  const pos = unit.settings["model.position_embedding_type"];
  // Megatron-Core's only biased position embedding is T5's 'relative' (post_scale_bias); it has no alibi.
  if (!pos?.value.known || pos.value.value !== "relative") return undefined;
  const bias = "post_scale_bias";
  return {
    setting: pos,
    what: "attention bias",
    text: `${describe(pos)} (attention bias)`,
    upstream: quote(UPSTREAM.T3(bias)),
    layers: layerList(types).filter((i) => layerOf(types, i).includes(A2A_P2P)),
    allowed: ["a2a"],
  };
}

/**
 * The types with every offending layer changed to the first type all its problems allow:
 * a2a when the heads divide by CP (or are not known), else all_gather when only the window
 * is in the way. Undefined when some layer has no such type.
 */
function replacement(unit: ConfigUnit, types: Types, problems: Problem[], layerCount: number): { value: Known; dropSizes: boolean } | undefined {
  const cp = contextParallel(unit);
  const heads = headsPerRank(unit);
  const a2aFits = !cp || !heads || (heads.q % cp.value === 0 && heads.kv % cp.value === 0);
  const out = Array.from({ length: layerCount }, (_, i) => layerOf(types, i));
  for (let i = 0; i < layerCount; i++) {
    const owning = problems.filter((p) => p.layers.includes(i));
    if (owning.length === 0) continue;
    const allowed = ["a2a", "all_gather"].filter((t) => owning.every((p) => p.allowed.includes(t)) && (t !== "a2a" || a2aFits));
    const pick = allowed[0];
    if (!pick) return undefined;
    out[i] = pick;
  }
  const dropSizes = !out.some((t) => t.includes(A2A_P2P)) && hcpSizes(unit).state === "list";
  return { value: types.perLayer ? out : (out[0] ?? null), dropSizes };
}
