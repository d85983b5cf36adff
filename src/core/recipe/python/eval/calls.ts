// Calls and builders: functions of the module (or, through the library, of other modules
// of the analyzed tree, so `_llama3_common(**kwargs)` imported from `llama/common.py`
// runs as if it were written here), constructors and dataclass field defaults,
// dataclasses.replace, a few builtins and dict methods. Any other call gives an object
// that says it comes from code we did not analyze.
import type { OriginKind } from "../../../model/settings.ts";
import type { ResolvedName } from "../library.ts";
import type { ClassDef, FnDef, ModuleInfo, ParamInfo } from "../module.ts";
import { named, type PyNode } from "../tree.ts";
import { copyValue, lit, obj, reorigin, stampSite, truthy, unk, type DictV, type ObjV, type Org, type V } from "../values.ts";
import { mergedDict, setField, splatInto } from "./containers.ts";
import { ev } from "./expressions.ts";
import { isScalar, MAX_CALL_DEPTH, newFrame, type Args, type Frame, type Machine, type Status } from "./machine.ts";
import { pythonStr } from "./operators.ts";
import { execBlock } from "./statements.ts";
import { isSection, PARAMETER_KEYS } from "../keys.ts";

const MAX_CLASS_DEPTH = 10;

export function call(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const callee = n.c[0];
  const argNode = n.c[1];
  if (!callee) return unk("incomplete call", m.org(n, kind));
  const args = argNode?.t === "argument_list" ? evalArgs(m, argNode, f) : { pos: [], kw: new Map<string, V>(), open: null };
  if (callee.t === "identifier") {
    const name = m.text(callee);
    const fn = m.mod.fns.get(name);
    if (fn) return callFunction(m, fn, m.mod, args, n, kind);
    const cls = m.mod.classes.get(name);
    if (cls) return construct(m, name, args, n, kind, { cls, mod: m.mod });
    const builtin = callBuiltin(m, name, args, n, kind);
    if (builtin) return builtin;
    const imported = callImported(m, m.library?.resolveName(m.mod, name), name, args, n, kind);
    if (imported) return imported;
    if (/^[A-Z]/.test(name)) return construct(m, name, args, n, kind, undefined);
    // `model_provider(...)` where the parameter holds a class passed in by the recipe.
    const bound = f.vars.get(name);
    if (bound?.k === "unk" && bound.ctor) return construct(m, bound.ctor, args, n, kind, undefined);
    return opaqueCall(m, callee, n, kind, args);
  }
  if (callee.t === "attribute") {
    const method = m.text(callee.c[callee.c.length - 1] as PyNode);
    const calleeText = m.text(callee);
    if (calleeText === "dataclasses.replace") return replace(m, args, n, kind);
    const receiverNode = callee.c[0] as PyNode;
    // `common._llama3_common(...)` after `from megatron.bridge.recipes.llama import common`.
    if (receiverNode.t === "identifier" && !f.vars.has(m.text(receiverNode))) {
      const target = m.library?.resolveName(m.mod, m.text(receiverNode));
      if (target?.kind === "module") {
        const inModule = callImported(m, m.library?.resolveName(target.mod, method), method, args, n, kind);
        if (inModule) return inModule;
      }
    }
    const receiver = ev(m, receiverNode, f, kind);
    if (receiver.k === "dict") {
      const r = dictMethod(m, receiver, method, args, n, kind);
      if (r) return r;
    }
    if (/^[A-Z]/.test(method)) return construct(m, method, args, n, kind, undefined);
  }
  return opaqueCall(m, callee, n, kind, args);
}

function callImported(m: Machine, target: ResolvedName | undefined, name: string, args: Args, n: PyNode, kind: OriginKind): V | undefined {
  if (target?.kind === "fn") return callFunction(m, target.fn, target.mod, args, n, kind);
  if (target?.kind === "class") return construct(m, name, args, n, kind, { cls: target.cls, mod: target.mod });
  return undefined;
}

function evalArgs(m: Machine, argNode: PyNode, f: Frame): Args {
  const args: Args = { pos: [], kw: new Map(), open: null };
  for (const c of named(argNode)) {
    if (c.t === "keyword_argument") {
      const nameNode = c.c[0];
      const valueNode = c.c[c.c.length - 1];
      if (!nameNode || !valueNode || valueNode === nameNode) continue;
      const name = m.text(nameNode);
      args.kw.delete(name);
      args.kw.set(name, ev(m, valueNode, f, "keyword"));
    } else if (c.t === "dictionary_splat") {
      splatInto(m, c, f, args.kw, (why) => (args.open = why));
    } else if (c.t === "list_splat") {
      const inner = named(c)[0];
      const v = inner ? ev(m, inner, f, "keyword") : undefined;
      if (v?.k === "list") args.pos.push(...v.items);
      else args.open ??= `\`${m.short(c)}\` cannot be expanded`;
    } else args.pos.push(ev(m, c, f, "keyword"));
  }
  return args;
}

/** Runs `fn` (defined in `mod`) on evaluated arguments; the caller's module stays current for the result. */
function callFunction(m: Machine, fn: FnDef, mod: ModuleInfo, args: Args, n: PyNode, kind: OriginKind): V {
  // A call written in the unit's own code: what it makes entered the unit here (Org.site).
  if (m.site !== null || m.mod !== m.root) {
    // A call in the body of the function called at `site`: where its values entered that function.
    if (m.site === null || m.baseSite !== null || m.active.length !== m.siteDepth + 1) return callFunctionAt(m, fn, mod, args, n, kind);
    m.baseSite = { s: n.s, e: n.e, mod: m.mod };
    try {
      return callFunctionAt(m, fn, mod, args, n, kind);
    } finally {
      m.baseSite = null;
    }
  }
  m.site = { s: n.s, e: n.e };
  m.siteDepth = m.active.length;
  try {
    return callFunctionAt(m, fn, mod, args, n, kind);
  } finally {
    m.site = null;
  }
}

function callFunctionAt(m: Machine, fn: FnDef, mod: ModuleInfo, args: Args, n: PyNode, kind: OriginKind): V {
  // A builder of another module called without arguments (`_pretrain_common()`) gives the same
  // result for every recipe: evaluate it once per extraction, hand each caller its own copy.
  const memoizable = mod !== m.root && m.library !== undefined && m.branchDepth === 0 && args.pos.length === 0 && args.kw.size === 0 && args.open === null;
  const outermost = m.site !== null && m.baseSite === null && m.active.length === m.siteDepth;
  if (memoizable) {
    const hit = m.library!.memo.get(fn);
    // The stored result was made during some other call: it enters this unit at this one.
    // Its base sites are fn's own calls only when it was made as the unit's outermost call.
    // Called inside the base: all of it entered the base at this call (m.baseSite).
    if (hit) return m.site ? stampSite(copyValue(hit), m.site, m.baseSite ?? (outermost && m.library!.memoOutermost.has(fn) ? "keep" : undefined)) : copyValue(hit);
  }
  const result = evaluateCall(m, fn, mod, args, n, kind);
  if (memoizable && !isScalar(result)) {
    m.library!.memo.set(fn, copyValue(result));
    if (outermost) m.library!.memoOutermost.add(fn);
    else m.library!.memoOutermost.delete(fn);
  }
  return result;
}

function evaluateCall(m: Machine, fn: FnDef, mod: ModuleInfo, args: Args, n: PyNode, kind: OriginKind): V {
  if (m.active.includes(fn)) return unk(`${fn.name}() calls itself`, m.org(n, kind));
  if (m.active.length >= MAX_CALL_DEPTH) return unk(`calls nested too deeply at ${fn.name}()`, m.org(n, kind));
  const frame = newFrame(false);
  m.active.push(fn);
  let status: Status;
  try {
    status = m.inModule(mod, () => {
      bindParams(m, fn, frame, args);
      return execBlock(m, fn.body.c, frame);
    });
  } finally {
    m.active.pop();
  }
  if (status === "raise") return unk(`${fn.name}() raises`, m.org(n, kind));
  const result = frame.ret ?? lit(null, m.org(n, kind));
  // A scalar result is written, for this caller, as the call expression.
  return isScalar(result) ? reorigin(result, m.org(n, kind, [...result.o.via, `returned by ${fn.name}() ${m.where(result.o)}`])) : result;
}

/** Binds the arguments of a call (or none: a recipe run with its defaults) to `fn`'s parameters. */
export function bindParams(m: Machine, fn: FnDef, frame: Frame, args: Args): void {
  const used = new Set<string>();
  let next = 0;
  for (const p of fn.params) {
    frame.params.add(p.name);
    if (p.star === 1) {
      frame.vars.set(p.name, { k: "list", items: args.pos.slice(next), o: m.org(p.nameNode, "parameter-default") });
      next = args.pos.length;
      continue;
    }
    if (p.star === 2) continue; // after the named ones, so it gets what is left
    frame.vars.set(p.name, argumentFor(m, p, args, next < args.pos.length && !p.kwOnly ? args.pos[next++] : undefined, used));
  }
  const rest = fn.params.find((p) => p.star === 2);
  if (rest) {
    const d: DictV = { k: "dict", map: new Map(), open: args.open, o: m.org(rest.nameNode, "parameter-default") };
    for (const [k, v] of args.kw) if (!used.has(k)) d.map.set(k, v);
    frame.vars.set(rest.name, d);
  }
}

function argumentFor(m: Machine, p: ParamInfo, args: Args, positional: V | undefined, used: Set<string>): V {
  if (positional) return positional;
  const byName = args.kw.get(p.name);
  if (byName) {
    used.add(p.name);
    return byName;
  }
  if (args.open) return unk(`${p.name} may be passed through ${args.open}`, m.org(p.nameNode, "parameter-default"));
  if (p.def) return ev(m, p.def, m.moduleFrame(), "parameter-default");
  return unk(`parameter ${p.name} has no default`, m.org(p.nameNode, "parameter-default"));
}

function construct(m: Machine, name: string, args: Args, n: PyNode, kind: OriginKind, def: { cls: ClassDef; mod: ModuleInfo } | undefined): ObjV {
  const o = obj(name, args.open, m.org(n, kind));
  if (def) {
    for (const [k, v] of m.inModule(def.mod, () => classDefaults(m, def.cls))) o.fields.set(k, v);
    const bases = m.inModule(def.mod, () => baseNames(m, def.cls, 0));
    if (bases.length > 0) o.bases = bases;
  }
  for (const [k, v] of args.kw) {
    o.fields.delete(k);
    o.fields.set(k, v);
  }
  if (name === "ConfigContainer") for (const [k, v] of o.fields) if (v.k === "obj" && isSection(k)) v.role ??= k;
  return o;
}

/** Field defaults of a dataclass body (evaluated in the current module), base classes first. */
export function classDefaults(m: Machine, cls: ClassDef, depth = 0): Map<string, V> {
  const fields = new Map<string, V>();
  if (depth > MAX_CLASS_DEPTH) return fields;
  for (const base of cls.bases) {
    if (base.t !== "identifier") continue;
    const name = m.text(base);
    const local = m.mod.classes.get(name);
    const parent = local ? { cls: local, mod: m.mod } : resolvedClass(m.library?.resolveName(m.mod, name));
    if (!parent || parent.cls === cls) continue;
    for (const [k, v] of m.inModule(parent.mod, () => classDefaults(m, parent.cls, depth + 1))) fields.set(k, v);
  }
  for (const stmt of cls.body.c) {
    const a = stmt.t === "expression_statement" ? stmt.c[0] : undefined;
    if (!a || a.t !== "assignment" || a.c[0]?.t !== "identifier") continue;
    const eq = a.c.findIndex((c) => c.t === "=");
    const value = eq >= 0 ? a.c[eq + 1] : undefined;
    if (!value) continue;
    fields.delete(m.text(a.c[0]));
    fields.set(m.text(a.c[0]), ev(m, value, m.moduleFrame(), "assignment"));
  }
  return fields;
}

/** Names of a class's bases as written, and theirs when they are analyzed too (for isinstance-like checks). */
function baseNames(m: Machine, cls: ClassDef, depth: number): string[] {
  if (depth > MAX_CLASS_DEPTH) return [];
  const out: string[] = [];
  for (const base of cls.bases) {
    const name = m.text(base);
    out.push(name);
    if (base.t !== "identifier") continue;
    const local = m.mod.classes.get(name);
    const parent = local ? { cls: local, mod: m.mod } : resolvedClass(m.library?.resolveName(m.mod, name));
    if (parent && parent.cls !== cls) out.push(...m.inModule(parent.mod, () => baseNames(m, parent.cls, depth + 1)));
  }
  return out;
}

function resolvedClass(target: ResolvedName | undefined): { cls: ClassDef; mod: ModuleInfo } | undefined {
  return target?.kind === "class" ? { cls: target.cls, mod: target.mod } : undefined;
}

function replace(m: Machine, args: Args, n: PyNode, kind: OriginKind): V {
  const base = args.pos[0];
  const copy = obj(base?.k === "obj" ? base.ctor : "replace()", null, m.org(n, kind));
  if (base?.k === "obj") {
    copy.opaque = base.opaque;
    copy.role = base.role;
    if (base.bases) copy.bases = base.bases;
    for (const [k, v] of base.fields) copy.fields.set(k, v);
  } else copy.opaque = `the object given to replace() (${base?.k === "unk" ? base.why : "not known"})`;
  for (const [k, v] of args.kw) {
    copy.fields.delete(k);
    copy.fields.set(k, v);
  }
  if (args.open) copy.opaque ??= args.open;
  return copy;
}

function callBuiltin(m: Machine, name: string, args: Args, n: PyNode, kind: OriginKind): V | undefined {
  const o = m.org(n, kind, args.pos.flatMap((a) => a.o.via));
  switch (name) {
    case "replace":
      return replace(m, args, n, kind);
    case "dict": {
      const parts: DictV[] = [];
      const first = args.pos[0];
      if (first) {
        if (first.k !== "dict") return unk(`\`${m.short(n)}\` cannot be resolved`, o);
        parts.push(first);
      }
      parts.push({ k: "dict", map: new Map(args.kw), open: args.open, o });
      return mergedDict(parts, o);
    }
    case "int":
    case "float":
    case "str":
    case "bool":
    case "abs":
      return convert(name, args.pos[0], o);
    case "max":
    case "min": {
      const nums = args.pos.map((a) => (a.k === "lit" && typeof a.v === "number" ? a.v : null));
      if (nums.length === 0 || nums.some((x) => x === null)) return unk(`\`${m.short(n)}\` cannot be computed`, o);
      return lit(name === "max" ? Math.max(...(nums as number[])) : Math.min(...(nums as number[])), o);
    }
    case "field": {
      const d = args.kw.get("default");
      return d ?? unk("default_factory is not evaluated", o);
    }
    case "setattr":
      return setattr(m, args, n, o);
    default:
      return undefined;
  }
}

function convert(name: string, a: V | undefined, o: Org): V {
  if (!a || a.k !== "lit") return unk(`${name}() of an unknown value`, o);
  const v = a.v;
  switch (name) {
    case "int":
      if (typeof v === "number") return lit(Math.trunc(v), o);
      if (typeof v === "string" && /^\s*[-+]?\d+\s*$/.test(v)) return lit(parseInt(v, 10), o);
      if (typeof v === "boolean") return lit(v ? 1 : 0, o);
      break;
    case "float":
      if (typeof v === "number") return lit(v, o);
      break;
    case "str":
      return lit(pythonStr(v), o);
    case "bool":
      return lit(truthy(a) === true, o);
    case "abs":
      if (typeof v === "number") return lit(Math.abs(v), o);
      break;
  }
  return unk(`${name}(${pythonStr(v)}) is not evaluated`, o);
}

function setattr(m: Machine, args: Args, n: PyNode, o: Org): V {
  const [target, name, value] = args.pos;
  if (target?.k === "obj" && name?.k === "lit" && typeof name.v === "string" && value) setField(m, target, name.v, value);
  else if (target?.k === "obj") m.note(`setattr() with a computed name is not followed: \`${m.short(n)}\``, n);
  return lit(null, o);
}

function dictMethod(m: Machine, d: DictV, method: string, args: Args, n: PyNode, kind: OriginKind): V | undefined {
  switch (method) {
    case "update": {
      const other = args.pos[0];
      if (other && other.k !== "dict") d.open = `\`${m.short(n)}\` cannot be resolved`;
      const entries = [...(other?.k === "dict" ? other.map : []), ...args.kw];
      for (const [k, v] of entries) m.write(d.map, k, v);
      if (other?.k === "dict" && other.open) d.open = other.open;
      if (args.open) d.open = args.open;
      return lit(null, m.org(n, kind));
    }
    case "copy":
      return mergedDict([d], m.org(n, kind));
    case "get": {
      const key = args.pos[0];
      if (key?.k !== "lit" || typeof key.v !== "string") return unk(`\`${m.short(n)}\` cannot be resolved`, m.org(n, kind));
      const found = d.map.get(key.v);
      if (found) return found;
      if (d.open) return unk(d.open, m.org(n, kind));
      return args.pos[1] ?? lit(null, m.org(n, kind));
    }
    default:
      return undefined;
  }
}

/**
 * The result of a call we do not analyze. A config handed to such a helper may be changed
 * there; that is not noted per call (perf recipes do it in every function).
 */
function opaqueCall(m: Machine, callee: PyNode, n: PyNode, kind: OriginKind, args?: Args): ObjV {
  const name = m.short(callee);
  const result = obj(`${name}()`, `${name}(), which is not analyzed`, m.org(n, kind));
  // A `**` splat we cannot see may hand the builder other values for the same names: then nothing is judged.
  if (args && args.open === null) {
    const handed = new Map([...args.kw].filter(([key]) => PARAMETER_KEYS.has(key)));
    if (handed.size > 0) result.handed = handed;
  }
  return result;
}
