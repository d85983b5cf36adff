// HCP002: the product of hierarchical_context_parallel_sizes differs from context_parallel_size.
import type { Fix, ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { contextParallel, hcpSizes, positiveIntSizes, product, usesA2aP2p, commTypes, type KnownInt } from "./effective.ts";
import { setSizesFix, splitFor, splitText } from "./layout-fix.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { oneLine } from "./short-message.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP002",
  name: "sizes-product-mismatch",
  severity: "error",
  summary: "hierarchical sizes whose product is not context_parallel_size",
  doc: {
    checks: "hierarchical_context_parallel_sizes is set and the product of its entries differs from context_parallel_size.",
    why:
      `Megatron-Bridge rejects it: ${quote(UPSTREAM.B7("[2, 4]", 8, 4))} Older stacks stop with a bare AssertionError ` +
      "in parallel_state.initialize_model_parallel, and Megatron-LM launch lines with a bare AssertionError in its argument " +
      "check. The usual cause is changing CP (e.g. `-cp` on the command line) without the sizes.",
    example: "cfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = \"a2a+p2p\"\ncfg.model.hierarchical_context_parallel_sizes = [2, 4]",
    fix: "Make the product equal context_parallel_size (CP=4 → [2, 2]), or set context_parallel_size to the product when CP was left unset.",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const sizes = hcpSizes(unit);
    const ints = positiveIntSizes(sizes);
    const cp = contextParallel(unit);
    if (sizes.state !== "list" || !ints || !cp) return [];
    const prod = product(ints);
    if (prod === cp.value) return [];

    const rejects =
      unit.kind === "mlm-launch"
        ? "Megatron-LM's argument check stops with a bare AssertionError (arguments.py: `assert args.context_parallel_size == prod(args.hierarchical_context_parallel_sizes)`)."
        : `Megatron-Bridge rejects this: ${quote(UPSTREAM.B7(repr(ints), prod, cp.value))}`;
    const { text, short, fix } = remedy(unit, project, cp, prod);
    const cpText = cp.setting ? `is ${cp.value}` : `is not set (default ${cp.value})`;
    const message =
      `${describe(sizes.setting)}, whose product is ${prod}, but ${describeResolution("model.context_parallel_size", cp.res)}. ` +
      `${rejects} ${text}`;
    const summary = oneLine(
      `hierarchical_context_parallel_sizes ${repr(ints)} multiplies to ${prod} but context_parallel_size ${cpText}; ${short}`,
      `hierarchical sizes ${repr(ints)} multiply to ${prod} but context_parallel_size ${cpText}; ${short}`,
      `hierarchical sizes multiply to ${prod} but context_parallel_size ${cpText}; ${short}`,
    );
    return [reportAt(unit, sizes.setting, message, { summary, fix, related: relatedTo(cp.setting, "context parallel size") })];
  },
});

function remedy(unit: ConfigUnit, project: ProjectFacts, cp: KnownInt, prod: number): { text: string; short: string; fix: Fix | undefined } {
  if (!cp.setting && prod > 1) {
    // CP was never written (upstream default 1): the sizes say what the author meant.
    return {
      text: `Set context_parallel_size = ${prod} to match the sizes.`,
      short: `set context_parallel_size to ${prod}`,
      fix: fixOf(`Set model.context_parallel_size to ${prod}`, [editFor(unit, "model.context_parallel_size", prod)]),
    };
  }
  if (cp.value > 1) {
    const split = splitFor(unit, project, cp.value);
    if (split) {
      return { text: `Set hierarchical_context_parallel_sizes = ${splitText(split.sizes, unit, project)}.`, short: `set them to ${repr([...split.sizes])}`, fix: setSizesFix(unit, project, split.sizes) };
    }
    return { text: `Choose sizes whose product is ${cp.value}.`, short: `choose sizes whose product is ${cp.value}`, fix: undefined };
  }
  if (usesA2aP2p(commTypes(unit)) === "no") {
    return {
      text: "With context_parallel_size 1 and no a2a+p2p layer the sizes do nothing: remove them.",
      short: "no layer uses a2a+p2p, so remove them",
      fix: fixOf("Unset model.hierarchical_context_parallel_sizes", [editFor(unit, "model.hierarchical_context_parallel_sizes", null)]),
    };
  }
  return { text: `Set context_parallel_size, cp_comm_type and hierarchical_context_parallel_sizes together (product ${prod}).`, short: `set CP to ${prod} with them, or remove both`, fix: undefined };
}
