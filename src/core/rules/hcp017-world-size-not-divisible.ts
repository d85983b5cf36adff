// HCP017: the world size must be a multiple of TP × PP × CP.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { contextParallel, knownInt, tensorParallel } from "./effective.ts";
import { defineRule, describeResolution, relatedAll, relatedTo, reportAt } from "./report.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP017",
  name: "world-size-not-divisible",
  severity: "error",
  summary: "world size not divisible by TP × CP × PP",
  doc: {
    checks:
      "The world size a launch line runs on (--nproc_per_node × --nnodes) is not a multiple of tensor_model_parallel_size × " +
      "pipeline_model_parallel_size × context_parallel_size. A GPU count in a recipe's name is not a world size (nothing is " +
      "judged from names), nor is a perf workload's num_gpus (\"for representation purposes only\", WorkloadBaseConfig).",
    why:
      `Megatron-Core refuses the layout while building the process groups: RuntimeError ${quote(UPSTREAM.M5(4, 8))} ` +
      "(parallel_state.initialize_model_parallel; Bridge's decentralized path prints the same). Megatron-LM stops earlier in " +
      `its argument check: ${quote(UPSTREAM.MLM_WORLD(4, 8))}`,
    example: "torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config -tp 2 -pp 1 -cp 4",
    fix: "Change TP, PP or CP so their product divides the number of GPUs, or run on a multiple of that product.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const world = unit.gpus;
    const tp = tensorParallel(unit);
    const pp = knownInt(unit, "model.pipeline_model_parallel_size");
    const cp = contextParallel(unit);
    if (world === undefined || !tp || !pp || !cp || tp.value < 1 || pp.value < 1 || cp.value < 1) return [];
    const model = tp.value * pp.value * cp.value;
    if (world % model === 0) return [];
    const upstream =
      unit.kind === "mlm-launch"
        ? `Megatron-LM's argument check rejects it: ${quote(UPSTREAM.MLM_WORLD(world, model))}`
        : `Megatron-Core raises while building the process groups: ${quote(UPSTREAM.M5(world, model))}`;
    const message =
      `${unit.name} runs on ${world} GPUs, but ${describeResolution("model.tensor_model_parallel_size", tp.res)}, ` +
      `${describeResolution("model.pipeline_model_parallel_size", pp.res)} and ${describeResolution("model.context_parallel_size", cp.res)} ` +
      `need a multiple of TP × PP × CP = ${model} GPUs. ${upstream} Change TP, PP or CP, or the number of GPUs.`;
    return [
      reportAt(unit, undefined, message, {
        related: relatedAll(relatedTo(tp.setting, "tensor parallel size"), relatedTo(pp.setting, "pipeline parallel size"), relatedTo(cp.setting, "context parallel size")),
      }),
    ];
  },
});
