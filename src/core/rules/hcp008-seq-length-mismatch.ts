// HCP008: model.seq_length and dataset.seq_length disagree, or an override changes only the model's.
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Setting } from "../model/settings.ts";
import { resolve, valueOf, type Resolution } from "./effective.ts";
import { defineRule, describe, describeResolution, editFor, fixOf, relatedTo, repr, reportAt } from "./report.ts";
import { launcher, launcherName, launcherOf } from "./launchers.ts";
import { UPSTREAM, quote } from "./upstream.ts";

export const rule = defineRule({
  id: "HCP008",
  name: "seq-length-mismatch",
  severity: "error",
  summary: "model.seq_length differs from dataset.seq_length",
  doc: {
    checks:
      "model.seq_length differs from dataset.seq_length (error), or a YAML/Hydra override changes model.seq_length " +
      "without dataset.seq_length (warning).",
    why:
      `ConfigContainer.validate rejects a mismatch: ${quote(UPSTREAM.B8("16384", "8192"))} scripts/training/run_recipe.py ` +
      "overwrites model.seq_length with dataset.seq_length after applying overrides, so an override of only " +
      "model.seq_length is silently discarded, and the CP divisibility you checked is not the one that runs. Flat performance " +
      "recipes (perf_recipes/) run through scripts/performance/setup_experiment.py, whose run_script.py rebuilds the dataset at " +
      "model.seq_length (utils/overrides.py set_user_overrides, default --data mock): a mismatch there is a warning, since only " +
      "other ways of running the recipe (run_recipe.py by exact name, pretrain(cfg)) meet it. A derived recipe's mismatch is " +
      "reported in the derived recipe, at the line that produced it, not in the base recipe it starts from. A launch line " +
      "through scripts/performance/setup_experiment.py --use_recipes runs scripts/performance/run_recipe.py, which replaces the " +
      "dataset with a mock one at `--seq_length or 8192` (run_recipe.py:97-99 at HEAD 067f987) and sets model.seq_length only " +
      "when --seq_length is given (run_recipe.py:164-165): a library recipe whose model.seq_length is not 8192, launched " +
      "without -sl, fails validation (error, on the launch line).",
    example: "run_recipe.py --recipe llama3_8b_pretrain_config model.seq_length=16384",
    fix: "Set dataset.seq_length (run_recipe syncs the model from it), or set both to the same value.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    // run_recipe threw the launch line's model.seq_length away (see compose.ts): say so.
    const discarded = unit.discarded?.find((s) => s.key === "model.seq_length");
    if (discarded) {
      const datasetRes = resolve(unit, "dataset.seq_length");
      if (discarded.value.known && valueOf(datasetRes) === discarded.value.value) return [];
      return [overrideOnlyModel(unit, discarded, datasetRes)];
    }
    const model = unit.settings["model.seq_length"];
    if (!model) return [];
    const datasetRes = resolve(unit, "dataset.seq_length");
    const dataset = unit.settings["dataset.seq_length"];
    const modelValue = model.value.known ? model.value.value : undefined;
    const datasetValue = valueOf(datasetRes);

    if (overridesOnlyModel(unit, model, dataset)) {
      if (modelValue !== undefined && datasetValue === modelValue) return [];
      return [overrideOnlyModel(unit, model, datasetRes)];
    }
    if (!dataset || modelValue === undefined || datasetValue === undefined || modelValue === datasetValue) return [];
    const b8 = quote(UPSTREAM.B8(repr(modelValue), repr(datasetValue)));
    const perf = unit.kind === "recipe" ? launcherOf(unit) : undefined;
    const perfLine = unit.kind === "launch" && unit.launcher === "performance-recipes" ? launcher("performance-recipes") : undefined;
    const message = perfLine
      ? `${describe(model)} but ${describe(dataset)}: ${launcherName(perfLine)} ${perfLine.seqLength}, so this launch line ` +
        `builds a ${repr(datasetValue)}-token dataset for a ${repr(modelValue)}-token model, and Megatron-Bridge rejects the mismatch: ${b8}. ` +
        `Pass -sl ${repr(modelValue)} (it sets both), or set dataset.seq_length = ${repr(modelValue)}.`
      : perf?.id === "performance"
        ? `${describe(model)} but ${describe(dataset)}. Megatron-Bridge rejects the mismatch when this configuration runs as built ` +
          `(pretrain(cfg)): ${b8}. ${launcherName(perf)}, which runs perf_recipes, ${perf.seqLength}, so a benchmark trains at ` +
          `${repr(modelValue)}; ${launcher("training").script}, which also runs benchmark recipes by exact name, instead ` +
          `overwrites model.seq_length with ${repr(datasetValue)}. Set dataset.seq_length = ${repr(modelValue)} to match (or set both).`
        : `${describe(model)} but ${describe(dataset)}. Megatron-Bridge rejects the mismatch: ${b8}; ` +
          `${launcher("training").script} instead overwrites model.seq_length with ${repr(datasetValue)}. ` +
          `Set dataset.seq_length = ${repr(modelValue)} to match (or set both).`;
    const fix = fixOf(`Set dataset.seq_length to ${repr(modelValue)}`, [editFor(unit, "dataset.seq_length", modelValue)]);
    const summary =
      `model.seq_length ${repr(modelValue)} but dataset.seq_length ${repr(datasetValue)}; ` +
      (perfLine ? `pass -sl ${repr(modelValue)}, or set dataset.seq_length to ${repr(modelValue)}` : `set dataset.seq_length to ${repr(modelValue)}`);
    return [
      reportAt(unit, dataset, message, {
        summary,
        fix,
        related: relatedTo(model, "model sequence length"),
        involved: [model],
        // Its own launcher reconciles the two; only other ways of running it see the mismatch.
        ...(perf?.id === "performance" ? { severity: "warning" as const } : {}),
      }),
    ];
  },
});

/**
 * An override file that writes model.seq_length itself but leaves dataset.seq_length to the
 * recipe. (Launch lines arrive with the override already in `discarded`; Megatron-LM has a
 * single --seq-length, so there is no dataset value to forget.)
 */
function overridesOnlyModel(unit: ConfigUnit, model: Setting, dataset: Setting | undefined): boolean {
  if (unit.kind !== "yaml") return false;
  return model.local && !dataset?.local;
}

function overrideOnlyModel(unit: ConfigUnit, model: Setting, datasetRes: Resolution): RuleReport {
  const value = model.value.known ? model.value.value : undefined;
  const datasetValue = valueOf(datasetRes);
  const b8 = UPSTREAM.B8(value !== undefined ? repr(value) : "…", datasetValue !== undefined ? repr(datasetValue) : "…");
  const message =
    `${describe(model)} is overridden here but dataset.seq_length is not ` +
    `(${describeResolution("dataset.seq_length", datasetRes)}). ${launcher("training").script} ${launcher("training").seqLength}, ` +
    "so this override is silently discarded; " +
    `entry points that do not sync fail ConfigContainer.validate: ${quote(b8)}. ` +
    `Override dataset.seq_length${value !== undefined ? ` = ${repr(value)}` : ""} as well.`;
  const fix =
    value !== undefined ? fixOf(`Set dataset.seq_length to ${repr(value)}`, [editFor(unit, "dataset.seq_length", value)]) : undefined;
  const summary =
    `model.seq_length${value !== undefined ? ` ${repr(value)}` : ""} is overridden without dataset.seq_length` +
    `${datasetValue !== undefined ? ` (${repr(datasetValue)})` : ""}, so it is discarded; set dataset.seq_length${value !== undefined ? ` = ${repr(value)}` : ""} too`;
  return reportAt(unit, model, message, { summary, severity: "warning", fix });
}
