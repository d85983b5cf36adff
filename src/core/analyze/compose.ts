// Launch lines name a recipe (`--recipe NAME`); when that recipe was analyzed too, the
// launch line's overrides apply on top of it and the result is judged as one unit.
import type { ConfigUnit, Setting } from "../model/settings.ts";
import type { SourceFile } from "../model/source.ts";

// `from megatron.bridge.recipes.llama.h100.llama3 import (x_h100_config as x_config,)`:
// the compatibility modules that keep legacy recipe names alive (HCP-RULES 1.1).
const ALIAS_IMPORT = /\b([A-Za-z_][A-Za-z0-9_]*_config)\s+as\s+([A-Za-z_][A-Za-z0-9_]*_config)\b/g;
const ALIAS_ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*_config)\s*=\s*([A-Za-z_][A-Za-z0-9_]*_config)\s*$/gm;

/** Legacy recipe name -> current name, read from Python files' import aliases. */
export function recipeAliases(files: readonly SourceFile[]): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const f of files) {
    if (!f.path.endsWith(".py") || !f.text.includes("_config")) continue;
    for (const m of f.text.matchAll(ALIAS_IMPORT)) aliases.set(m[2]!, m[1]!);
    for (const m of f.text.matchAll(ALIAS_ASSIGN)) aliases.set(m[1]!, m[2]!);
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
 * The effective unit of a launch line over its recipe. Recipe settings become non-local
 * (a fix for this launch goes on the launch line, not into the shared recipe); the
 * launch line's anchors receive new settings.
 */
export function applyLaunch(recipe: ConfigUnit, launch: ConfigUnit): ConfigUnit {
  const inherited: ConfigUnit["settings"] = {};
  for (const [key, setting] of Object.entries(recipe.settings) as [keyof ConfigUnit["settings"], Setting][]) {
    inherited[key] = {
      ...setting,
      local: false,
      origin: { ...setting.origin, via: setting.origin.via ?? `recipe ${recipe.name}` },
    };
  }
  return {
    ...launch,
    name: `${launch.name} on ${recipe.name}`,
    settings: { ...inherited, ...launch.settings },
    anchors: { ...launch.anchors },
    mode: launch.mode !== "unknown" ? launch.mode : recipe.mode,
    gpus: launch.gpus ?? recipe.gpus,
    complete: recipe.complete,
    notes: [...launch.notes],
  };
}
