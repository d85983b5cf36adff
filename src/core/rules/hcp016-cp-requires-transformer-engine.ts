// HCP016: context parallelism needs Transformer Engine attention.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { contextParallel, resolve, settingOf, valueOf } from "./effective.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

/** Implementations whose attention is TEDotProductAttention (megatron/core/models/backends.py). */
const TE_ATTENTION: ReadonlySet<string> = new Set(["transformer_engine", "inference_optimized"]);

export const rule = defineRule({
  id: "HCP016",
  name: "cp-requires-transformer-engine",
  severity: "error",
  summary: "context parallelism without transformer_impl 'transformer_engine'",
  doc: {
    checks:
      "context_parallel_size > 1 with model.transformer_impl other than 'transformer_engine' or 'inference_optimized' " +
      "(Megatron-Core's InferenceSpecProvider builds TEDotProductAttention too, models/backends.py at the Bridge pin 2a75ac1 and HEAD).",
    why: `Only TEDotProductAttention implements context parallelism; with transformer_impl 'local' Megatron-Core asserts ${quote(UPSTREAM.M6)}`,
    example: 'cfg.model.context_parallel_size = 2\ncfg.model.transformer_impl = "local"',
    fix: "Set cfg.model.transformer_impl = \"transformer_engine\" (the default), or context_parallel_size = 1.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const cp = contextParallel(unit);
    if (!cp || cp.value <= 1) return [];
    const impl = resolve(unit, "model.transformer_impl");
    const value = valueOf(impl);
    const setting = settingOf(impl);
    if (typeof value !== "string" || TE_ATTENTION.has(value) || !setting) return [];
    const message =
      `${describe(setting)} with ${describeResolution("model.context_parallel_size", cp.res)}. Context parallelism is ` +
      `implemented only by Transformer Engine attention; Megatron-Core asserts ${quote(UPSTREAM.M6)} ` +
      "Set transformer_impl = 'transformer_engine'.";
    const fix = fixOf("Set model.transformer_impl to 'transformer_engine'", [editFor(unit, "model.transformer_impl", "transformer_engine")]);
    const summary = `transformer_impl ${repr(value)} has no context parallelism (CP ${cp.value}); set it to 'transformer_engine'`;
    return [reportAt(unit, setting, message, { summary, fix, related: relatedTo(cp.setting, "context parallel size") })];
  },
});
