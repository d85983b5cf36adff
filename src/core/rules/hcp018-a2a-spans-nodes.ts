// HCP018: the a2a level of a2a+p2p should stay inside one NVLink domain.
import type { ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, hcpSizes, nvlinkDomain, positiveIntSizes, product, tensorParallel, usesA2aP2p } from "./effective.ts";
import { setSizesFix, splitFor, splitText } from "./layout-fix.ts";
import { defineRule, describe, describeResolution, relatedTo, reportAt } from "./report.ts";

export const rule = defineRule({
  id: "HCP018",
  name: "a2a-spans-nodes",
  severity: "warning",
  doc: {
    checks:
      "With a2a+p2p, tensor_model_parallel_size × hierarchical_context_parallel_sizes[0] exceeds the GPUs of one NVLink " +
      "domain: taken from the recipe's name when it follows upstream's naming scheme exactly " +
      "(`{model}_{task}_{N}gpu_{gpu}_{precision}..._config`, recipes/utils/naming.py recipe_function_name, HEAD 067f987), else from the unit's hardware folder (`recipes/<family>/gb200/…`, `perf_recipes/<family>/<gpu>/…`: 8 on " +
      "h100/b200/b300, 72 on the gb200/gb300/vr200 NVL72 racks, as Bridge's perf recipes set NVLINK_DOMAIN_SIZE), else " +
      "`gpus_per_node` in .github/hcp-bot.yml or `--gpus-per-node`, else 8. The message says which.",
    why:
      "CP ranks are strided by TP, so each a2a group spans TP × sizes[0] GPUs. The all-to-all is latency-bound and " +
      "should run over NVLink; crossing nodes puts it on the slower fabric, and the p2p ring is the level meant to cross nodes.",
    example: 'cfg.model.context_parallel_size = 16\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [16, 1]',
    fix: "Keep the a2a level inside a node and put the inter-node factor in the p2p slot (doc example: CP 16 on 8-GPU nodes → [8, 2]).",
  },
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[] {
    const types = commTypes(unit);
    const sizes = hcpSizes(unit);
    const ints = positiveIntSizes(sizes);
    const tp = tensorParallel(unit);
    if (types.state !== "types" || usesA2aP2p(types) !== "yes" || sizes.state !== "list" || !ints || ints.length === 0 || !tp) return [];
    const a2a = ints[0] ?? 1;
    const span = tp.value * a2a;
    const domain = nvlinkDomain(unit, project);
    if (span <= domain.gpus) return [];

    const cp = contextParallel(unit)?.value ?? product(ints);
    const split = splitFor(unit, project, cp);
    const advice = split
      ? `Set hierarchical_context_parallel_sizes = ${splitText(split.sizes, unit, project)}.`
      : "Lower TP or the a2a size so TP × a2a fits in a node, putting the inter-node factor in the p2p slot.";
    const message =
      `${describe(sizes.setting)} with ${describeResolution("model.tensor_model_parallel_size", tp.res)}: each a2a group ` +
      `spans TP ${tp.value} × ${a2a} = ${span} GPUs, more than the ${domain.gpus} GPUs of one NVLink domain (${domain.source}), so the ` +
      `latency-bound all-to-all crosses the inter-node fabric. ${advice}`;
    return [
      reportAt(unit, sizes.setting, message, {
        fix: split ? setSizesFix(unit, project, split.sizes) : undefined,
        related: relatedTo(tp.setting, "tensor parallel size"),
      }),
    ];
  },
});
