// Expressions: literals, names (local, module constants, constants imported from other
// modules of the analyzed tree), attribute chains, subscripts and operators. Anything
// else evaluates to an unknown value that says why.
import type { OriginKind } from "../../../model/settings.ts";
import { named, type PyNode } from "../tree.ts";
import { lit, reorigin, sameValue, truthy, unk, type Org, type V } from "../values.ts";
import { call } from "./calls.ts";
import { dictionary, getField, mergedDict, sequence } from "./containers.ts";
import { isScalar, MAX_DEPTH, type Frame, type Machine } from "./machine.ts";
import { arithmetic, compare, isOperatorToken, pythonStr, unescape } from "./operators.ts";

export function ev(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  m.tick();
  if (m.depth > MAX_DEPTH) return unk("expression nested too deeply", m.org(n, kind));
  m.depth++;
  try {
    return evInner(m, n, f, kind);
  } finally {
    m.depth--;
  }
}

function evInner(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  switch (n.t) {
    case "integer":
      return integer(m, n, m.org(n, kind));
    case "float": {
      const v = Number(m.text(n).replace(/_/g, ""));
      return Number.isFinite(v) ? lit(v, m.org(n, kind)) : unk(`${m.short(n)} is not a plain number`, m.org(n, kind));
    }
    case "true":
      return lit(true, m.org(n, kind));
    case "false":
      return lit(false, m.org(n, kind));
    case "none":
      return lit(null, m.org(n, kind));
    case "string":
      return string(m, n, f, kind);
    case "concatenated_string":
      return concatenated(m, n, f, kind);
    case "identifier":
      return lookup(m, m.text(n), n, f, kind);
    case "parenthesized_expression": {
      const inner = named(n)[0];
      return inner ? ev(m, inner, f, kind) : unk("empty parentheses", m.org(n, kind));
    }
    case "attribute":
      return attribute(m, n, f, kind);
    case "subscript":
      return subscript(m, n, f, kind);
    case "call":
      return call(m, n, f, kind);
    case "binary_operator": {
      const [left, op, right] = n.c;
      if (!left || !op || !right) return unk("incomplete expression", m.org(n, kind));
      return binary(m, op.t, ev(m, left, f, kind), ev(m, right, f, kind), n, kind);
    }
    case "unary_operator":
      return unary(m, n, f, kind);
    case "not_operator": {
      const arg = named(n)[0];
      const t = arg ? truthy(ev(m, arg, f, kind)) : null;
      return t === null ? unk(`\`${m.short(n)}\` cannot be decided`, m.org(n, kind)) : lit(!t, m.org(n, kind));
    }
    case "boolean_operator":
      return booleanOp(m, n, f, kind);
    case "comparison_operator":
      return comparison(m, n, f, kind);
    case "conditional_expression":
      return conditional(m, n, f, kind);
    case "list":
    case "tuple":
    case "expression_list":
      return sequence(m, n, f, kind);
    case "dictionary":
      return dictionary(m, n, f, kind);
    default:
      return unk(`\`${m.short(n)}\` is not evaluated (${n.t.replace(/_/g, " ")})`, m.org(n, kind));
  }
}

function integer(m: Machine, n: PyNode, o: Org): V {
  const raw = m.text(n).replace(/_/g, "").toLowerCase();
  let v: number;
  if (/^0[xob]/.test(raw)) v = Number(raw);
  else if (/^\d+$/.test(raw)) v = Number(raw);
  else return unk(`${m.short(n)} is not a plain integer`, o);
  return Number.isFinite(v) ? lit(v, o) : unk(`${m.short(n)} is not a plain integer`, o);
}

function string(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const raw = m.text(n);
  const match = /^([A-Za-z]*)('''|"""|'|")/.exec(raw);
  if (!match) return unk("unreadable string", m.org(n, kind));
  const prefix = (match[1] ?? "").toLowerCase();
  const quote = match[2] as string;
  if (!raw.endsWith(quote) || raw.length < match[0].length + quote.length) return unk("unterminated string", m.org(n, kind));
  if (!prefix.includes("f")) {
    const body = raw.slice(match[0].length, raw.length - quote.length);
    return lit(prefix.includes("r") ? body : unescape(body), m.org(n, kind));
  }
  // f-string: literal text between interpolations, each interpolation must be known.
  let out = "";
  let pos = n.s + match[0].length;
  const end = n.e - quote.length;
  const via: string[] = [];
  for (const part of n.c) {
    if (part.t !== "interpolation") continue;
    out += unescape(m.mod.text.slice(pos, part.s));
    pos = part.e;
    const expr = named(part)[0];
    if (!expr || named(part).length > 1) return unk(`f-string part \`${m.short(part)}\` is formatted`, m.org(n, kind));
    const v = ev(m, expr, f, kind);
    if (v.k !== "lit") return unk(`f-string part \`${m.short(part)}\` is not known`, m.org(n, kind));
    out += pythonStr(v.v);
    via.push(...v.o.via);
  }
  out += unescape(m.mod.text.slice(pos, end));
  return lit(out, m.org(n, kind, via));
}

function concatenated(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  let out = "";
  for (const part of named(n)) {
    const v = string(m, part, f, kind);
    if (v.k !== "lit" || typeof v.v !== "string") return unk(`\`${m.short(n)}\` is not known`, m.org(n, kind));
    out += v.v;
  }
  return lit(out, m.org(n, kind));
}

function lookup(m: Machine, name: string, n: PyNode, f: Frame, kind: OriginKind): V {
  const local = f.vars.get(name);
  if (local !== undefined) {
    // In the recipe's own body the name itself is what a fix replaces; elsewhere the
    // value keeps pointing at where it was written (an argument, a default).
    if (f.isUnit && !f.params.has(name) && isScalar(local)) {
      return reorigin(local, m.org(n, kind, [...local.o.via, `${name} = ${m.shortOrg(local.o)} (${m.where(local.o)})`]));
    }
    return local;
  }
  const constant = lookupConstant(m, name, n, kind);
  if (constant) return constant;
  if (m.mod.fns.has(name) || m.mod.classes.has(name)) return unk(`${name} is a function or class, not a value`, m.org(n, kind));
  const imported = importedConstant(m, name, n, kind);
  if (imported) return imported;
  const missing = unk(`${name} is not defined in this file`, m.org(n, kind));
  // A capitalized import is most likely a class; a builder may receive it and call it.
  if (/^[A-Z]/.test(name)) missing.ctor = name;
  return missing;
}

/** A module constant of the current module, evaluated once per unit. */
export function lookupConstant(m: Machine, name: string, n: PyNode, kind: OriginKind): V | undefined {
  if (!m.mod.consts.has(name)) return undefined;
  const def = m.mod.consts.get(name);
  if (!def) return unk(`${name} is assigned more than once or conditionally at module level`, m.org(n, kind));
  const cache = m.constCache();
  let value = cache.get(name);
  if (value === "pending") return unk(`${name} is defined in terms of itself`, m.org(n, kind));
  if (!value) {
    cache.set(name, "pending");
    value = ev(m, def.value, m.moduleFrame(), "assignment");
    cache.set(name, value);
  }
  if (!isScalar(value)) return value;
  return reorigin(value, m.org(n, kind, [...value.o.via, `${name} = ${m.short(def.value)} (line ${m.line(def.stmt.s)})`]));
}

/** `from ..common import SEQUENCE_LENGTH_64K`: the constant as the other module defines it. */
function importedConstant(m: Machine, name: string, n: PyNode, kind: OriginKind): V | undefined {
  const target = m.library?.resolveName(m.mod, name);
  if (target?.kind !== "const") return undefined;
  const value = m.inModule(target.mod, () => lookupConstant(m, target.name, target.def.target, kind));
  if (!value || !isScalar(value)) return value;
  return reorigin(value, m.org(n, kind, [...value.o.via, `${name} imported from ${target.mod.path}`]));
}

function attribute(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const base = n.c[0];
  const nameNode = n.c[n.c.length - 1];
  if (!base || !nameNode || nameNode === base) return unk("incomplete attribute", m.org(n, kind));
  const owner = ev(m, base, f, kind);
  if (owner.k !== "obj") return unk(`\`${m.short(n)}\` cannot be resolved${owner.k === "unk" ? ` (${owner.why})` : ""}`, m.org(n, kind));
  const value = getField(m, owner, m.text(nameNode), n);
  if (!isScalar(value)) return value;
  // A read of a setting is the text a fix would replace here, not where it was first set.
  const step = value.o.s !== n.s || (value.o.mod ?? m.root) !== m.mod ? [`${m.short(n)} set at ${m.where(value.o)}`] : [];
  return reorigin(value, m.org(n, kind, [...value.o.via, ...step]));
}

function subscript(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const [container, , index] = n.c;
  if (!container || !index) return unk("incomplete subscript", m.org(n, kind));
  const holder = ev(m, container, f, kind);
  const key = ev(m, index, f, kind);
  let value: V | undefined;
  if (holder.k === "dict" && key.k === "lit" && typeof key.v === "string") value = holder.map.get(key.v);
  else if (holder.k === "list" && key.k === "lit" && typeof key.v === "number" && Number.isInteger(key.v)) {
    value = holder.items[key.v < 0 ? holder.items.length + key.v : key.v];
  }
  if (!value) return unk(`\`${m.short(n)}\` cannot be resolved`, m.org(n, kind));
  return isScalar(value) ? reorigin(value, m.org(n, kind, [...value.o.via, `${m.short(n)} ${m.where(value.o)}`])) : value;
}

export function binary(m: Machine, op: string, a: V, b: V, n: PyNode, kind: OriginKind): V {
  const o = m.org(n, kind, [...a.o.via, ...b.o.via]);
  if (a.k === "lit" && b.k === "lit") {
    const x = a.v;
    const y = b.v;
    if (typeof x === "number" && typeof y === "number") {
      const r = arithmetic(op, x, y);
      if (r !== undefined && Number.isFinite(r)) return lit(r, o);
    } else if (op === "+" && typeof x === "string" && typeof y === "string") return lit(x + y, o);
    else if (op === "*" && typeof x === "string" && typeof y === "number" && y >= 0 && y < 1000) return lit(x.repeat(y), o);
  }
  if (op === "+" && a.k === "list" && b.k === "list") return { k: "list", items: [...a.items, ...b.items], o };
  if (op === "|" && a.k === "dict" && b.k === "dict") return mergedDict([a, b], o);
  const why = a.k === "unk" ? a.why : b.k === "unk" ? b.why : `\`${m.short(n)}\` is not evaluated`;
  return unk(why, o);
}

function unary(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const [op, arg] = n.c;
  if (!op || !arg) return unk("incomplete expression", m.org(n, kind));
  const v = ev(m, arg, f, kind);
  const o = m.org(n, kind, v.o.via);
  if (v.k === "lit" && typeof v.v === "number") {
    if (op.t === "-") return lit(-v.v, o);
    if (op.t === "+") return lit(v.v, o);
  }
  return v.k === "unk" ? unk(v.why, o) : unk(`\`${m.short(n)}\` is not evaluated`, o);
}

function booleanOp(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const [left, op, right] = n.c;
  if (!left || !op || !right) return unk("incomplete expression", m.org(n, kind));
  const a = ev(m, left, f, kind);
  const t = truthy(a);
  if (t === null) return unk(`\`${m.short(n)}\` cannot be decided`, m.org(n, kind));
  // Python returns an operand: `a or b` is a when a is truthy.
  if ((op.t === "or" && t) || (op.t === "and" && !t)) return a;
  return ev(m, right, f, kind);
}

function comparison(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const operands: V[] = [];
  const ops: string[] = [];
  let pending = "";
  for (const c of n.c) {
    if (c.t === "comment") continue;
    if (isOperatorToken(c.t)) pending = pending ? `${pending} ${c.t}` : c.t;
    else {
      if (operands.length) ops.push(pending);
      pending = "";
      operands.push(ev(m, c, f, kind));
    }
  }
  const o = m.org(n, kind);
  for (let i = 0; i < ops.length; i++) {
    const r = compare(ops[i] as string, operands[i] as V, operands[i + 1] as V);
    if (r === null) return unk(`\`${m.short(n)}\` cannot be decided`, o);
    if (!r) return lit(false, o);
  }
  return lit(true, o);
}

function conditional(m: Machine, n: PyNode, f: Frame, kind: OriginKind): V {
  const [yes, cond, no] = named(n);
  if (!yes || !cond || !no) return unk("incomplete conditional expression", m.org(n, kind));
  const t = truthy(ev(m, cond, f, kind));
  if (t === true) return ev(m, yes, f, kind);
  if (t === false) return ev(m, no, f, kind);
  const a = ev(m, yes, f, kind);
  const b = ev(m, no, f, kind);
  if (sameValue(a, b)) return reorigin(a, m.org(n, kind, a.o.via));
  return unk(`depends on \`${m.short(cond)}\``, m.org(n, kind));
}
