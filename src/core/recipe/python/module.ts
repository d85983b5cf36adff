// What a Python module defines at top level: functions, classes and constants.
import type { LineIndex } from "../../model/source.ts";
import { named, textOf, type PyNode } from "./tree.ts";

export interface ParamInfo {
  name: string;
  nameNode: PyNode;
  /** Default value expression, if any. */
  def: PyNode | null;
  /** 0 plain, 1 `*args`, 2 `**kwargs`. */
  star: 0 | 1 | 2;
  /** After `*` or `*args`: only passable by keyword. */
  kwOnly: boolean;
}

export interface FnDef {
  name: string;
  nameNode: PyNode;
  /** The function_definition node. */
  node: PyNode;
  /** The outermost node (the decorated_definition when decorated): the function's text. */
  outer: PyNode;
  params: ParamInfo[];
  returns: PyNode | null;
  body: PyNode;
}

export interface ClassDef {
  name: string;
  nameNode: PyNode;
  node: PyNode;
  outer: PyNode;
  bases: PyNode[];
  body: PyNode;
}

export interface ConstDef {
  name: string;
  target: PyNode;
  value: PyNode;
  stmt: PyNode;
}

/** A top-level item, to describe where an inherited value was written. */
export interface TopItem {
  s: number;
  e: number;
  label: string;
}

export interface ModuleInfo {
  path: string;
  text: string;
  index: LineIndex;
  root: PyNode;
  fns: Map<string, FnDef>;
  classes: Map<string, ClassDef>;
  /** null: assigned more than once, or under if/for/try at module level. */
  consts: Map<string, ConstDef | null>;
  /** Top-level items in file order. */
  items: TopItem[];
}

const COMPOUND = new Set(["if_statement", "for_statement", "while_statement", "try_statement", "with_statement", "match_statement"]);

export function scanModule(path: string, text: string, index: LineIndex, root: PyNode): ModuleInfo {
  const mod: ModuleInfo = { path, text, index, root, fns: new Map(), classes: new Map(), consts: new Map(), items: [] };
  for (const stmt of root.c) scanTopLevel(mod, stmt);
  return mod;
}

function scanTopLevel(mod: ModuleInfo, stmt: PyNode): void {
  const def = stmt.t === "decorated_definition" ? stmt.c[stmt.c.length - 1] : stmt;
  if (!def) return;
  if (def.t === "function_definition") {
    const fn = readFunction(mod.text, def, stmt);
    if (fn) {
      mod.fns.set(fn.name, fn);
      mod.items.push({ s: stmt.s, e: stmt.e, label: `${fn.name}()` });
    }
    return;
  }
  if (def.t === "class_definition") {
    const cls = readClass(mod.text, def, stmt);
    if (cls) {
      mod.classes.set(cls.name, cls);
      mod.items.push({ s: stmt.s, e: stmt.e, label: `class ${cls.name}` });
    }
    return;
  }
  if (stmt.t === "expression_statement") {
    const first = stmt.c[0];
    if (first?.t === "assignment") scanConstant(mod, first, stmt);
    return;
  }
  if (COMPOUND.has(stmt.t)) markConditionalNames(mod, stmt);
}

function scanConstant(mod: ModuleInfo, assignment: PyNode, stmt: PyNode): void {
  // `A = B = v` binds both names to the innermost value.
  const targets: PyNode[] = [];
  let node: PyNode | undefined = assignment;
  let value: PyNode | undefined;
  for (let guard = 0; node && node.t === "assignment" && guard < 100; guard++) {
    const left = node.c[0];
    if (left) targets.push(left);
    const eq = node.c.findIndex((c) => c.t === "=");
    if (eq < 0) return; // `NAME: int` declares without a value
    value = node.c[eq + 1];
    node = value;
  }
  if (!value) return;
  for (const target of targets) {
    if (target.t === "identifier") {
      const name = textOf(mod.text, target);
      mod.consts.set(name, mod.consts.has(name) ? null : { name, target, value, stmt });
      mod.items.push({ s: stmt.s, e: stmt.e, label: name });
    } else {
      for (const id of identifiersIn(target, 0)) mod.consts.set(textOf(mod.text, id), null);
    }
  }
}

/** Names assigned under module-level control flow have no single value. */
function markConditionalNames(mod: ModuleInfo, node: PyNode): void {
  const stack: Array<{ n: PyNode; d: number }> = [{ n: node, d: 0 }];
  while (stack.length) {
    const { n, d } = stack.pop() as { n: PyNode; d: number };
    if (d > 200) continue;
    if (n.t === "assignment" || n.t === "augmented_assignment") {
      const left = n.c[0];
      if (left) for (const id of identifiersIn(left, 0)) mod.consts.set(textOf(mod.text, id), null);
    }
    for (const c of n.c) stack.push({ n: c, d: d + 1 });
  }
}

function identifiersIn(target: PyNode, depth: number): PyNode[] {
  if (target.t === "identifier") return [target];
  if (depth > 50 || !/pattern|tuple|list|expression_list/.test(target.t)) return [];
  return named(target).flatMap((c) => identifiersIn(c, depth + 1));
}

function readFunction(text: string, def: PyNode, outer: PyNode): FnDef | null {
  const nameNode = def.c.find((c) => c.t === "identifier");
  const paramsNode = def.c.find((c) => c.t === "parameters");
  const body = def.c.find((c) => c.t === "block");
  if (!nameNode || !paramsNode || !body) return null;
  const arrow = def.c.findIndex((c) => c.t === "->");
  const returns = arrow >= 0 ? (def.c[arrow + 1] ?? null) : null;
  return { name: textOf(text, nameNode), nameNode, node: def, outer, params: readParams(text, paramsNode), returns, body };
}

function readParams(text: string, params: PyNode): ParamInfo[] {
  const out: ParamInfo[] = [];
  let kwOnly = false;
  for (const p of named(params)) {
    if (p.t === "keyword_separator") {
      kwOnly = true;
      continue;
    }
    const info = readParam(text, p, kwOnly);
    if (!info) continue;
    if (info.star === 1) kwOnly = true;
    out.push(info);
  }
  return out;
}

function readParam(text: string, p: PyNode, kwOnly: boolean): ParamInfo | null {
  switch (p.t) {
    case "identifier":
      return { name: textOf(text, p), nameNode: p, def: null, star: 0, kwOnly };
    case "default_parameter":
    case "typed_default_parameter": {
      const nameNode = p.c[0];
      const eq = p.c.findIndex((c) => c.t === "=");
      if (!nameNode || nameNode.t !== "identifier") return null;
      return { name: textOf(text, nameNode), nameNode, def: eq >= 0 ? (p.c[eq + 1] ?? null) : null, star: 0, kwOnly };
    }
    case "typed_parameter": {
      const inner = p.c[0];
      if (!inner) return null;
      if (inner.t === "identifier") return { name: textOf(text, inner), nameNode: inner, def: null, star: 0, kwOnly };
      return readParam(text, inner, kwOnly);
    }
    case "list_splat_pattern":
    case "dictionary_splat_pattern": {
      const nameNode = p.c.find((c) => c.t === "identifier");
      if (!nameNode) return null;
      return { name: textOf(text, nameNode), nameNode, def: null, star: p.t === "list_splat_pattern" ? 1 : 2, kwOnly };
    }
    default:
      return null;
  }
}

function readClass(text: string, def: PyNode, outer: PyNode): ClassDef | null {
  const nameNode = def.c.find((c) => c.t === "identifier");
  const body = def.c.find((c) => c.t === "block");
  if (!nameNode || !body) return null;
  const args = def.c.find((c) => c.t === "argument_list");
  const bases = args ? named(args).filter((c) => c.t !== "keyword_argument") : [];
  return { name: textOf(text, nameNode), nameNode, node: def, outer, bases, body };
}

/** The label of the top-level item holding an offset (binary search; items are in file order). */
export function itemAt(mod: ModuleInfo, offset: number): TopItem | undefined {
  let lo = 0;
  let hi = mod.items.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const item = mod.items[mid] as TopItem;
    if (offset < item.s) hi = mid - 1;
    else if (offset >= item.e) lo = mid + 1;
    else return item;
  }
  return undefined;
}
