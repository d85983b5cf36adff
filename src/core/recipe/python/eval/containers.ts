// Containers: lists, dicts (with `**` splats and their `open` keys) and objects (a
// ConfigContainer, its sections, dataclasses), including HEAD's proxying of
// cfg.model.transformer and sections replaced by calls we do not analyze.
import type { OriginKind } from "../../../model/settings.ts";
import { isSection, PACKING_SPEC_FIELDS, sectionFieldKey } from "../keys.ts";
import { named, type PyNode } from "../tree.ts";
import { obj, unk, withVia, type DictV, type ListV, type ObjV, type Org, type V } from "../values.ts";
import { ev } from "./expressions.ts";
import type { Frame, Machine } from "./machine.ts";

export function sequence(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const items: V[] = [];
  for (const c of named(n)) {
    if (c.t === "list_splat") {
      const inner = named(c)[0];
      const v = inner ? ev(m, inner, f, kind) : undefined;
      if (v?.k !== "list") return unk(`\`${m.short(c)}\` cannot be expanded`, m.org(n, kind));
      items.push(...v.items);
    } else items.push(ev(m, c, f, kind));
  }
  return { k: "list", items, o: m.org(n, kind) } satisfies ListV;
}

export function dictionary(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const d: DictV = { k: "dict", map: new Map(), open: null, o: m.org(n, kind) };
  for (const c of named(n)) {
    if (c.t === "pair") {
      const [keyNode, valueNode] = named(c);
      if (!keyNode || !valueNode) continue;
      const key = ev(m, keyNode, f, kind);
      if (key.k === "lit" && typeof key.v === "string") {
        d.map.delete(key.v);
        d.map.set(key.v, ev(m, valueNode, f, "keyword"));
      } else d.open = `a key of \`${m.short(n)}\` is computed`;
    } else if (c.t === "dictionary_splat") splatInto(m, c, f, d.map, (why) => (d.open = why));
    else d.open = `\`${m.short(c)}\` is not evaluated`;
  }
  return d;
}

/** `**name` into a dict or a call: entries keep their origin, plus the dict they came through. */
export function splatInto(m: Machine, splat: PyNode, f: Frame, into: Map<string, V>, open: (why: string) => void): void {
  const inner = named(splat)[0];
  if (!inner) return;
  const v = ev(m, inner, f, "keyword");
  if (v.k !== "dict") {
    open(`\`${m.short(splat)}\` cannot be resolved`);
    return;
  }
  const through = inner.t === "identifier" ? m.text(inner) : null;
  for (const [key, item] of v.map) {
    into.delete(key);
    into.set(key, through ? viaDict(m, item, through, key) : item);
  }
  if (v.open) open(v.open);
}

function viaDict(m: Machine, item: V, dictName: string, key: string): V {
  const suffix = `["${key}"] ${m.where(item.o)}`;
  if (item.o.via.some((step) => step.endsWith(suffix))) return item;
  return withVia(item, `${dictName}${suffix}`);
}

export function mergedDict(parts: DictV[], o: Org): DictV {
  const d: DictV = { k: "dict", map: new Map(), open: null, o };
  for (const p of parts) {
    for (const [k, v] of p.map) {
      d.map.delete(k);
      d.map.set(k, v);
    }
    d.open ??= p.open;
  }
  return d;
}

export function setField(m: Machine, owner: ObjV, name: string, value: V): void {
  if (name === "transformer" && owner.role === "model") {
    // HEAD's GPTModelConfig proxies its TransformerConfig: cfg.model.transformer.X is cfg.model.X.
    if (value.k === "obj") for (const [k, v] of value.fields) m.write(owner.fields, k, v);
    return;
  }
  if (isSection(name) && value.k === "obj") {
    value.role ??= name;
    const old = owner.fields.get(name);
    if (old && old.k === "obj" && old !== value && value.opaque !== null) markReplaced(m, old, value, name);
  }
  m.write(owner.fields, name, value);
}

/**
 * `cfg.model = <unanalyzed call>` after settings were made: those settings are now
 * whatever the new object holds. Pinned, so a fix adds an override instead of editing the call.
 */
function markReplaced(m: Machine, old: ObjV, fresh: ObjV, section: string): void {
  if (!isSection(section)) return;
  for (const field of old.fields.keys()) {
    if (!sectionFieldKey(section, field) || fresh.fields.has(field)) continue;
    const o: Org = { ...fresh.o, via: [], pinned: true };
    fresh.fields.set(field, unk(`cfg.${section} was replaced by ${fresh.ctor} (${m.where(fresh.o)}), which is not analyzed`, o));
  }
}

export function getField(m: Machine, owner: ObjV, name: string, at: PyNode): V {
  if (name === "transformer" && owner.role === "model") return owner;
  const value = owner.fields.get(name);
  if (value) return value;
  if (isSection(name) || PACKING_SPEC_FIELDS.has(name)) {
    // Reading a nested config we never saw built: an object standing for it, so writes
    // through it (cfg.dataset.x = ...) land in one place. Not logged: reading is no change.
    const child = obj(`${owner.ctor}.${name}`, owner.opaque ?? `the default ${name} of ${owner.ctor}`, m.org(at, "assignment"));
    child.auto = true;
    if (isSection(name)) child.role = name;
    owner.fields.set(name, child);
    return child;
  }
  if (name === "env_vars" && owner.role === null) {
    // ConfigContainer.env_vars, a dict: keys a recipe writes into it (`cfg.env_vars["NVLINK_DOMAIN_SIZE"] = 72`,
    // `.update({...})`) land in one place; the ones it holds already stay unknown.
    const d: DictV = { k: "dict", map: new Map(), open: `the env_vars of ${owner.ctor}`, o: m.org(at, "assignment") };
    owner.fields.set(name, d);
    return d;
  }
  return unk(owner.opaque !== null ? `${name} comes from ${owner.opaque}` : `${name} is the default of ${owner.ctor}`, m.org(at, "assignment"));
}
