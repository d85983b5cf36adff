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
      "pipeline_model_parallel_size × context_parallel_size; with the pipeline size unknown, when TP × CP does not divide " +
      "the world (then no pipeline size can). A GPU count in a recipe's name is not a world size (nothing is " +
      "judged from names), nor is a perf workload's num_gpus (\"for representation purposes only\", WorkloadBaseConfig).",
    why:
      "Megatron-Bridge stops first, in ConfigContainer.validate (training/config.py:1427 calls get_data_parallel_size, " +
      "whose assertion at config.py:1024 at 067f987 reads \"world size (4) is not divisible by total_model_size (...)\"). " +
      `Past it, Megatron-Core would refuse the layout while building the process groups: RuntimeError ${quote(UPSTREAM.M5(4, 8))} ` +
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
    if (world === undefined || !tp || !cp || tp.value < 1 || cp.value < 1) return [];
    if (!pp) return noPipelineSizeFits(unit, world, tp, cp);
    if (pp.value < 1) return [];
    const model = tp.value * pp.value * cp.value;
    if (world % model === 0) return [];
    const upstream =
      unit.kind === "mlm-launch"
        ? `Megatron-LM's argument check rejects it: ${quote(UPSTREAM.MLM_WORLD(world, model))}`
        : `Megatron-Bridge's config validation asserts first: "world size (${world}) is not divisible by total_model_size" ` +
          `(training/config.py get_data_parallel_size), before Megatron-Core's ${quote(UPSTREAM.M5(world, model))}`;
    const message =
      `${unit.name} runs on ${world} GPUs, but ${describeResolution("model.tensor_model_parallel_size", tp.res)}, ` +
      `${describeResolution("model.pipeline_model_parallel_size", pp.res)} and ${describeResolution("model.context_parallel_size", cp.res)} ` +
      `need a multiple of TP × PP × CP = ${model} GPUs. ${upstream} Change TP, PP or CP, or the number of GPUs.`;
    return [
      reportAt(unit, undefined, message, {
        summary: `${world} GPUs is not a multiple of TP × PP × CP = ${tp.value} × ${pp.value} × ${cp.value} = ${model}: change TP, PP or CP, or the GPUs`,
        related: relatedAll(relatedTo(tp.setting, "tensor parallel size"), relatedTo(pp.setting, "pipeline parallel size"), relatedTo(cp.setting, "context parallel size")),
      }),
    ];
  },
});

type Known = NonNullable<ReturnType<typeof tensorParallel>>;

// PP unknown: TP × PP × CP divides the world only if TP × CP does, so when TP × CP does not,
// no pipeline size can fix it and the layout fails whatever PP turns out to be.
function noPipelineSizeFits(unit: ConfigUnit, world: number, tp: Known, cp: Known): RuleReport[] {
  const tpcp = tp.value * cp.value;
  if (world % tpcp === 0) return [];
  const message =
    `${unit.name} runs on ${world} GPUs, but ${describeResolution("model.tensor_model_parallel_size", tp.res)} and ` +
    `${describeResolution("model.context_parallel_size", cp.res)}: TP × CP = ${tpcp} does not divide ${world}, so no ` +
    "pipeline_model_parallel_size makes TP × PP × CP divide it (the pipeline size is not known here). Megatron-Bridge's " +
    `config validation asserts "world size (${world}) is not divisible by total_model_size" (training/config.py ` +
    "get_data_parallel_size). Change TP or CP, or the number of GPUs.";
  const summary = `${world} GPUs, but TP × CP = ${tpcp} does not divide ${world}, so no pipeline size fits: change TP or CP, or the GPUs`;
  return [reportAt(unit, undefined, message, { summary, related: relatedAll(relatedTo(tp.setting, "tensor parallel size"), relatedTo(cp.setting, "context parallel size")) })];
}
