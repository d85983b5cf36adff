// The entry points that run a configuration, and what each does to the sequence length
// before Megatron-Bridge validates it (Bridge HEAD 067f987). Rules name the launcher that
// really runs the unit; the composition (analyze/compose.ts) applies its sync.
//
// - scripts/training/run_recipe.py runs library recipes (megatron.bridge.recipes) and, by
//   exact name, flat benchmark recipes too (recipe_runner.load_recipe). After the overrides,
//   recipe_runner.sync_model_dataset_sequence_length copies dataset.seq_length into
//   model.seq_length: the dataset owns the length (`-sl` sets dataset.seq_length).
// - scripts/performance/setup_experiment.py launches bootstrap.py, which replaces itself
//   with run_script.py for flat performance recipes (megatron.bridge.perf_recipes, resolved
//   from model, task, GPU count, GPU and precision). run_script applies Hydra overrides, then
//   argparse (utils/overrides.py set_user_overrides, argparse wins): `-sl` sets
//   model.seq_length, and with its default `--data mock` (and squad) the LLM dataset is
//   rebuilt at model.seq_length, so the two always agree.
// - With `--use_recipes`, bootstrap runs scripts/performance/run_recipe.py on a library
//   recipe instead: argparse first, Hydra last; the dataset is rebuilt at `--seq_length or
//   8192`, and model.seq_length is set only when `--seq_length` is given.
import type { ConfigUnit, LauncherId } from "../model/settings.ts";

export interface Launcher {
  id: LauncherId;
  /** The script that builds and validates the configuration. */
  script: string;
  /** How a user starts it, when that is another script. */
  startedBy?: string;
  /** What it does to model.seq_length and dataset.seq_length before validation. */
  seqLength: string;
}

const LAUNCHERS: Record<LauncherId, Launcher> = {
  training: {
    id: "training",
    script: "scripts/training/run_recipe.py",
    seqLength: "overwrites model.seq_length with dataset.seq_length after applying overrides",
  },
  performance: {
    id: "performance",
    script: "scripts/performance/run_script.py",
    startedBy: "scripts/performance/setup_experiment.py",
    seqLength: "rebuilds the dataset at model.seq_length (its default --data mock), after --seq_length sets the model's",
  },
  "performance-recipes": {
    id: "performance-recipes",
    script: "scripts/performance/run_recipe.py",
    startedBy: "scripts/performance/setup_experiment.py --use_recipes",
    seqLength: "rebuilds the dataset at --seq_length or 8192 and sets model.seq_length only when --seq_length is given",
  },
};

export function launcher(id: LauncherId): Launcher {
  return LAUNCHERS[id];
}

/** "scripts/performance/run_script.py (started by scripts/performance/setup_experiment.py)". */
export function launcherName(l: Launcher): string {
  return l.startedBy ? `${l.script} (started by ${l.startedBy})` : l.script;
}

/** Flat performance recipes live in perf_recipes/ (Bridge's megatron.bridge.perf_recipes package). */
export function isPerfRecipeFile(path: string): boolean {
  return /(?:^|\/)perf_recipes\//.test(path);
}

/**
 * The launcher that runs a unit: a launch line's own script; a recipe in perf_recipes/
 * the performance launcher; any other recipe or override file scripts/training/run_recipe.py.
 * Megatron-LM launch lines have none.
 */
export function launcherOf(unit: ConfigUnit): Launcher | undefined {
  if (unit.kind === "mlm-launch") return undefined;
  if (unit.launcher) return LAUNCHERS[unit.launcher];
  if (unit.kind === "recipe" && isPerfRecipeFile(unit.location.file)) return LAUNCHERS.performance;
  return LAUNCHERS.training;
}

/**
 * The launcher a launch line's script names. Both scripts/training/ and scripts/performance/
 * hold a run_recipe.py and a setup_experiment.py, so the folder decides; a bare name is the
 * training one unless the line uses the performance launcher's own flags.
 */
export function launcherOfScript(path: string, opts: { useRecipes: boolean; perfFlags: boolean }): LauncherId {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const perfFolder = /(?:^|\/)performance\/[^/]+$/.test(path);
  if (name === "run_script.py" || name === "bootstrap.py") return "performance";
  if (name === "run_recipe.py") return perfFolder ? "performance-recipes" : "training";
  if (name === "setup_experiment.py" && (perfFolder || (!/(?:^|\/)training\/[^/]+$/.test(path) && opts.perfFlags))) {
    return opts.useRecipes ? "performance-recipes" : "performance";
  }
  return "training";
}
