// HCP007: with CP > 1 every sequence must split into 2*CP chunks (load-balanced causal CP).
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Setting, SettingKey } from "../model/settings.ts";
import { contextParallel, isInt } from "./effective.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedAll, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

const SEQ_KEYS: readonly SettingKey[] = ["model.seq_length", "dataset.seq_length"];

export const rule = defineRule({
  id: "HCP007",
  name: "seq-length-not-divisible",
  severity: "error",
  summary: "seq_length not divisible by 2 × context_parallel_size",
  doc: {
    checks: "context_parallel_size > 1 and model.seq_length or dataset.seq_length is not a multiple of 2 × context_parallel_size.",
    why:
      `Megatron-Bridge rejects it: ${quote(UPSTREAM.B1)} Megatron-LM asserts ${quote(UPSTREAM.M12)} ` +
      "Transformer Engine splits every sequence into 2 × CP chunks for causal load balancing.",
    example: "cfg.model.context_parallel_size = 4\ncfg.dataset.seq_length = 8196\ncfg.model.seq_length = 8196",
    fix: "Round seq_length up to the next multiple of 2 × context_parallel_size and write it on both model and dataset.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const cp = contextParallel(unit);
    if (!cp || cp.value <= 1) return [];
    const multiple = 2 * cp.value;
    const seqs = SEQ_KEYS.map((key) => unit.settings[key]).filter((s): s is Setting => s !== undefined);
    const offenders = seqs.filter((s) => s.value.known && isInt(s.value.value) && s.value.value % multiple !== 0);
    const first = offenders.find((s) => s.local) ?? offenders[0];
    if (!first) return [];

    const lengths = seqs.map((s) => (s.value.known && isInt(s.value.value) ? s.value.value : 0));
    const target = Math.ceil(Math.max(...lengths) / multiple) * multiple;
    const upstream =
      unit.kind === "mlm-launch" ? `Megatron-LM asserts ${quote(UPSTREAM.M12)}` : `Megatron-Bridge rejects this: ${quote(UPSTREAM.B1)}`;
    const message =
      `${offenders.map(describe).join(" and ")}: not divisible by 2 × context_parallel_size = ${multiple}, with ` +
      `${describeResolution("model.context_parallel_size", cp.res)}. ${upstream} ` +
      `Set seq_length = ${target} (the next multiple of ${multiple}) on both model.seq_length and dataset.seq_length.`;
    return [
      reportAt(unit, first, message, {
        summary: `${first.key} ${repr(first.value.known ? first.value.value : null)} is not divisible by 2 × context_parallel_size = ${multiple}; set seq_length to ${target}`,
        fix: seqFix(unit, target),
        related: relatedAll(
          relatedTo(cp.setting, "context parallel size"),
          ...seqs.filter((s) => s !== first).map((s) => relatedTo(s)),
        ),
      }),
    ];
  },
});

/**
 * Both keys, so model and dataset stay in sync (Bridge asserts they match). A key the unit
 * does not set yet is added where the unit can take it; Megatron-LM has a single
 * --seq-length, so nothing is added there.
 */
function seqFix(unit: ConfigUnit, target: number) {
  const edits = SEQ_KEYS.flatMap((key) => {
    if (unit.settings[key]) return [editFor(unit, key, target)];
    if (unit.kind === "mlm-launch") return [];
    const insert = editFor(unit, key, target);
    return insert ? [insert] : [];
  });
  return fixOf(`Set model.seq_length and dataset.seq_length to ${target}`, edits);
}
