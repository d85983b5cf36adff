// HCP025: Multi-Latent Attention with cp_comm_type 'a2a' or 'all_gather' on Transformer Engine 2.5-2.14.
import type { ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, knownBool, teOlderThan } from "./effective.ts";
import { defineRule, describe, relatedTo, reportAt, teDescription, teQuote, teRelated } from "./report.ts";
import { teShort } from "./short-message.ts";
import { UPSTREAM, quote, type TeText } from "./upstream.ts";

/** The types TE 2.5-2.14 refuse for MLA: everything but p2p and a2a+p2p. */
const REFUSED = new Set(["a2a", "all_gather"]);

/** TE's MLA assertion in attn_forward_func_with_cp, as each release range prints it. */
const mlaTexts = (type: string): TeText[] => [
  { since: "2.5", until: "2.8", text: UPSTREAM.T13_2_5_TO_2_7 },
  { since: "2.8", until: "2.12", text: UPSTREAM.T13_2_8_TO_2_11 },
  { since: "2.12", until: "2.15", text: UPSTREAM.T13(type) },
];

export const rule = defineRule({
  id: "HCP025",
  name: "mla-cp-comm-type",
  severity: "error",
  summary: "Multi-Latent Attention with cp_comm_type 'a2a' or 'all_gather' on Transformer Engine 2.5-2.14",
  doc: {
    checks:
      "multi_latent_attention is True, context_parallel_size > 1, and a layer's cp_comm_type is 'a2a' or 'all_gather', while the " +
      "pinned Transformer Engine is 2.5 to 2.14 (error) or not known (warning). From 2.15 on, and below 2.5, nothing is reported.",
    why:
      "Transformer Engine's attn_forward_func_with_cp (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py) " +
      "treats attention whose key and value head dims differ as MLA (`enable_mla = k.shape[-1] != v.shape[-1]`; Megatron-Core's MLA " +
      "has q/k heads of qk_head_dim + qk_pos_emb_head_dim, values of v_head_dim) and asserts `not enable_mla or cp_comm_type in " +
      "[\"p2p\", \"a2a+p2p\"]`. The assertion came with CP support for MLA in 2.5 (PR #1729; v2.5 line 3880: " +
      `${quote(UPSTREAM.T13_2_5_TO_2_7)}), printed ${quote(UPSTREAM.T13_2_8_TO_2_11)} with the braces literally in 2.8-2.11 (v2.9 line ` +
      `3812), ${quote(UPSTREAM.T13("a2a"))} from 2.12 (v2.14 line 4073), and was removed in 2.15 (PR #2719, Add MXFP8 attention). ` +
      "It fires at the first forward step, after the job has been scheduled and the model built.",
    example: 'cfg.model.multi_latent_attention = True\ncfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = "a2a"  # with transformer-engine 2.9 pinned',
    fix: "Use cp_comm_type 'p2p' (or 'a2a+p2p' with hierarchical_context_parallel_sizes), or upgrade Transformer Engine to 2.15 or later.",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    if (knownBool(unit, "model.multi_latent_attention") !== true) return [];
    const cp = contextParallel(unit);
    if (!cp || cp.value <= 1) return [];
    const types = commTypes(unit);
    if (types.state !== "types") return [];
    const refused = [...new Set(types.types.filter((t) => REFUSED.has(t)))];
    if (refused.length === 0) return [];
    // Outside 2.5-2.14 TE does not assert this; an unreadable pin keeps the finding, as a warning.
    const before = teOlderThan(project, "2.5");
    const fixedIn = teOlderThan(project, "2.15");
    if (before === "yes" || fixedIn === "no") return [];
    const known = before === "no" && fixedIn === "yes";
    const where = known ? `${teDescription(project)} asserts` : `${teDescription(project)} 2.5 to 2.14 asserts`;
    const message =
      `${describe(types.setting)} with multi_latent_attention on and context_parallel_size ${cp.value}: ${where} at the first ` +
      `forward step: ${refused.map((t) => teQuote(project, mlaTexts(t))).join(" ")} Transformer Engine accepts only 'p2p' and ` +
      "'a2a+p2p' for MLA before 2.15. Use cp_comm_type 'p2p' (or 'a2a+p2p' with hierarchical_context_parallel_sizes), or upgrade " +
      "Transformer Engine to 2.15 or later.";
    const mla = unit.settings["model.multi_latent_attention"];
    return [
      reportAt(unit, types.setting, message, {
        summary:
          `cp_comm_type ${refused.map((t) => `'${t}'`).join(", ")} with multi_latent_attention and CP ${cp.value} fails on ` +
          `${known ? teShort(project.transformerEngine) : "Transformer Engine 2.5-2.14"}; use 'p2p', or TE >= 2.15`,
        ...(known ? {} : { severity: "warning" as const }),
        related: [...relatedTo(mla, "multi-latent attention"), ...(known ? teRelated(project) : [])],
      }),
    ];
  },
});
