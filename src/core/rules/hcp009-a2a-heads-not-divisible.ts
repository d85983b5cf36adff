// HCP009: the a2a level splits attention heads; it must divide the Q and KV heads per TP rank.
import type { Fix, ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Setting } from "../model/settings.ts";
import {
  commTypes,
  contextParallel,
  hcpSizes,
  headsPerRank,
  isInt,
  knownInt,
  positiveIntSizes,
  resolve,
  settingOf,
  tensorParallel,
  valueOf,
  product,
  usesA2aP2p,
  type HeadsPerRank,
} from "./effective.ts";
import { domainText, layoutFor, setSizesFix, splitFor, splitText } from "./layout-fix.ts";
import { defineRule, describe, editFor, fixOf, relatedAll, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP009",
  name: "a2a-heads-not-divisible",
  severity: "error",
  summary: "the a2a level does not divide the attention heads per TP rank",
  doc: {
    checks:
      "With a2a+p2p, hierarchical_context_parallel_sizes[0] must divide num_attention_heads/TP and num_query_groups/TP; " +
      "with pure a2a, context_parallel_size must. Error when the head counts are known, info when they are not.",
    why:
      `Ulysses (a2a) gives each rank all tokens but only heads/size heads. Pure a2a fails in Transformer Engine: ` +
      `${quote(UPSTREAM.T10(2, 2, 4))} a2a+p2p has no such check and fails with a PyTorch view/shape RuntimeError in ` +
      "flash_attn_a2a_communicate. Under GQA the KV heads are the indivisible unit.",
    example:
      "cfg.model.num_attention_heads = 32  # Llama-3-8B\ncfg.model.num_query_groups = 8\n" +
      "cfg.model.tensor_model_parallel_size = 4\ncfg.model.context_parallel_size = 4\n" +
      'cfg.model.cp_comm_type = "a2a"  # 2 KV heads per TP rank, not divisible by 4',
    fix: "Pick an a2a size that divides the heads per TP rank (a2a+p2p with sizes [2, 2] here), or change TP.",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const types = commTypes(unit);
    if (types.state !== "types") return [];
    if (usesA2aP2p(types) === "yes") return checkHierarchical(unit, project, types.setting);
    if (types.types.includes("a2a")) return checkPureA2a(unit, project, types.setting, types.perLayer);
    return [];
  },
});

const headsText = (h: HeadsPerRank): string =>
  `${h.q} Q and ${h.kv} KV heads per TP rank (num_attention_heads ${h.q * h.tp}, num_query_groups ${h.kv * h.tp}, TP ${h.tp})`;

/** "8 Q / 2 KV heads per TP rank (TP 4)": the counts the one line needs. */
const headsShort = (h: HeadsPerRank): string => `${h.q} Q / ${h.kv} KV heads per TP rank (TP ${h.tp})`;

const divides = (n: number, h: HeadsPerRank): boolean => h.q % n === 0 && h.kv % n === 0;

function headsRelated(h: HeadsPerRank) {
  return relatedAll(relatedTo(h.qSetting, "attention heads"), relatedTo(h.kvSetting, "KV heads (query groups)"));
}

/**
 * Without a known TP the per-rank counts are unknown, but the raw counts still decide
 * one direction: if `size` does not divide the model's heads it divides no heads/TP either.
 */
function unknownTpReport(unit: ConfigUnit, where: Setting, size: number, what: string): RuleReport {
  const q = knownInt(unit, "model.num_attention_heads");
  const kvRes = resolve(unit, "model.num_query_groups");
  const kvValue = valueOf(kvRes);
  const kv = kvValue === null && kvRes.state === "set" ? q?.value : isInt(kvValue) ? kvValue : undefined;
  if (q && kv !== undefined && (q.value % size !== 0 || kv % size !== 0)) {
    const message =
      `${describe(where)}: ${what} splits attention heads ${size} ways, but the model has ${q.value} attention heads and ` +
      `${kv} KV heads (query groups), not divisible by ${size} for any tensor_model_parallel_size. Transformer Engine ` +
      `fails at the first forward (pure a2a: ${quote(UPSTREAM.T10(q.value, kv, size))}). Pick a size that divides the KV heads.`;
    const summary = `${what} splits heads ${size} ways, but ${q.value} heads / ${kv} KV heads do not divide by ${size}: pick a size that divides them`;
    return reportAt(unit, where, message, { summary, related: relatedAll(relatedTo(q.setting, "attention heads"), relatedTo(settingOf(kvRes), "KV heads (query groups)")) });
  }
  const missing = [
    q ? undefined : "num_attention_heads",
    kv === undefined ? "num_query_groups" : undefined,
    tensorParallel(unit) ? undefined : "tensor_model_parallel_size",
  ].filter((m): m is string => m !== undefined);
  const message =
    `${describe(where)}: ${what} splits attention heads ${size} ways, but ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} ` +
    `not known here, so divisibility cannot be checked. Make sure (num_attention_heads/TP) % ${size} == 0 and ` +
    `(num_query_groups/TP) % ${size} == 0, or Transformer Engine fails at the first forward.`;
  // Unknown stays unknown in the one line too: not "does not divide", but "cannot be checked".
  const short = missing.map((m) => ({ num_attention_heads: "heads", num_query_groups: "KV heads", tensor_model_parallel_size: "TP" })[m] ?? m);
  const summary = `${what} splits heads ${size} ways; ${short.join(", ")} not known: check that ${size} divides heads/TP`;
  return reportAt(unit, where, message, { severity: "info", summary });
}

function checkHierarchical(unit: ConfigUnit, project: ProjectFacts, typeSetting: Setting): RuleReport[] {
  const sizes = hcpSizes(unit);
  const ints = positiveIntSizes(sizes);
  if (sizes.state !== "list" || !ints || ints.length !== 2) return [];
  const a2a = ints[0] ?? 1;
  if (a2a === 1) return [];
  const heads = headsPerRank(unit);
  if (!heads) return [unknownTpReport(unit, sizes.setting, a2a, "the a2a level of a2a+p2p")];
  if (divides(a2a, heads)) return [];

  const cp = contextParallel(unit)?.value ?? product(ints);
  const split = splitFor(unit, project, cp);
  const better = split && split.sizes[0] !== a2a ? split : undefined;
  const message =
    `${describe(sizes.setting)} puts ${a2a} ranks in each a2a group, but the model has ${headsText(heads)}, not divisible ` +
    `by ${a2a}. Transformer Engine splits heads across the a2a group without a check, so the first forward fails with a ` +
    `PyTorch view/shape RuntimeError (pure a2a reports ${quote(UPSTREAM.T10(heads.q, heads.kv, a2a))}). ` +
    (better
      ? `Set hierarchical_context_parallel_sizes = ${splitText(better.sizes, unit, project)}.`
      : "Pick an a2a size that divides the heads per TP rank, or change TP.");
  return [
    reportAt(unit, sizes.setting, message, {
      summary: `a2a size ${a2a} does not divide ${headsShort(heads)}; ${better ? `set hierarchical_context_parallel_sizes to ${repr([...better.sizes])}` : "pick an a2a size that divides them, or change TP"}`,
      fix: better ? setSizesFix(unit, project, better.sizes) : undefined,
      related: relatedAll(relatedTo(typeSetting, "a2a+p2p communication"), headsRelated(heads)),
    }),
  ];
}

function checkPureA2a(unit: ConfigUnit, project: ProjectFacts, typeSetting: Setting, perLayer: boolean): RuleReport[] {
  const cp = contextParallel(unit);
  if (!cp || cp.value <= 1) return [];
  const heads = headsPerRank(unit);
  if (!heads) return [unknownTpReport(unit, typeSetting, cp.value, "cp_comm_type 'a2a'")];
  if (divides(cp.value, heads)) return [];

  const { text, short, fix } = perLayer ? { text: "Pick a CP size or TP that divides the heads.", short: "pick a CP size or TP that divides them", fix: undefined } : a2aRemedy(unit, project, cp.value);
  const message =
    `${describe(typeSetting)} with context_parallel_size ${cp.value}, but the model has ${headsText(heads)}, not divisible ` +
    `by ${cp.value}. Transformer Engine fails at the first forward: ${quote(UPSTREAM.T10(heads.q, heads.kv, cp.value))} ${text}`;
  return [
    reportAt(unit, typeSetting, message, {
      summary: `cp_comm_type 'a2a' with CP ${cp.value} does not divide ${headsShort(heads)}; ${short}`,
      fix,
      related: relatedAll(relatedTo(cp.setting, "context parallel size"), headsRelated(heads)),
    }),
  ];
}

/** Ask the advisor: a2a+p2p with an a2a level that fits, or p2p. */
function a2aRemedy(unit: ConfigUnit, project: ProjectFacts, cp: number): { text: string; short: string; fix: Fix | undefined } {
  const layout = layoutFor(unit, project, cp);
  if (layout?.cpCommType === "a2a+p2p" && layout.sizes) {
    return {
      text: `Use cp_comm_type 'a2a+p2p' with hierarchical_context_parallel_sizes = ${splitText(layout.sizes, unit, project)}.`,
      short: `use 'a2a+p2p' with sizes ${repr([...layout.sizes])}`,
      fix: fixOf(`Set model.cp_comm_type to 'a2a+p2p' and model.hierarchical_context_parallel_sizes to ${repr([...layout.sizes])} (for ${domainText(unit, project)})`, [
        editFor(unit, "model.cp_comm_type", "a2a+p2p"),
        editFor(unit, "model.hierarchical_context_parallel_sizes", [...layout.sizes]),
      ]),
    };
  }
  if (layout?.cpCommType === "p2p") {
    return {
      text: `Use cp_comm_type 'p2p': ${layout.reasons.join("; ")}.`,
      short: "use cp_comm_type 'p2p'",
      fix: fixOf("Set model.cp_comm_type to 'p2p'", [editFor(unit, "model.cp_comm_type", "p2p")]),
    };
  }
  return { text: "Pick a CP size or TP that divides the heads, or use a2a+p2p/p2p.", short: "pick a CP size or TP that divides them, or use a2a+p2p/p2p", fix: undefined };
}
