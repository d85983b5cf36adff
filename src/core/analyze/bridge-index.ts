// An index of upstream recipes' effective settings: what this analyzer reads from every
// recipe of a Megatron-Bridge checkout (`npm run index:bridge`, scripts/index-bridge.ts),
// kept per recipe function name with the Bridge version it describes. A user's script that
// starts from an upstream recipe (`cfg = llama3_8b_pretrain_config()`) is judged on top of
// the indexed recipe when no Bridge of the user's own can be read (the installed package or
// MEGATRON_BRIDGE_DIR come first: they are the version the user runs).
// Pure: the hosts read the file; this parses it, builds it and looks recipes up.
import * as z from "zod";
import { deferred } from "../model/deferred.ts";
import { KnownSchema, ModeSchema, SETTING_KEYS, isSettingKey, known, unknown, type ConfigUnit, type Setting, type SettingKey } from "../model/settings.ts";
import type { Location } from "../model/source.ts";
import { nvlinkDomainOf, nvlinkDomainOfName } from "./hardware.ts";

/** Raised whenever the layout changes; an index of another format is refused as stale. */
export const BRIDGE_INDEX_FORMAT = "hcp-bot/megatron-bridge-recipes@1";

const IndexedSettingSchema = deferred(() =>
  z.union([
    /** A known value, the file (index into `files`) and line it was written on. */
    z.object({ v: KnownSchema(), f: z.number().int().nonnegative(), l: z.number().int().positive() }).strict(),
    /** An unknown value, with why. */
    z.object({ u: z.string(), f: z.number().int().nonnegative(), l: z.number().int().positive() }).strict(),
  ]),
);

const IndexedRecipeSchema = deferred(() =>
  z
    .object({
      f: z.number().int().nonnegative(),
      l: z.number().int().positive(),
      mode: ModeSchema(),
      complete: z.boolean(),
      datasetType: z.string().optional(),
      datasetBases: z.array(z.string()).optional(),
      modelBuilder: z.string().optional(),
      /** Only where the recipe's name and folder do not say it (those are read again at lookup). */
      nvlinkDomain: z.object({ gpus: z.number().int().positive(), source: z.string() }).optional(),
      s: z.record(z.string(), IndexedSettingSchema()),
    })
    .strict(),
);

export const BridgeIndexSchema = deferred(() =>
  z
    .object({
      format: z.literal(BRIDGE_INDEX_FORMAT),
      bridge: z.object({ version: z.string().min(1), commit: z.string().nullable() }).strict(),
      /** The setting keys the generator read: a key this build reads and the index lacks makes it stale. */
      keys: z.array(z.string()),
      /** Recipe files, relative to the checkout's src/ (`megatron/bridge/recipes/llama/h100/llama3.py`). */
      files: z.array(z.string()),
      recipes: z.record(z.string(), IndexedRecipeSchema()),
      /** Legacy names kept alive by compatibility imports (`llama3_8b_pretrain_config`) -> the recipe's name. */
      aliases: z.record(z.string(), z.string()),
    })
    .strict(),
);
export type BridgeIndex = z.infer<ReturnType<typeof BridgeIndexSchema>>;
type IndexedRecipe = BridgeIndex["recipes"][string];
type IndexedSetting = IndexedRecipe["s"][string];

/** What a host hands the analysis: the index, or why there is none (said in the info line). */
export type UpstreamRecipes = { index: BridgeIndex } | { unavailable: string };

/** "Megatron-Bridge 0.7.0 (067f987)". */
export function bridgeLabel(index: BridgeIndex): string {
  return `Megatron-Bridge ${index.bridge.version}${index.bridge.commit ? ` (${index.bridge.commit.slice(0, 7)})` : ""}`;
}

/**
 * The index in `text`, or a sentence saying why it cannot be used (errors are values).
 * `shapeChecked`: the host knows this exact text passed the schema before (the Node hosts
 * keep its hash, node/index-check-cache.ts), so only the checks after the schema run.
 */
export function parseBridgeIndex(text: string, options: { shapeChecked?: boolean } = {}): { index: BridgeIndex } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { error: `it is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const format = typeof raw === "object" && raw !== null ? (raw as { format?: unknown }).format : undefined;
  if (format !== BRIDGE_INDEX_FORMAT) {
    return { error: `it is in format ${typeof format === "string" ? JSON.stringify(format) : "(none)"}, and this hcp-bot reads ${BRIDGE_INDEX_FORMAT}: it is stale; regenerate it with npm run index:bridge` };
  }
  const shaped = options.shapeChecked ? { index: raw as BridgeIndex } : checkShape(raw);
  if ("error" in shaped) return shaped;
  const { index } = shaped;
  // An index written before a key was read would leave that key unset, which reads as the upstream default: a missing fact made better.
  const missing = SETTING_KEYS.filter((k) => !index.keys.includes(k));
  if (missing.length > 0) return { error: `it was generated before hcp-bot read ${missing.join(", ")}: it is stale; regenerate it with npm run index:bridge` };
  for (const [name, recipe] of Object.entries(index.recipes)) {
    if (recipe.f >= index.files.length) return { error: `recipe ${name} names file #${recipe.f}, and the index lists ${index.files.length}` };
    for (const [key, s] of Object.entries(recipe.s)) {
      if (!isSettingKey(key)) return { error: `recipe ${name} sets ${key}, which this hcp-bot does not read: it is stale; regenerate it with npm run index:bridge` };
      if (s.f >= index.files.length) return { error: `recipe ${name} names file #${s.f} for ${key}, and the index lists ${index.files.length}` };
    }
  }
  return { index };
}

function checkShape(raw: unknown): { index: BridgeIndex } | { error: string } {
  const parsed = BridgeIndexSchema().safeParse(raw);
  if (parsed.success) return { index: parsed.data };
  const issue = parsed.error.issues[0];
  return { error: `it does not match the format (${issue ? `${issue.path.join(".") || "top level"}: ${issue.message}` : "invalid"})` };
}

/** The indexed recipe `name` (following legacy aliases) with the name it is indexed under. */
export function indexedRecipe(index: BridgeIndex, name: string): { name: string; recipe: IndexedRecipe } | undefined {
  let current = name;
  for (let hops = 0; hops < 5; hops++) {
    const recipe = Object.hasOwn(index.recipes, current) ? index.recipes[current] : undefined;
    if (recipe) return { name: current, recipe };
    const next = Object.hasOwn(index.aliases, current) ? index.aliases[current] : undefined;
    if (!next) return undefined;
    current = next;
  }
  return undefined;
}

/**
 * The indexed recipe as a base unit for `u`. Its settings are placed at the call in the
 * user's file (where they enter the script; the upstream file is not the user's to change),
 * and say where upstream wrote them.
 */
export function indexedBase(index: BridgeIndex, u: ConfigUnit): ConfigUnit | undefined {
  const call = u.upstreamBase;
  if (!call?.plainCall) return undefined;
  const hit = indexedRecipe(index, call.name);
  if (!hit) return undefined;
  const { recipe } = hit;
  const label = bridgeLabel(index);
  const settings: ConfigUnit["settings"] = {};
  for (const [key, s] of Object.entries(recipe.s) as [SettingKey, IndexedSetting][]) {
    settings[key] = indexedSetting(key, s, call.at, `${hit.name} in ${label}, ${index.files[s.f]}:${s.l} (hcp-bot's index of upstream recipes)`);
  }
  const base: ConfigUnit = {
    id: `${label}::${hit.name}`,
    kind: "recipe",
    name: hit.name,
    location: call.at,
    settings,
    anchors: {},
    mode: recipe.mode,
    complete: recipe.complete,
    notes: [],
  };
  if (recipe.datasetType !== undefined) base.datasetType = recipe.datasetType;
  if (recipe.datasetBases !== undefined) base.datasetBases = recipe.datasetBases;
  if (recipe.modelBuilder !== undefined) base.modelBuilder = recipe.modelBuilder;
  const domain = recipe.nvlinkDomain ?? derivedDomain(hit.name, index.files[recipe.f]!);
  if (domain !== undefined) base.nvlinkDomain = domain;
  return base;
}

function indexedSetting(key: SettingKey, s: IndexedSetting, at: Location, via: string): Setting {
  const value = "v" in s ? known(s.v) : unknown(s.u);
  return { key, value, origin: { kind: "assignment", location: at, text: "v" in s ? JSON.stringify(s.v) : s.u, syntax: "text", via }, local: false };
}

/** The index of `units` (the recipes of a Bridge checkout, composed), for the generator. */
export function buildBridgeIndex(units: readonly ConfigUnit[], aliases: ReadonlyMap<string, string>, bridge: BridgeIndex["bridge"], fileOf: (path: string) => string | undefined): BridgeIndex {
  const files: string[] = [];
  const fileIds = new Map<string, number>();
  const fileId = (path: string): number | undefined => {
    const rel = fileOf(path);
    if (rel === undefined) return undefined;
    let id = fileIds.get(rel);
    if (id === undefined) fileIds.set(rel, (id = files.push(rel) - 1));
    return id;
  };
  const byName = new Map<string, IndexedRecipe | null>();
  for (const u of units) {
    // Recipe functions only (a module-level script of the checkout is no recipe anyone calls).
    if (u.kind !== "recipe" || !/^[A-Za-z]\w*$/.test(u.name)) continue;
    const entry = indexEntry(u, fileId);
    // A name defined twice is ambiguous (as recipeIndex treats it): left out.
    if (entry) byName.set(u.name, byName.has(u.name) ? null : entry);
  }
  const recipes: BridgeIndex["recipes"] = {};
  for (const name of [...byName.keys()].sort()) {
    const entry = byName.get(name);
    if (entry) recipes[name] = entry;
  }
  const kept: BridgeIndex["aliases"] = {};
  for (const [from, to] of [...aliases].sort(([a], [b]) => (a < b ? -1 : 1))) if (!Object.hasOwn(recipes, from) && (Object.hasOwn(recipes, to) || aliases.has(to))) kept[from] = to;
  return { format: BRIDGE_INDEX_FORMAT, bridge, keys: [...SETTING_KEYS], files, recipes, aliases: kept };
}

function indexEntry(u: ConfigUnit, fileId: (path: string) => number | undefined): IndexedRecipe | undefined {
  const f = fileId(u.location.file);
  if (f === undefined) return undefined;
  const s: IndexedRecipe["s"] = {};
  for (const [key, setting] of Object.entries(u.settings) as [SettingKey, Setting][]) {
    const sf = fileId(setting.origin.location.file) ?? f;
    const l = setting.origin.location.range.start.line;
    s[key] = setting.value.known ? { v: setting.value.value, f: sf, l } : { u: setting.value.reason, f: sf, l };
  }
  const entry: IndexedRecipe = { f, l: u.location.range.start.line, mode: u.mode, complete: u.complete, s };
  if (u.datasetType !== undefined) entry.datasetType = u.datasetType;
  if (u.datasetBases !== undefined) entry.datasetBases = u.datasetBases;
  if (u.modelBuilder !== undefined) entry.modelBuilder = u.modelBuilder;
  const derived = derivedDomain(u.name, u.location.file);
  // Only a domain other than the name's or folder's is stored, without the generating machine's path
  // (a stated env_vars["NVLINK_DOMAIN_SIZE"] names the file it is in).
  if (u.nvlinkDomain !== undefined && derived?.gpus !== u.nvlinkDomain.gpus) {
    entry.nvlinkDomain = { gpus: u.nvlinkDomain.gpus, source: u.nvlinkDomain.source.replace(/ at \S+:\d+$/, ` in ${u.name}`) };
  }
  return entry;
}

/** What the analysis reads from a recipe's name, then its folder (analyze/index.ts does the same). */
function derivedDomain(name: string, file: string): ConfigUnit["nvlinkDomain"] {
  return nvlinkDomainOfName(name) ?? nvlinkDomainOf(file);
}
