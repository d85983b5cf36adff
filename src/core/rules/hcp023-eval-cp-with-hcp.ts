// HCP023: eval-time CP rebinding together with hierarchical CP.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { contextParallel, hcpContext, hcpSizes, hcpTrigger, knownBool, resolve, settingOf, valueOf } from "./effective.ts";
import { defineRule, describe, editFor, fixOf, relatedAll, relatedTo, repr, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP023",
  name: "eval-cp-with-hcp",
  severity: "warning",
  summary: "dist.eval_context_parallel_size set with hierarchical CP",
  doc: {
    checks:
      "dist.eval_context_parallel_size set in a unit that uses hierarchical CP (a2a+p2p or hierarchical sizes). An error " +
      "only where upstream fails: with dist.use_decentralized_pg = True and hierarchical sizes set, Bridge's decentralized " +
      "process groups raise at init. Otherwise a warning. Not when it equals model.context_parallel_size (where that size " +
      "is not known, the message says so): upstream rebinds only \"if set and different from model.context_parallel_size\" " +
      "(DistributedInitConfig.eval_context_parallel_size, training/config.py:164-169; state.py:143-144, HEAD 067f987), so an equal value is a no-op.",
    why:
      "Eval-time CP rebinding is documented to require dist.use_decentralized_pg = True (DistributedInitConfig docstring, " +
      "eval_context_parallel_rebinding.py; Bridge HEAD 067f987). That is documentation, not a check: on the MPU path nothing " +
      "asserts and the rebinding is not supported there, and the decentralized path that supports it refuses hierarchical sizes: " +
      `${quote(UPSTREAM.B11)}`,
    example: 'cfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\ncfg.dist.eval_context_parallel_size = 2',
    fix: "Remove dist.eval_context_parallel_size (evaluate with the training layout), or drop hierarchical CP.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    if (hcpContext(unit) !== "yes") return [];
    const res = resolve(unit, "dist.eval_context_parallel_size");
    const setting = settingOf(res);
    const value = valueOf(res);
    if (!setting || value === undefined || value === null) return [];
    const cp = contextParallel(unit);
    if (cp && cp.value === value) return [];
    const trigger = hcpTrigger(unit);
    const decentralized = knownBool(unit, "dist.use_decentralized_pg") === true;
    const fails = decentralized && hcpSizes(unit).state === "list";
    const dpg = settingOf(resolve(unit, "dist.use_decentralized_pg"));
    const unknownCp = cp
      ? ""
      : " model.context_parallel_size is not known here; if it equals this value, upstream ignores the setting (it rebinds only \"if set and different\").";
    const message = fails
      ? `${describe(setting)} with dist.use_decentralized_pg = True while the unit uses hierarchical CP${trigger ? ` (${describe(trigger)})` : ""}. ` +
        `Eval-time CP rebinding runs on decentralized process groups, which refuse hierarchical sizes at init: ${quote(UPSTREAM.B11)} ` +
        `Remove dist.eval_context_parallel_size and use the MPU path, or drop hierarchical CP.${unknownCp}`
      : `${describe(setting)} while the unit uses hierarchical CP${trigger ? ` (${describe(trigger)})` : ""}. Bridge documents eval-time ` +
        "CP rebinding as requiring dist.use_decentralized_pg = True (\"It works only with the decentralized PG path\", " +
        "eval_context_parallel_rebinding.py), and that path cannot build hierarchical CP groups. Nothing checks this combination " +
        `upstream. Remove dist.eval_context_parallel_size, or drop hierarchical CP.${unknownCp}`;
    const fix = fixOf("Unset dist.eval_context_parallel_size", [editFor(unit, "dist.eval_context_parallel_size", null)]);
    return [
      reportAt(unit, setting, message, {
        summary: fails
          ? `eval_context_parallel_size ${repr(value)} runs on decentralized PG, which refuses hierarchical sizes; remove it, or drop hierarchical CP`
          : `eval_context_parallel_size ${repr(value)} needs decentralized PG, which has no hierarchical CP; remove it, or drop hierarchical CP`,
        severity: fails ? "error" : "warning",
        fix,
        related: relatedAll(relatedTo(trigger, "hierarchical CP is requested here"), relatedTo(dpg, "decentralized process groups")),
      }),
    ];
  },
});
