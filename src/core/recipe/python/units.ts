// Which parts of a module are configuration units, and their effective settings.
import { location, pointLocation, type Location } from "../../model/source.ts";
import {
  runRecipeMode,
  SECTIONS,
  type Anchor,
  type ConfigUnit,
  type Section,
  type Setting,
  type SettingKey,
} from "../../model/settings.ts";
import type { Diagnostic } from "../types.ts";
import { domainFromEnv, domainSizeOf } from "../../analyze/hardware.ts";
import { BudgetExceeded, Evaluator, FILE_STEP_BUDGET, FileBudgetExceeded, type EvalNote, type Frame } from "./evaluator.ts";
import type { Status } from "./eval/machine.ts";
import { FLAT_FIELD_KEYS, modelFieldKey, PACKING_SPEC_FIELDS, PARAMETER_KEYS, sectionFieldKey } from "./keys.ts";
import type { ModuleLibrary } from "./library.ts";
import { scanImports } from "./imports.ts";
import { itemAt, type ClassDef, type ConstDef, type FnDef, type ModuleInfo } from "./module.ts";
import { named, textOf, type PyNode } from "./tree.ts";
import { toValue, unk, type ObjV, type V } from "./values.ts";

type Range = { s: number; e: number };
type Notes = ConfigUnit["notes"];

const PROVIDER_CLASS = /Provider|TransformerConfig|ModelConfig|ModelParallelConfig/;
const WORKLOAD_CTOR = /(?:^|\.)\w*Workload\w*Config$/;

export function extractUnits(mod: ModuleInfo, library?: ModuleLibrary): { units: ConfigUnit[]; diagnostics: Diagnostic[] } {
  const ev = new Evaluator(mod, library);
  const out = { units: [] as ConfigUnit[], diagnostics: [] as Diagnostic[] };
  try {
    for (const fn of mod.fns.values()) {
      if (isRecipeFunction(mod, fn)) isolate(mod, out, fn.nameNode, () => recipeUnit(mod, ev, fn));
      else if (mayBuildConfig(mod, fn)) isolate(mod, out, fn.nameNode, () => scriptFunctionUnit(mod, ev, fn));
    }
    const script = scriptStatements(mod);
    if (script.length > 0) isolate(mod, out, script[0]!, () => moduleUnit(mod, ev, script));
    for (const def of mod.consts.values()) if (def && isWorkloadConstant(mod, def)) isolate(mod, out, def.target, () => workloadUnit(mod, ev, def));
    for (const cls of mod.classes.values()) isolate(mod, out, cls.nameNode, () => providerUnit(mod, ev, cls));
  } catch (error) {
    if (!(error instanceof FileBudgetExceeded)) throw error;
    // Past the file's bound nothing more is read; what was read stays, and the file is not called analyzed.
    out.diagnostics.push({
      file: mod.path,
      severity: "warning",
      code: "too-complex",
      message: `not analyzed: the file needs more evaluation than the analyzer does for one file (${FILE_STEP_BUDGET} evaluation steps; ${out.units.length} configuration(s) read before it stopped)`,
    });
  }
  return out;
}

/** One unit's failure is reported at that unit and does not cost the rest of the file. */
function isolate(mod: ModuleInfo, out: { units: ConfigUnit[]; diagnostics: Diagnostic[] }, at: PyNode, make: () => ConfigUnit | null): void {
  try {
    const unit = make();
    if (unit) out.units.push(unit);
  } catch (error) {
    if (error instanceof FileBudgetExceeded) throw error;
    const message = error instanceof Error ? error.message : String(error);
    out.diagnostics.push({
      file: mod.path,
      severity: "warning",
      code: "unsupported",
      message: `${textOf(mod.text, at)} was not analyzed: ${message}`,
      location: loc(mod, at),
    });
  }
}

/** Public top-level builders of a ConfigContainer; `_helpers` are only evaluated when called. */
export function isRecipeName(name: string): boolean {
  return !name.startsWith("_") && name.endsWith("_config");
}

function isRecipeFunction(mod: ModuleInfo, fn: FnDef): boolean {
  if (fn.name.startsWith("_") || fn.outer.err) return false;
  if (fn.name.endsWith("_config")) return true;
  // `-> ConfigContainer` alone also matches helpers that take a config and change it
  // (`apply_dataset_override(config, ...)`); a recipe can be called without arguments.
  const annotated = fn.returns !== null && /\bConfigContainer\b/.test(textOf(mod.text, fn.returns));
  return annotated && fn.params.every((p) => p.star !== 0 || p.def !== null);
}

// ---------------------------------------------------------------- users' own scripts
//
// A training script starts from a recipe (`cfg = llama3_8b_pretrain_config()`), changes it and
// hands it to `pretrain(cfg, forward_step)`, at module level, under `if __name__ == "__main__":`
// or in a helper (`def build(): ...`, `def main(): ... pretrain(cfg, ...)`) with no
// `-> ConfigContainer` annotation. Such code is evaluated like a recipe; it becomes a unit only
// when it really holds a ConfigContainer (a recipe's result or ConfigContainer(...)).

/** Text that builds a ConfigContainer: a constructor or a call of a recipe (`*_config(`). */
const BUILDS_CONFIG = /\bConfigContainer\s*\(|\b[A-Za-z]\w*_config\s*\(/;

function mayBuildConfig(mod: ModuleInfo, fn: FnDef): boolean {
  if (fn.outer.err || !fn.params.every((p) => p.star !== 0 || p.def !== null)) return false;
  return BUILDS_CONFIG.test(mod.text.slice(fn.body.s, fn.body.e));
}

/** Top-level statements that are not definitions, with `if __name__ == "__main__":` bodies in place. */
function scriptStatements(mod: ModuleInfo): PyNode[] {
  const out: PyNode[] = [];
  for (const stmt of mod.root.c) {
    if (stmt.t === "expression_statement") out.push(stmt);
    else if (stmt.t === "if_statement" && isMainGuard(mod, stmt)) {
      const body = stmt.c.find((c) => c.t === "block");
      if (body) out.push(...body.c);
    }
  }
  return out.some((s) => BUILDS_CONFIG.test(mod.text.slice(s.s, s.e))) ? out : [];
}

function isMainGuard(mod: ModuleInfo, stmt: PyNode): boolean {
  const cond = named(stmt)[0];
  return cond !== undefined && /^__name__\s*==\s*["']__main__["']$|^["']__main__["']\s*==\s*__name__$/.test(textOf(mod.text, cond).trim());
}

/** The ConfigContainer a unit built: what it returns, else the last variable that holds one. */
function configOf(frame: Frame): { value: ObjV; name: string | null } | null {
  if (frame.ret?.k === "obj" && isConfig(frame.ret)) return { value: frame.ret, name: null };
  let found: { value: ObjV; name: string | null } | null = null;
  for (const [name, v] of frame.vars) if (v.k === "obj" && isConfig(v)) found = { value: v, name };
  return found;
}

function isConfig(v: ObjV): boolean {
  return /(?:^|\.)ConfigContainer$/.test(v.ctor) || unanalyzedBaseRecipe(v) !== undefined;
}

function scriptFunctionUnit(mod: ModuleInfo, ev: Evaluator, fn: FnDef): ConfigUnit | null {
  return configUnit(mod, ev, { name: fn.name, nameNode: fn.nameNode, range: fn.outer, fn, run: () => ev.runUnitFunction(fn) });
}

function moduleUnit(mod: ModuleInfo, ev: Evaluator, stmts: PyNode[]): ConfigUnit | null {
  const first = stmts[0]!;
  const last = stmts[stmts.length - 1]!;
  const name = `${mod.path.slice(mod.path.lastIndexOf("/") + 1)} (module level)`;
  return configUnit(mod, ev, { name, nameNode: first, range: { s: first.s, e: last.e }, fn: null, run: () => ev.runStatements(stmts) });
}

// ---------------------------------------------------------------- recipe functions

function recipeUnit(mod: ModuleInfo, ev: Evaluator, fn: FnDef): ConfigUnit {
  return configUnit(mod, ev, { name: fn.name, nameNode: fn.nameNode, range: fn.outer, fn, run: () => ev.runUnitFunction(fn), returnedOnly: true }) as ConfigUnit;
}

interface UnitSource {
  name: string;
  nameNode: PyNode;
  range: Range;
  /** The function, for its parameters and the anchors of fixes; null at module level. */
  fn: FnDef | null;
  run: () => { frame: Frame; status: Status };
  /** A recipe function is a unit whatever it returns; a script only when it holds a ConfigContainer. */
  returnedOnly?: boolean;
}

function configUnit(mod: ModuleInfo, ev: Evaluator, src: UnitSource): ConfigUnit | null {
  const { name, nameNode, fn } = src;
  ev.reset();
  const unitRange = src.range;
  const values = new Map<SettingKey, V>();
  const extraNotes: EvalNote[] = [];
  let frame: Frame | null = null;
  let dataset: ObjV | null = null;
  let datasetType: string | undefined;
  let modelBuilder: string | undefined;
  let modelClass: string | undefined;
  let baseRecipe: string | undefined;
  let baseCall: ObjV | undefined;
  let nvlinkDomain: ConfigUnit["nvlinkDomain"];
  let handedTo: string | undefined;
  try {
    const run = src.run();
    frame = run.frame;
    let result: V | null = run.status === "return" ? run.frame.ret : null;
    if (!src.returnedOnly) {
      const found = run.status === "raise" ? null : configOf(run.frame);
      if (!found) return null;
      result = found.value;
    }
    if (run.status === "raise") extraNotes.push({ message: `${name}() always raises; no settings read`, s: nameNode.s, e: nameNode.e });
    if (result?.k === "obj") {
      baseRecipe = unanalyzedBaseRecipe(result);
      if (baseRecipe) baseCall = result;
      flattenConfig(result, values);
      const d = result.fields.get("dataset");
      dataset = d?.k === "obj" ? d : null;
      modelBuilder = modelBuilderOf(result.fields.get("model"));
      modelClass = modelClassOf(result.fields.get("model"));
      nvlinkDomain = statedDomain(mod, result.fields.get("env_vars"), unitRange);
      // Never touched: the dataset is the one the unanalyzed builder made (`_sft_common().dataset`).
      if (!d && result.opaque !== null) datasetType = `${result.ctor}.dataset`;
    }
    if (result?.k === "obj" && handedSettings(result, values).length > 0) handedTo = result.ctor;
    // Pre-Nov-2025 recipes pass `context_parallelism=` and friends on to code we may not see.
    for (const p of fn?.params ?? []) {
      const key = PARAMETER_KEYS.get(p.name);
      if (!key || values.has(key)) continue;
      const v = ev.parameterDefault(p);
      if (v) values.set(key, v);
    }
  } catch (error) {
    if (!(error instanceof BudgetExceeded)) throw error;
    values.clear();
    if (!src.returnedOnly) return null;
    extraNotes.push({ message: `${name}() needs too much evaluation; its settings are not read`, s: nameNode.s, e: nameNode.e });
  }
  const notes = collectNotes(mod, [...ev.notes, ...extraNotes]);
  const settings = toSettings(mod, values, unitRange, notes);
  // A script that only calls a recipe of this file adds nothing to that recipe's own unit.
  if (!src.returnedOnly && baseRecipe === undefined && !Object.values(settings).some((s) => s.local)) return null;
  return {
    id: `${mod.path}::${name}`,
    kind: "recipe",
    name,
    location: loc(mod, nameNode),
    settings,
    anchors: frame && fn ? recipeAnchors(mod, fn, frame) : {},
    // A script is run in the mode of the recipe it starts from.
    mode: runRecipeMode(src.returnedOnly ? name : (baseRecipe ?? name)),
    ...((dataset?.ctor ?? datasetType) ? { datasetType: dataset?.ctor ?? datasetType } : {}),
    ...(dataset?.bases ? { datasetBases: dataset.bases } : {}),
    ...(modelBuilder !== undefined && baseRecipe === undefined ? { modelBuilder } : {}),
    ...(modelClass !== undefined && baseRecipe === undefined ? { modelClass } : {}),
    // Built on a recipe of another module, or by a builder we did not see that takes parallel settings:
    // that code may set what this one leaves unset.
    complete: baseRecipe === undefined && handedTo === undefined,
    ...(nvlinkDomain ? { nvlinkDomain } : {}),
    ...(baseRecipe ? { baseRecipe } : {}),
    ...(baseRecipe && baseCall ? { upstreamBase: upstreamBaseOf(mod, baseRecipe, baseCall) } : {}),
    notes,
  };
}

/**
 * The base recipe as upstream names it, when the module imports it from megatron.bridge
 * (`from megatron.bridge.recipes.llama import llama3_8b_pretrain_config`): only then may an
 * index of upstream recipes stand in for it. A name from anywhere else stays unknown.
 */
function upstreamBaseOf(mod: ModuleInfo, local: string, call: ObjV): ConfigUnit["upstreamBase"] {
  const binding = scanImports(mod.text).names.get(local);
  if (!binding || binding.level !== 0 || !/^megatron\.bridge(?:\.|$)/.test(binding.module) || call.o.mod) return undefined;
  return {
    name: binding.name ?? local,
    module: binding.module,
    // The index describes the recipe called without arguments; `qwen2_7b_peft_config(peft_scheme="dora")` is another configuration.
    plainCall: /\(\s*\)$/.test(mod.text.slice(call.o.s, call.o.e)),
    at: location(mod.path, mod.index, call.o.s, call.o.e),
  };
}

/** `cfg = llama3_8b_pretrain_config()` imported from elsewhere: the recipe's name. */
function unanalyzedBaseRecipe(cfg: ObjV): string | undefined {
  if (cfg.opaque === null) return undefined;
  const m = /([A-Za-z_]\w*)\(\)$/.exec(cfg.ctor);
  return m && m[1] && isRecipeName(m[1]) ? m[1] : undefined;
}

function flattenConfig(cfg: ObjV, out: Map<SettingKey, V>): void {
  for (const section of SECTIONS) {
    const value = cfg.fields.get(section);
    if (value?.k === "obj") flattenSection(section, value, out);
  }
}

function flattenSection(section: Section, o: ObjV, out: Map<SettingKey, V>): void {
  // Fields are in the order of their last write, so a later spelling of a key wins.
  for (const [name, value] of o.fields) {
    if (section === "dataset" && PACKING_SPEC_FIELDS.has(name)) {
      const key = name === "packed_sequence_specs" ? "dataset.packed_sequence_specs" : "dataset.offline_packing_specs";
      if (!(value.k === "obj" && value.auto)) setLast(out, key, value);
      const pad = value.k === "obj" ? value.fields.get("pad_seq_to_mult") : undefined;
      if (pad) setLast(out, "dataset.pad_seq_to_mult", pad);
      continue;
    }
    const key = sectionFieldKey(section, name);
    if (key) setLast(out, key, value);
  }
}

function setLast(out: Map<SettingKey, V>, key: SettingKey, value: V): void {
  out.delete(key);
  out.set(key, value);
}

/**
 * Where a fix adds a setting the recipe does not make: after the last statement before
 * `return cfg`, at the body's indentation, as `cfg.<section>.<field> = value`.
 */
function recipeAnchors(mod: ModuleInfo, fn: FnDef, frame: Frame): ConfigUnit["anchors"] {
  const stmts = named(fn.body);
  const retIndex = stmts.findIndex((s) => s.t === "return_statement");
  const ret = stmts[retIndex];
  const prev = stmts[retIndex - 1];
  const first = stmts[0];
  if (!ret || !prev || !first) return {};
  const expr = named(ret)[0];
  if (!expr || expr.t !== "identifier") return {};
  const cfgVar = textOf(mod.text, expr);
  if (frame.vars.get(cfgVar)?.k !== "obj") return {};
  const line = mod.index.point(prev.e).line;
  if (mod.index.point(ret.s).line <= line) return {}; // `x = 1; return cfg` on one line
  const indent = mod.text.slice(mod.index.lineStart(mod.index.point(first.s).line), first.s);
  if (!/^[ \t]+$/.test(indent)) return {};
  const at = pointLocation(mod.path, mod.index, mod.index.lineEnd(line));
  const anchors: ConfigUnit["anchors"] = {};
  for (const section of SECTIONS) {
    const anchor: Anchor = { style: "python-attr", at, indent, receiver: `${cfgVar}.${section}.` };
    anchors[section] = anchor;
  }
  return anchors;
}

// ---------------------------------------------------------------- perf workload constants

function isWorkloadConstant(mod: ModuleInfo, def: ConstDef): boolean {
  if (def.value.t !== "call" || def.stmt.err) return false;
  const callee = def.value.c[0];
  if (!callee) return false;
  const name = textOf(mod.text, callee);
  return name === "replace" || name === "dataclasses.replace" || WORKLOAD_CTOR.test(name);
}

function workloadUnit(mod: ModuleInfo, ev: Evaluator, def: ConstDef): ConfigUnit | null {
  ev.reset();
  let value: V;
  try {
    value = ev.constantValue(def.name, def.target);
  } catch (error) {
    if (error instanceof BudgetExceeded) return null;
    throw error;
  }
  if (value.k !== "obj") return null;
  const values = new Map<SettingKey, V>();
  for (const [field, v] of value.fields) {
    const key = FLAT_FIELD_KEYS.get(field);
    if (key) setLast(values, key, v);
  }
  const notes = collectNotes(mod, ev.notes);
  const peft = value.fields.get("peft");
  const isPeft = peft?.k === "lit" && typeof peft.v === "string" && peft.v.toLowerCase() !== "none";
  return {
    id: `${mod.path}::${def.name}`,
    kind: "recipe",
    name: def.name,
    location: loc(mod, def.target),
    settings: toSettings(mod, values, def.stmt, notes),
    anchors: {},
    // num_gpus is not read: WorkloadBaseConfig says it is "for representation purposes only"
    // (the GPU count comes from the launcher's -ng/--num_gpus).
    mode: isPeft ? "peft" : runRecipeMode(def.name),
    complete: true,
    notes,
  };
}

// ---------------------------------------------------------------- provider dataclasses

function providerUnit(mod: ModuleInfo, ev: Evaluator, cls: ClassDef): ConfigUnit | null {
  if (cls.outer.err) return null;
  const header = [cls.name, ...cls.bases.map((b) => textOf(mod.text, b))].join(" ");
  if (!PROVIDER_CLASS.test(header)) return null;
  if (!ownsModelField(mod, cls)) return null;
  ev.reset();
  let fields: Map<string, V>;
  try {
    fields = ev.classDefaults(cls);
  } catch (error) {
    if (error instanceof BudgetExceeded) return null;
    throw error;
  }
  const values = new Map<SettingKey, V>();
  for (const [field, v] of fields) {
    const key = modelFieldKey(field);
    if (key) setLast(values, key, v);
  }
  const notes = collectNotes(mod, ev.notes);
  return {
    id: `${mod.path}::${cls.name}`,
    kind: "recipe",
    name: cls.name,
    location: loc(mod, cls.nameNode),
    settings: toSettings(mod, values, cls.outer, notes),
    anchors: {},
    mode: "unknown",
    complete: true,
    notes,
  };
}

/** The class body itself defaults a model setting (`cp_comm_type: str = "p2p"`). */
function ownsModelField(mod: ModuleInfo, cls: ClassDef): boolean {
  for (const stmt of cls.body.c) {
    const a = stmt.t === "expression_statement" ? stmt.c[0] : undefined;
    if (a?.t !== "assignment" || a.c[0]?.t !== "identifier" || !a.c.some((c) => c.t === "=")) continue;
    if (modelFieldKey(textOf(mod.text, a.c[0]))) return true;
  }
  return false;
}

// ---------------------------------------------------------------- settings and notes

function toSettings(mod: ModuleInfo, values: Map<SettingKey, V>, unit: Range, notes: Notes): ConfigUnit["settings"] {
  const settings: ConfigUnit["settings"] = {};
  for (const [key, v] of values) {
    const setting = toSetting(mod, key, v, unit);
    settings[key] = setting;
    if (!setting.value.known) notes.push({ message: `${key} is not known: ${setting.value.reason}`, location: setting.origin.location });
  }
  return settings;
}

function toSetting(unitMod: ModuleInfo, key: SettingKey, v: V, unit: Range): Setting {
  const { s, e } = v.o;
  // A value written in another module (a builder imported from there) points into that file.
  const mod = v.o.mod ?? unitMod;
  const inside = mod === unitMod && s >= unit.s && e <= unit.e;
  const via = [...v.o.via];
  if (!inside) {
    const item = itemAt(mod, s);
    if (item) via.push(`${describeItem(item.label)}${mod === unitMod ? "" : ` in ${mod.path}`} line ${mod.index.point(s).line}`);
  }
  return {
    key,
    value: toValue(v),
    origin: {
      kind: v.o.kind,
      location: location(mod.path, mod.index, s, e),
      text: mod.text.slice(s, e),
      syntax: "python",
      ...(via.length ? { via: via.join("; ") } : {}),
    },
    local: inside && !v.o.pinned,
    ...(!inside && v.o.site && v.o.site.s >= unit.s && v.o.site.e <= unit.e ? { site: location(unitMod.path, unitMod.index, v.o.site.s, v.o.site.e) } : {}),
    ...(!inside && v.o.baseSite ? { baseSite: location(v.o.baseSite.mod.path, v.o.baseSite.mod.index, v.o.baseSite.s, v.o.baseSite.e) } : {}),
  };
}

function describeItem(label: string): string {
  if (label.endsWith("()")) return isRecipeName(label.slice(0, -2)) ? `from base recipe ${label}` : `from ${label}`;
  return `from ${label}`;
}

function collectNotes(mod: ModuleInfo, raw: EvalNote[]): Notes {
  const seen = new Set<string>();
  const notes: Notes = [];
  for (const n of raw) {
    const id = `${n.s}:${n.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    notes.push({ message: n.message, location: location(mod.path, mod.index, n.s, n.e) });
  }
  return notes;
}

// ---------------------------------------------------------------- kwargs handed to unanalyzed builders

/**
 * `return some_builder(context_parallel_size=4, cp_comm_type="a2a+p2p")`, or
 * `cfg.model = make_provider(...)`: the builder is not analyzed, but the keyword arguments it
 * was handed under a setting's own name (recipes/utils parameters, keys.ts PARAMETER_KEYS)
 * are what it sets. Each becomes the unit's setting unless the unit writes the key itself.
 * Returns the argument names used.
 */
function handedSettings(cfg: ObjV, values: Map<SettingKey, V>): string[] {
  const model = cfg.fields.get("model");
  const used: string[] = [];
  for (const source of [cfg, model?.k === "obj" ? model : undefined]) {
    for (const [name, v] of source?.handed ?? []) {
      const key = PARAMETER_KEYS.get(name);
      if (!key || values.has(key)) continue;
      values.set(key, v);
      used.push(name);
    }
  }
  // "Unset cp_comm_type means no a2a+p2p" holds for upstream's builders, not for one we did not see that takes
  // parallel settings: it may choose the type itself. Pinned: a fix adds an override, never rewrites the call.
  if (used.length > 0 && !values.has("model.cp_comm_type")) {
    values.set("model.cp_comm_type", unk(`${cfg.ctor} is not analyzed and may set it`, { ...cfg.o, via: [], pinned: true }));
  }
  return used;
}

// ---------------------------------------------------------------- the NVLink domain a recipe states

/**
 * `cfg.env_vars = {**COMMON_PERF_ENV_VARS, ..., "NVLINK_DOMAIN_SIZE": 72}` (Bridge's perf
 * recipes, e.g. perf_recipes/gpt_oss/gb200/gpt_oss.py:68 at HEAD 067f987),
 * `cfg.env_vars["NVLINK_DOMAIN_SIZE"] = 72` (recipes/nemotronh/gb200/nemotron_3_nano.py:178)
 * or `cfg.env_vars.update({...})` (Bridge's recipe-usage guide, its docs folder, line 312): the domain the recipe was
 * written for. Written in the unit's own code it outranks the recipe's name; written by a
 * base it starts from (an h100 recipe reused for gb200), the name outranks it.
 */
function statedDomain(mod: ModuleInfo, env: V | undefined, unit: Range): ConfigUnit["nvlinkDomain"] {
  const v = env?.k === "dict" ? env.map.get("NVLINK_DOMAIN_SIZE") : undefined;
  if (v?.k !== "lit") return undefined;
  const gpus = domainSizeOf(v.v);
  if (gpus === undefined) return undefined;
  const at = v.o.mod ?? mod;
  const inside = at === mod && v.o.s >= unit.s && v.o.e <= unit.e;
  return domainFromEnv(gpus, `env_vars["NVLINK_DOMAIN_SIZE"] = ${gpus} at ${at.path}:${at.index.point(v.o.s).line}`, !inside);
}

// ---------------------------------------------------------------- names and builders

/** Classes whose unset fields are Megatron-Core's TransformerConfig defaults (no bridge in between). */
const GENERIC_MODEL_CLASSES = /^(?:TransformerConfig|ModelParallelConfig|GPTModelProvider|GPTModelConfig)$/;

/**
 * What built cfg.model when its unset fields may not be Megatron-Core's defaults: an
 * unanalyzed call (AutoBridge, a provider factory), or a provider class whose bridge or
 * __post_init__ we do not run. Undefined for a generic config class, None or no model.
 */
function modelBuilderOf(model: V | undefined): string | undefined {
  if (model?.k !== "obj") return undefined;
  if (model.opaque !== null) return model.ctor;
  const name = model.ctor.slice(model.ctor.lastIndexOf(".") + 1);
  return GENERIC_MODEL_CLASSES.test(name) ? undefined : `${model.ctor}(...)`;
}

/**
 * The generic config class that built cfg.model by a constructor call in this very module
 * (not a builder imported from elsewhere, not `**kwargs` we cannot see), else undefined.
 */
function modelClassOf(model: V | undefined): string | undefined {
  if (model?.k !== "obj" || model.opaque !== null || model.o.mod !== undefined) return undefined;
  const name = model.ctor.slice(model.ctor.lastIndexOf(".") + 1);
  return GENERIC_MODEL_CLASSES.test(name) ? name : undefined;
}

function loc(mod: ModuleInfo, n: PyNode): Location {
  return location(mod.path, mod.index, n.s, n.e);
}
