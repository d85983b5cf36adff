// A launch line names a recipe (`--recipe NAME`), and a recipe may start from a recipe of
// another module; when that base was analyzed too, the unit is judged on top of it.
// Launch lines through scripts/training/run_recipe.py also get what run_recipe does after
// applying overrides and before validating (HEAD 067f987 `recipe_runner.py`):
// sync_model_dataset_sequence_length copies dataset.seq_length into model.seq_length, and
// sync_finetuning_cp_invariants, in a fine-tuning mode over fine-tuning data with CP > 1,
// sets calculate_per_token_loss and clears average_in_collective. The rules judge what
// run_recipe validates; an override it throws away is kept in `discarded` for HCP008.
import { isFinetuningDataset } from "../model/dataset-types.ts";
import { known, type ConfigUnit, type Setting, type SettingKey } from "../model/settings.ts";
import type { SourceFile } from "../model/source.ts";

// `from megatron.bridge.recipes.llama.h100.llama3 import (x_h100_config as x_config,)`:
// the compatibility modules that keep legacy recipe names alive (docs/domain.md 1.1).
// Matched only around the few places that can hold one (found with indexOf: a regex over
// every module costs more than the rest of the composition).
const ALIAS_IMPORT = /([A-Za-z_][A-Za-z0-9_]*_config)\s+as\s+([A-Za-z_][A-Za-z0-9_]*_config)\b/y;
const ALIAS_ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*_config)\s*=\s*([A-Za-z_][A-Za-z0-9_]*_config)\s*$/gm;

function isIdentifierChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function importAliases(text: string, into: Map<string, string>): void {
  for (let at = text.indexOf("_config as "); at >= 0; at = text.indexOf("_config as ", at + 11)) {
    let start = at;
    while (start > 0 && isIdentifierChar(text.charCodeAt(start - 1))) start--;
    ALIAS_IMPORT.lastIndex = start;
    const m = ALIAS_IMPORT.exec(text);
    if (m) into.set(m[2]!, m[1]!);
  }
}

/** Legacy recipe name -> current name, read from Python files' import aliases. */
export function recipeAliases(files: readonly SourceFile[]): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const f of files) {
    if (!f.path.endsWith(".py")) continue;
    importAliases(f.text, aliases);
    // `legacy_config = current_config` at module level: rare, so only files that could hold one are scanned.
    if (f.text.includes("_config = ") && f.text.length < 200_000) for (const m of f.text.matchAll(ALIAS_ASSIGN)) aliases.set(m[1]!, m[2]!);
  }
  return aliases;
}

/** Recipe units by name, following aliases; a name defined twice is ambiguous and skipped. */
export function recipeIndex(units: readonly ConfigUnit[], aliases: Map<string, string>): (name: string) => ConfigUnit | undefined {
  const byName = new Map<string, ConfigUnit | null>();
  for (const u of units) {
    if (u.kind !== "recipe") continue;
    byName.set(u.name, byName.has(u.name) ? null : u);
  }
  return (name) => {
    let current = name;
    for (let hops = 0; hops < 5; hops++) {
      const hit = byName.get(current);
      if (hit) return hit;
      const next = aliases.get(current);
      if (!next) return undefined;
      current = next;
    }
    return undefined;
  };
}

/**
 * The unit judged on top of its base. Base settings become non-local (a fix for this unit
 * goes into the unit, not into the shared base); the unit's own anchors receive new settings.
 */
export function applyOver(base: ConfigUnit, unit: ConfigUnit): ConfigUnit {
  const inherited: ConfigUnit["settings"] = {};
  for (const [key, setting] of Object.entries(base.settings) as [SettingKey, Setting][]) {
    inherited[key] = { ...setting, local: false, origin: { ...setting.origin, via: setting.origin.via ?? `recipe ${base.name}` } };
  }
  const merged: ConfigUnit = {
    ...unit,
    name: unit.kind === "recipe" ? unit.name : `${unit.name} on ${base.name}`,
    settings: { ...inherited, ...unit.settings },
    anchors: { ...unit.anchors },
    // run_recipe takes the mode from --mode or from the name on the command line, not from the recipe.
    mode: unit.mode,
    gpus: unit.gpus ?? base.gpus,
    nvlinkDomain: unit.nvlinkDomain ?? base.nvlinkDomain,
    complete: base.complete,
    notes: [...unit.notes],
  };
  const datasetType = unit.datasetType ?? base.datasetType;
  if (datasetType !== undefined) merged.datasetType = datasetType;
  const datasetBases = unit.datasetType !== undefined ? unit.datasetBases : base.datasetBases;
  if (datasetBases !== undefined) merged.datasetBases = datasetBases;
  else delete merged.datasetBases;
  const modelBuilder = unit.modelBuilder ?? base.modelBuilder;
  if (modelBuilder !== undefined) merged.modelBuilder = modelBuilder;
  // The launch line cannot change the class the recipe built cfg.model with.
  if (base.modelClass !== undefined && modelBuilder === undefined) merged.modelClass = base.modelClass;
  else delete merged.modelClass;
  if (merged.gpus === undefined) delete merged.gpus;
  if (merged.nvlinkDomain === undefined) delete merged.nvlinkDomain;
  return unit.kind === "launch" ? withLauncherSync(merged) : merged;
}

/**
 * What the launch line's own launcher does to the sequence lengths (rules/launchers.ts):
 * scripts/training/run_recipe.py syncs the model from the dataset; the performance launchers
 * rebuild the dataset (Bridge HEAD 067f987 scripts/performance/).
 */
export function withLauncherSync(unit: ConfigUnit): ConfigUnit {
  if (unit.launcher === "performance") return withRunScriptSync(unit);
  if (unit.launcher === "performance-recipes") return withPerfRunRecipeSync(unit);
  return withRunRecipeSync(unit);
}

/** Hydra overrides (`dataset.seq_length=...`) as opposed to the argparse flag `-sl`. */
const fromFlag = (s: Setting | undefined): boolean => s?.origin.kind === "cli-flag";

/**
 * scripts/performance/run_script.py on a flat perf recipe: Hydra, then argparse (`-sl` sets
 * model.seq_length, utils/overrides.py set_user_overrides), then the dataset is rebuilt at
 * model.seq_length (`--data mock`, the default), so the two agree whatever the recipe said.
 */
function withRunScriptSync(unit: ConfigUnit): ConfigUnit {
  const settings = { ...unit.settings };
  const flag = settings["dataset.seq_length"];
  if (flag && fromFlag(flag)) settings["model.seq_length"] = { ...flag, key: "model.seq_length" };
  const model = settings["model.seq_length"];
  if (model) settings["dataset.seq_length"] = { ...model, key: "dataset.seq_length", local: false, origin: { ...model.origin, via: "run_script.py rebuilds the dataset at model.seq_length" } };
  return { ...unit, settings };
}

/** scripts/performance/run_recipe.py's dataset length when `--seq_length` is not given (run_recipe.py:99). */
export const PERF_RUN_RECIPE_SEQ_LENGTH = 8192;

/**
 * scripts/performance/run_recipe.py (setup_experiment.py --use_recipes) on a library recipe:
 * argparse first, Hydra last (_apply_recipe_overrides). The dataset is replaced by a mock one
 * at `--seq_length or 8192` (run_recipe.py:97-99), and model.seq_length is set only when
 * `--seq_length` is given (run_recipe.py:164-165). A recipe whose model.seq_length is not 8192,
 * launched without -sl, then fails ConfigContainer.validate.
 */
function withPerfRunRecipeSync(unit: ConfigUnit): ConfigUnit {
  const settings = { ...unit.settings };
  const dataset = settings["dataset.seq_length"];
  if (dataset && fromFlag(dataset)) {
    // -sl sets both; a Hydra model.seq_length override (applied after) wins over it.
    if (!(settings["model.seq_length"]?.origin.kind === "hydra-override")) settings["model.seq_length"] = { ...dataset, key: "model.seq_length" };
  } else if (!dataset || !dataset.local) {
    const text = String(PERF_RUN_RECIPE_SEQ_LENGTH);
    settings["dataset.seq_length"] = {
      key: "dataset.seq_length",
      value: known(PERF_RUN_RECIPE_SEQ_LENGTH),
      origin: { kind: "cli-flag", location: unit.location, text, syntax: "hydra", via: "scripts/performance/run_recipe.py's mock dataset at --seq_length or 8192, no --seq_length given" },
      local: false,
      site: unit.location,
    };
  }
  return { ...unit, settings };
}

/** What run_recipe does to the configuration after the overrides, before validation. */
export function withRunRecipeSync(unit: ConfigUnit): ConfigUnit {
  const settings = { ...unit.settings };
  const dataset = settings["dataset.seq_length"];
  const model = settings["model.seq_length"];
  const discarded = [...(unit.discarded ?? [])];
  // sync_model_dataset_sequence_length: the model takes the dataset's length (every dataset
  // config has one). An override of model.seq_length alone never reaches validation.
  if (model?.local && !dataset?.local) {
    discarded.push(model);
    delete settings["model.seq_length"];
  }
  if (dataset) {
    settings["model.seq_length"] = {
      ...dataset,
      key: "model.seq_length",
      local: false,
      origin: { ...dataset.origin, via: "run_recipe copies dataset.seq_length into model.seq_length" },
    };
  }
  // sync_finetuning_cp_invariants: fine-tuning data with CP > 1 gets per-token loss and no
  // averaging in the collective, whatever the recipe said.
  const cp = settings["model.context_parallel_size"];
  const cpAboveOne = cp?.value.known === true && typeof cp.value.value === "number" && cp.value.value > 1;
  if ((unit.mode === "sft" || unit.mode === "peft") && isFinetuningDataset(unit) && cpAboveOne) {
    delete settings["model.calculate_per_token_loss"];
    delete settings["ddp.average_in_collective"];
  }
  return discarded.length > 0 ? { ...unit, settings, discarded } : { ...unit, settings };
}

/**
 * Every unit with an analyzed base (a launch line's recipe, a recipe's base recipe from
 * another module) is replaced by the unit over its base; bases chain (a recipe of a recipe).
 */
export function composeUnits(units: readonly ConfigUnit[], files: readonly SourceFile[], upstreamBase?: (u: ConfigUnit) => ConfigUnit | undefined): ConfigUnit[] {
  // A launch line whose recipe was not analyzed still gets run_recipe's sync on what it sets.
  const synced = (u: ConfigUnit): ConfigUnit => (u.kind === "launch" ? withLauncherSync(u) : u);
  if (!units.some((u) => u.baseRecipe)) return units.map(synced);
  const find = recipeIndex(units, recipeAliases(files));
  const resolved = new Map<ConfigUnit, ConfigUnit>();
  const resolving = new Set<ConfigUnit>();
  const resolveUnit = (u: ConfigUnit): ConfigUnit => {
    const done = resolved.get(u);
    if (done) return done;
    if (!u.baseRecipe || resolving.has(u)) return u; // a cycle is judged as written
    resolving.add(u);
    // An analyzed recipe of that name first; an upstream recipe's stand-in (an index) only when none is.
    const analyzed = find(u.baseRecipe);
    const base = analyzed ?? upstreamBase?.(u);
    const result = base && base !== u ? applyOver(analyzed ? resolveUnit(base) : base, analyzed ? u : withoutOpaqueDataset(u)) : u;
    resolving.delete(u);
    resolved.set(u, result);
    return result;
  };
  return units.map((u) => {
    const r = resolveUnit(u);
    return r === u ? synced(u) : r;
  });
}

/** `cfg = recipe()` left cfg.dataset as "recipe().dataset"; over the recipe's stand-in, its own dataset type counts. */
function withoutOpaqueDataset(u: ConfigUnit): ConfigUnit {
  if (u.datasetType !== `${u.baseRecipe}().dataset`) return u;
  const { datasetType: _opaque, ...rest } = u;
  return rest;
}
