// Statements: assignments (names, attributes, subscripts, unpacking), if/elif/else,
// loops, with and try. Code that may or may not run is evaluated per arm from the same
// state, and only what every arm agrees on stays known.
import { RELEVANT_ATTRIBUTES } from "../keys.ts";
import { named, type PyNode } from "../tree.ts";
import { lit, obj, sameValue, truthy, unk, type ObjV, type V } from "../values.ts";
import { setField } from "./containers.ts";
import { binary, ev } from "./expressions.ts";
import { MAX_DEPTH, type Frame, type Machine, type Status } from "./machine.ts";

type Effects = Map<Map<string, V>, Map<string, V | undefined>>;

export function execBlock(m: Machine, stmts: readonly PyNode[], f: Frame): Status {
  for (const s of stmts) {
    const status = execStmt(m, s, f);
    if (status !== "ok") return status;
  }
  return "ok";
}

function execStmt(m: Machine, s: PyNode, f: Frame): Status {
  m.tick();
  if (m.depth > MAX_DEPTH) return "ok";
  m.depth++;
  try {
    switch (s.t) {
      case "expression_statement":
        for (const e of named(s)) execExpression(m, e, f);
        return "ok";
      case "return_statement": {
        const value = named(s)[0];
        f.ret = value ? ev(m, value, f, "assignment") : lit(null, m.org(s, "assignment"));
        return "return";
      }
      case "if_statement":
        return execIf(m, s, f);
      case "for_statement":
      case "while_statement":
        return execLoop(m, s, f);
      case "with_statement": {
        const body = s.c.find((c) => c.t === "block");
        return body ? execBlock(m, body.c, f) : "ok";
      }
      case "try_statement":
        return execTry(m, s, f);
      case "raise_statement":
        return "raise";
      default:
        return "ok";
    }
  } finally {
    m.depth--;
  }
}

function execExpression(m: Machine, e: PyNode, f: Frame): void {
  if (e.t === "assignment") assignment(m, e, f);
  else if (e.t === "augmented_assignment") augmented(m, e, f);
  else ev(m, e, f, "assignment");
}

function assignment(m: Machine, n: PyNode, f: Frame): V {
  const left = n.c[0];
  const eq = n.c.findIndex((c) => c.t === "=");
  const right = eq >= 0 ? n.c[eq + 1] : undefined;
  if (!left || !right) return unk("declaration without a value", m.org(n, "assignment"));
  const value = right.t === "assignment" ? assignment(m, right, f) : ev(m, right, f, "assignment");
  assignTo(m, left, value, f);
  return value;
}

function augmented(m: Machine, n: PyNode, f: Frame): void {
  const [left, opNode, right] = n.c;
  if (!left || !opNode || !right) return;
  const current = ev(m, left, f, "assignment");
  const operand = ev(m, right, f, "assignment");
  assignTo(m, left, binary(m, opNode.t.slice(0, -1), current, operand, n, "assignment"), f);
}

export function assignTo(m: Machine, target: PyNode, value: V, f: Frame): void {
  switch (target.t) {
    case "identifier":
      m.write(f.vars, m.text(target), value);
      return;
    case "attribute": {
      const base = target.c[0];
      const nameNode = target.c[target.c.length - 1];
      if (!base || !nameNode) return;
      const owner = ev(m, base, f, "assignment");
      const name = m.text(nameNode);
      if (owner.k === "obj") setField(m, owner, name, value);
      else if (RELEVANT_ATTRIBUTES.has(name)) m.note(`could not tell which object \`${m.short(target)}\` belongs to (${owner.k === "unk" ? owner.why : "not an object"})`, target);
      return;
    }
    case "subscript": {
      const [container, , index] = target.c;
      if (!container || !index) return;
      const holder = ev(m, container, f, "assignment");
      const key = ev(m, index, f, "assignment");
      if (holder.k === "dict") {
        if (key.k === "lit" && typeof key.v === "string") m.write(holder.map, key.v, value);
        else holder.open = `a key of ${m.short(container)} is computed`;
      }
      return;
    }
    case "pattern_list":
    case "tuple_pattern":
    case "list_pattern":
    case "tuple":
    case "list":
    case "expression_list": {
      const targets = named(target);
      const items = value.k === "list" && value.items.length === targets.length ? value.items : null;
      targets.forEach((t, i) => assignTo(m, t, items ? (items[i] as V) : unk(`unpacked from ${m.shortOrg(value.o)}`, value.o), f));
      return;
    }
    default:
      return;
  }
}

function execIf(m: Machine, n: PyNode, f: Frame): Status {
  const clauses: Array<{ cond: PyNode | null; block: PyNode | undefined }> = [];
  clauses.push({ cond: named(n)[0] ?? null, block: n.c.find((c) => c.t === "block") });
  for (const c of n.c) {
    if (c.t === "elif_clause") clauses.push({ cond: named(c)[0] ?? null, block: c.c.find((x) => x.t === "block") });
    else if (c.t === "else_clause") clauses.push({ cond: null, block: c.c.find((x) => x.t === "block") });
  }
  // Arms that may run: a known-false condition drops its arm, a known-true one ends the chain.
  const arms: Array<PyNode | undefined> = [];
  let decided = false;
  let why = "";
  for (const clause of clauses) {
    if (clause.cond === null) {
      arms.push(clause.block);
      decided = true;
      break;
    }
    const t = truthy(ev(m, clause.cond, f, "assignment"));
    if (t === false) continue;
    arms.push(clause.block);
    if (t === true) {
      decided = true;
      break;
    }
    why ||= `depends on \`${m.short(clause.cond)}\` (line ${m.line(clause.cond.s)})`;
  }
  if (!decided) arms.push(undefined); // no arm taken
  if (arms.length === 1) return arms[0] ? execBlock(m, arms[0].c, f) : "ok";
  return runBranches(
    m,
    arms.map((block) => () => (block ? execBlock(m, block.c, f) : "ok")),
    why || "depends on a condition",
    f,
  );
}

function execLoop(m: Machine, n: PyNode, f: Frame): Status {
  const body = n.c.find((c) => c.t === "block");
  const why = `set in a loop (line ${m.line(n.s)})`;
  if (n.t === "for_statement") {
    const target = n.c[1];
    if (target) assignTo(m, target, unk(`loop variable (line ${m.line(n.s)})`, m.org(target, "assignment")), f);
  }
  // The body may run any number of times; what it sets is known only if it was already so.
  return runBranches(m, [() => (body ? execBlock(m, body.c, f) : "ok"), () => "ok"], why, f);
}

function execTry(m: Machine, n: PyNode, f: Frame): Status {
  const body = n.c.find((c) => c.t === "block");
  const handlers = n.c.filter((c) => c.t === "except_clause" || c.t === "except_group_clause");
  const elseBlock = n.c.find((c) => c.t === "else_clause")?.c.find((c) => c.t === "block");
  const finallyBlock = n.c.find((c) => c.t === "finally_clause")?.c.find((c) => c.t === "block");
  const arms: Array<() => Status> = [
    () => {
      const st = body ? execBlock(m, body.c, f) : "ok";
      return st === "ok" && elseBlock ? execBlock(m, elseBlock.c, f) : st;
    },
    ...handlers.map((h) => () => {
      const block = h.c.find((c) => c.t === "block");
      return block ? execBlock(m, block.c, f) : "ok";
    }),
  ];
  const status = arms.length === 1 ? (arms[0] as () => Status)() : runBranches(m, arms, `depends on whether the try block at line ${m.line(n.s)} raises`, f);
  if (finallyBlock) {
    const fin = execBlock(m, finallyBlock.c, f);
    if (fin !== "ok") return fin;
  }
  return status;
}

/**
 * Runs each arm from the same state, then keeps what all the arms that finish agree on;
 * anything they disagree on (or only some set) becomes unknown with `why`.
 */
function runBranches(m: Machine, arms: Array<() => Status>, why: string, f: Frame): Status {
  const mark = m.log.length;
  const savedRet = f.ret;
  const results: Array<{ status: Status; effects: Effects; ret: V | null }> = [];
  m.branchDepth++;
  try {
    for (const arm of arms) {
      f.ret = null;
      const status = arm();
      results.push({ status, effects: m.effectsSince(mark), ret: f.ret });
      m.undo(mark);
    }
  } finally {
    m.branchDepth--;
    f.ret = savedRet;
  }
  const live = results.filter((r) => r.status !== "raise");
  if (live.length === 0) return "raise";
  mergeEffects(m, live.map((r) => r.effects), why);
  const returning = live.filter((r) => r.status === "return");
  if (returning.length === 0) return "ok";
  if (returning.length === live.length) {
    f.ret = mergeValues(returning.map((r) => r.ret ?? undefined), why, 0) ?? null;
    return "return";
  }
  const first = returning[0]?.ret;
  f.ret = first ? unk(`returns early only when the code ${why}`, first.o) : null;
  return "return";
}

function mergeEffects(m: Machine, all: Effects[], why: string): void {
  const touched = new Map<Map<string, V>, Set<string>>();
  for (const effects of all) {
    for (const [map, keys] of effects) {
      let set = touched.get(map);
      if (!set) touched.set(map, (set = new Set()));
      for (const key of keys.keys()) set.add(key);
    }
  }
  for (const [map, keys] of touched) {
    for (const key of keys) {
      const values = all.map((effects) => {
        const keysOfMap = effects.get(map);
        return keysOfMap && keysOfMap.has(key) ? keysOfMap.get(key) : map.get(key);
      });
      const merged = mergeValues(values, why, 0);
      if (merged) m.write(map, key, merged);
    }
  }
}

/** One value for what several arms produced; undefined when no arm has one. */
function mergeValues(values: Array<V | undefined>, why: string, depth: number): V | undefined {
  const defined = values.filter((v): v is V => v !== undefined);
  const first = defined[0];
  if (!first) return undefined;
  if (defined.length === values.length && defined.every((v) => sameValue(first, v))) return first;
  if (defined.length === values.length && depth < 8 && defined.every((v) => v.k === "obj")) {
    return mergeObjects(defined as ObjV[], why, depth);
  }
  return unk(`${defined.length === values.length ? "differs between branches" : "set only in some branches"}: ${why}`, first.o);
}

/** Objects built differently in each arm: fields they agree on stay known. */
function mergeObjects(objects: ObjV[], why: string, depth: number): ObjV {
  const first = objects[0] as ObjV;
  const merged = obj(first.ctor, objects.find((o) => o.opaque !== null)?.opaque ?? null, first.o);
  merged.role = first.role;
  const names = new Set<string>();
  for (const o of objects) for (const name of o.fields.keys()) names.add(name);
  for (const name of names) {
    const value = mergeValues(
      objects.map((o) => o.fields.get(name)),
      why,
      depth + 1,
    );
    if (value) merged.fields.set(name, value);
  }
  return merged;
}

