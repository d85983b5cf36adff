// The abstract values the recipe evaluator computes. Each value remembers the source
// expression it came from (its origin) so a setting can point at the exact text to fix.
import type { Known, OriginKind, Value } from "../../model/settings.ts";
import { known, unknown } from "../../model/settings.ts";
import type { ModuleInfo } from "./module.ts";

export interface Org {
  /** UTF-16 offsets of the value expression. */
  s: number;
  e: number;
  kind: OriginKind;
  /** Steps the value took to get here, source first. */
  via: readonly string[];
  /** The expression is not this value's own text (a replaced section): fixes must add an override instead. */
  pinned?: boolean;
  /** The module the expression is in, when it is not the module being extracted (a builder imported from elsewhere). */
  mod?: ModuleInfo;
  /**
   * The call in the unit's own code (offsets in the module being extracted) that was running
   * when the value was made: `cfg = base_recipe()` or `_apply_common(cfg)`. It is where an
   * inherited value entered the unit, so a finding about it can land in the unit's text.
   */
  site?: { s: number; e: number };
  /**
   * One level further in: the call in the base's own code (the function called at `site`)
   * during which the value was made, in that function's module. A recipe of a recipe
   * (`cfg = other_recipe()`) then reports where `other_recipe`'s own unit does.
   */
  baseSite?: { s: number; e: number; mod: ModuleInfo };
}

export interface Lit {
  k: "lit";
  v: string | number | boolean | null;
  o: Org;
}
export interface Unk {
  k: "unk";
  why: string;
  o: Org;
  /** The value is a class from another module (`MambaModelProvider130M`): calling it constructs one. */
  ctor?: string;
}
export interface ListV {
  k: "list";
  items: V[];
  o: Org;
}
/** A dict with string keys. `open` says why it may hold keys we cannot see (null: closed). */
export interface DictV {
  k: "dict";
  map: Map<string, V>;
  open: string | null;
  o: Org;
}
/**
 * An object with attributes: a ConfigContainer, a section (model provider, dataset
 * config), a workload dataclass. Mutable and shared by reference, like in Python.
 */
export interface ObjV {
  k: "obj";
  fields: Map<string, V>;
  /** Constructor name, or the call text for results of unanalyzed calls. */
  ctor: string;
  /** Why the object's unset fields are unknown beyond its class defaults (null: built by a constructor we saw). */
  opaque: string | null;
  /** Which ConfigContainer section the object was stored as ("model"...), if any. */
  role: string | null;
  /** Created only because an attribute of an unanalyzed object was read; not a real assignment. */
  auto: boolean;
  /** Base classes of the class that built it, when that class was analyzed (nearest first). */
  bases?: string[];
  /**
   * The keyword arguments of the unanalyzed call that made it, when they name settings
   * (`some_builder(context_parallel_size=4, cp_comm_type="a2a+p2p")`) and no `**` splat could
   * hide others: what the builder was handed, judged as the unit's settings.
   */
  handed?: Map<string, V>;
  o: Org;
}
export type V = Lit | Unk | ListV | DictV | ObjV;

export const lit = (v: Lit["v"], o: Org): Lit => ({ k: "lit", v, o });
export const unk = (why: string, o: Org): Unk => ({ k: "unk", why, o });

export function obj(ctor: string, opaque: string | null, o: Org): ObjV {
  return { k: "obj", fields: new Map(), ctor, opaque, role: null, auto: false, o };
}

/** A copy of a scalar-like value with a new origin (objects and dicts keep their identity). */
export function reorigin(v: V, o: Org): V {
  switch (v.k) {
    case "lit":
      return { k: "lit", v: v.v, o };
    case "unk":
      return v.ctor === undefined ? { k: "unk", why: v.why, o } : { k: "unk", why: v.why, o, ctor: v.ctor };
    case "list":
      return { k: "list", items: v.items, o };
    default:
      return v;
  }
}

export function withVia(v: V, step: string): V {
  if (v.k === "obj" || v.k === "dict") return v;
  return reorigin(v, { ...v.o, via: [...v.o.via, step] });
}

const MAX_KNOWN_DEPTH = 64;

/** The value as the contract's Value: known only when every part is known. */
export function toValue(v: V): Value {
  const r = toKnown(v, 0);
  return typeof r === "string" ? unknown(r) : known(r.v);
}

function toKnown(v: V, depth: number): { v: Known } | string {
  if (depth > MAX_KNOWN_DEPTH) return "value nested too deeply";
  switch (v.k) {
    case "lit":
      return { v: v.v };
    case "unk":
      return v.why;
    case "list": {
      const out: Known[] = [];
      for (const item of v.items) {
        const r = toKnown(item, depth + 1);
        if (typeof r === "string") return r;
        out.push(r.v);
      }
      return { v: out };
    }
    case "dict":
    case "obj": {
      if (v.k === "dict" && v.open) return v.open;
      // An object from a call we did not analyze could hold anything (or be None).
      if (v.k === "obj" && v.opaque !== null) return `the value comes from ${v.opaque}`;
      const out: { [key: string]: Known } = {};
      const entries = v.k === "dict" ? v.map : v.fields;
      for (const [key, item] of entries) {
        const r = toKnown(item, depth + 1);
        if (typeof r === "string") return r;
        out[key] = r.v;
      }
      return { v: out };
    }
  }
}

/** Python truthiness, or null when it cannot be known. */
export function truthy(v: V): boolean | null {
  switch (v.k) {
    case "lit":
      return v.v !== null && v.v !== false && v.v !== 0 && v.v !== "";
    case "list":
      return v.items.length > 0;
    case "dict":
      return v.map.size > 0 ? true : v.open ? null : false;
    case "obj":
      // The result of an unanalyzed call could be None.
      return v.opaque === null ? true : null;
    case "unk":
      return null;
  }
}

/** Same value for merging branches: equal literals, or the very same object. */
export function sameValue(a: V, b: V, depth = 0): boolean {
  if (a === b) return true;
  if (depth > MAX_KNOWN_DEPTH) return false;
  if (a.k === "lit" && b.k === "lit") return a.v === b.v;
  if (a.k === "list" && b.k === "list") {
    if (a.items.length !== b.items.length) return false;
    return a.items.every((item, i) => sameValue(item, b.items[i] as V, depth + 1));
  }
  if ((a.k === "obj" && b.k === "obj") || (a.k === "dict" && b.k === "dict")) return false;
  return false;
}

/**
 * The value with every scalar inside it (fields of objects, entries of dicts, list items)
 * marked as made during the call at `site`. Objects, dicts and lists of `v` are changed in
 * place, so `v` must be a fresh copy (copyValue); scalars are shared, so they are replaced.
 */
export function stampSite(v: V, site: { s: number; e: number }, baseSite: Org["baseSite"] | "keep" = "keep", seen = new Set<V>()): V {
  if (v.k === "lit" || v.k === "unk") {
    const base = baseSite === "keep" ? v.o.baseSite : baseSite;
    if (v.o.site === site && v.o.baseSite === base) return v;
    const { baseSite: _old, ...o } = v.o;
    return reorigin(v, base ? { ...o, site, baseSite: base } : { ...o, site });
  }
  if (seen.has(v)) return v;
  seen.add(v);
  if (v.k === "list") v.items = v.items.map((item) => stampSite(item, site, baseSite, seen));
  else {
    const entries = v.k === "dict" ? v.map : v.fields;
    for (const [key, item] of entries) entries.set(key, stampSite(item, site, baseSite, seen));
  }
  return v;
}

/**
 * A copy of a value whose objects, dicts and lists are new (shared references stay shared
 * within the copy), so a caller may change it without changing the original.
 */
export function copyValue(v: V, seen = new Map<V, V>()): V {
  const done = seen.get(v);
  if (done) return done;
  switch (v.k) {
    case "lit":
    case "unk":
      return v;
    case "list": {
      const out: ListV = { k: "list", items: [], o: v.o };
      seen.set(v, out);
      for (const item of v.items) out.items.push(copyValue(item, seen));
      return out;
    }
    case "dict": {
      const out: DictV = { k: "dict", map: new Map(), open: v.open, o: v.o };
      seen.set(v, out);
      for (const [key, item] of v.map) out.map.set(key, copyValue(item, seen));
      return out;
    }
    case "obj": {
      const out: ObjV = { ...v, fields: new Map() };
      seen.set(v, out);
      for (const [key, item] of v.fields) out.fields.set(key, copyValue(item, seen));
      return out;
    }
  }
}
