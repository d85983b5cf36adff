// HCP018: the a2a level of a2a+p2p should stay inside one NVLink domain.
import { staysInsideDomains } from "../advise/layout.ts";
import type { ProjectFacts, RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { commTypes, contextParallel, hcpSizes, nvlinkDomain, positiveIntSizes, product, tensorParallel, usesA2aP2p } from "./effective.ts";
import { setSizesFix, splitFor, splitText } from "./layout-fix.ts";
import { defineRule, describe, describeResolution, relatedTo, repr, reportAt } from "./report.ts";
import { oneLine } from "./short-message.ts";

export const rule = defineRule({
  id: "HCP018",
  name: "a2a-spans-nodes",
  severity: "warning",
  summary: "the a2a level spans more GPUs than one NVLink domain",
  doc: {
    checks:
      "With a2a+p2p, tensor_model_parallel_size × hierarchical_context_parallel_sizes[0] does not divide the GPUs of one " +
      "NVLink domain (it exceeds them, or fits but leaves a remainder, as TP 1 × a2a 6 on 8 GPUs does). The domain is taken " +
      "first from what the unit states: `cfg.env_vars[\"NVLINK_DOMAIN_SIZE\"]` (a dict literal, an item assignment or update(), as " +
      "Bridge's perf recipes write it, e.g. perf_recipes/gpt_oss/gb200/gpt_oss.py:68 and recipes/nemotronh/gb200/nemotron_3_nano.py:178 " +
      "at HEAD 067f987) or `export NVLINK_DOMAIN_SIZE=72` before a launch line (examples/models/stepfun/step35/slurm_pretrain.sh:95); " +
      "then from the recipe's name when it follows upstream's naming scheme exactly " +
      "(`{model}_{task}_{N}gpu_{gpu}_{precision}..._config`, recipes/utils/naming.py recipe_function_name, HEAD 067f987), then from env_vars a base recipe " +
      "stated (a gb200 recipe built on an h100 one keeps its name's 72), else from the unit's hardware folder (`recipes/<family>/gb200/…`, `perf_recipes/<family>/<gpu>/…`: 8 on " +
      "h100/b200/b300, 72 on the gb200/gb300/vr200 NVL72 racks and r100, as Bridge's perf recipes and scripts/performance/utils/utils.py:322-327 set NVLINK_DOMAIN_SIZE), else " +
      "`gpus_per_node` in .github/hcp-bot.yml or `--gpus-per-node`, else 8. The message says which.",
    why:
      "Megatron-Core (megatron/core/parallel_state.py, create_hierarchical_groups, at Bridge's pin 2a75ac1) cuts each CP " +
      "group's ranks into contiguous runs of sizes[0]; CP ranks are strided by TP, so each a2a group is a run of TP × " +
      "sizes[0] consecutive ranks aligned on multiples of that span, and such runs stay inside every domain only when the " +
      "span divides it (TP 1, CP 12, [6, 2] on 8-GPU nodes groups ranks 6..11, across two nodes; [4, 3] does not). The " +
      "all-to-all is latency-bound and should run over NVLink; crossing nodes puts it on the slower fabric, and the p2p " +
      "ring is the level meant to cross nodes.",
    example: 'cfg.model.context_parallel_size = 16\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [16, 1]',
    fix:
      "Pick an a2a size with TP × a2a dividing the domain's GPUs and put the rest in the p2p slot (doc example: CP 16 on " +
      "8-GPU nodes → [8, 2]; TP 1, CP 12 → [4, 3]).",
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
    if (staysInsideDomains(span, domain.gpus)) return [];

    const cp = contextParallel(unit)?.value ?? product(ints);
    const split = splitFor(unit, project, cp);
    const advice = split
      ? `Set hierarchical_context_parallel_sizes = ${splitText(split.sizes, unit, project)}.`
      : "Lower TP or the a2a size so TP × a2a divides the GPUs of one NVLink domain, putting the inter-node factor in the p2p slot.";
    const where =
      span > domain.gpus
        ? `spans TP ${tp.value} × ${a2a} = ${span} GPUs, more than the ${domain.gpus} GPUs of one NVLink domain (${domain.source}), so the ` +
          "latency-bound all-to-all crosses the inter-node fabric"
        : `is a run of TP ${tp.value} × ${a2a} = ${span} consecutive ranks (Megatron-Core builds a2a groups as contiguous runs), and ` +
          `${span} does not divide the ${domain.gpus} GPUs of one NVLink domain (${domain.source}), so when the job spans more than one ` +
          "domain some a2a groups straddle two and their all-to-all crosses the inter-node fabric";
    const message = `${describe(sizes.setting)} with ${describeResolution("model.tensor_model_parallel_size", tp.res)}: each a2a group ${where}. ${advice}`;
    const problem =
      span > domain.gpus
        ? `a2a groups span TP ${tp.value} × ${a2a} = ${span} GPUs, past one ${domain.gpus}-GPU NVLink domain`
        : `a2a groups of TP ${tp.value} × ${a2a} = ${span} ranks do not divide the ${domain.gpus}-GPU NVLink domain`;
    const short = split ? `set hierarchical_context_parallel_sizes to ${repr([...split.sizes])}` : "lower TP or the a2a size";
    const shorter = split ? `set the sizes to ${repr([...split.sizes])}` : short;
    return [
      reportAt(unit, sizes.setting, message, {
        summary: oneLine(`${problem}; ${short}`, `${problem}; ${shorter}`),
        fix: split ? setSizesFix(unit, project, split.sizes) : undefined,
        related: relatedTo(tp.setting, "tensor parallel size"),
      }),
    ];
  },
});
