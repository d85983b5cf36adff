// HCP012: a per-layer cp_comm_type list needs one entry per transformer layer.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, knownInt } from "./effective.ts";
import { defineRule, describe, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP012",
  name: "cp-comm-type-length",
  severity: "error",
  summary: "a per-layer cp_comm_type list whose length is not num_layers",
  doc: {
    checks: "context_parallel_size > 1 and cp_comm_type is a per-layer list whose length differs from num_layers.",
    why:
      `Megatron-Bridge rejects it: ${quote(UPSTREAM.B4(4, 32))} Megatron-Core asserts ${quote(UPSTREAM.M1(4, 32))} ` +
      "Layer i (1-based) reads entry i-1.",
    example: 'cfg.model.num_layers = 32\ncfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = ["p2p", "p2p", "a2a", "a2a"]  # 4 entries for 32 layers',
    fix: "Give one entry per transformer layer, or a single string when every layer uses the same type.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const types = commTypes(unit);
    const cp = contextParallel(unit);
    const layers = knownInt(unit, "model.num_layers");
    if (types.state !== "types" || !types.perLayer || !cp || cp.value <= 1 || !layers) return [];
    const n = types.types.length;
    if (n === layers.value) return [];

    const uniform = n > 0 && types.types.every((t) => t === types.types[0]) ? types.types[0] : undefined;
    const advice = uniform
      ? `Every entry is ${repr(uniform)}: set cp_comm_type = ${repr(uniform)} (a single string applies to all layers).`
      : `Give exactly ${layers.value} entries, one per layer.`;
    const message =
      `${describe(types.setting)}: ${n} entries, but model.num_layers is ${layers.value}. ` +
      (unit.kind === "mlm-launch"
        ? `Megatron-Core's TransformerConfig (built from the Megatron-LM arguments) asserts ${quote(UPSTREAM.M1(n, layers.value))}`
        : `Megatron-Bridge rejects this: ${quote(UPSTREAM.B4(n, layers.value))}`) +
      ` ${advice}`;
    const fix = uniform ? fixOf(`Set model.cp_comm_type to ${repr(uniform)}`, [editFor(unit, "model.cp_comm_type", uniform)]) : undefined;
    const summary = `cp_comm_type has ${n} entries but num_layers is ${layers.value}; ${uniform ? `set it to ${repr(uniform)} (one for all layers)` : `give ${layers.value} entries, one per layer`}`;
    return [reportAt(unit, types.setting, message, { summary, fix, related: relatedTo(layers.setting, "number of layers") })];
  },
});
