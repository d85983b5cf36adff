// A small abstract interpreter for the Python that recipes are written in: assignments,
// attribute chains, dicts and kwargs, calls to functions of the same module, constructors,
// dataclasses.replace, integer arithmetic and if/else. Anything else evaluates to an
// unknown value that says why; nothing is guessed.
import type { OriginKind } from "../../model/settings.ts";
import { isSection, PACKING_SPEC_FIELDS, RELEVANT_ATTRIBUTES, sectionFieldKey } from "./keys.ts";
import type { ClassDef, FnDef, ModuleInfo, ParamInfo } from "./module.ts";
import { named, textOf, type PyNode } from "./tree.ts";
import { lit, obj, reorigin, sameValue, truthy, unk, withVia, type DictV, type ListV, type ObjV, type Org, type V } from "./values.ts";

export interface Frame {
  vars: Map<string, V>;
  params: Set<string>;
  /** The recipe being extracted: names used here are replaced in place by a fix. */
  isUnit: boolean;
  ret: V | null;
}

type Status = "ok" | "return" | "raise";

interface LogEntry {
  map: Map<string, V>;
  key: string;
  old: V | undefined;
}

interface Args {
  pos: V[];
  kw: Map<string, V>;
  /** Why more keyword arguments may be passed than we see (a `**x` we cannot resolve). */
  open: string | null;
}

export interface EvalNote {
  message: string;
  s: number;
  e: number;
}

/** Thrown when one unit needs more work than any real recipe does; the unit is skipped with a note. */
export class BudgetExceeded extends Error {}

const MAX_DEPTH = 150;
const MAX_CALL_DEPTH = 12;
const STEP_BUDGET = 200_000;
const MAX_SHORT = 60;

export class Evaluator {
  private log: LogEntry[] = [];
  private branchDepth = 0;
  private depth = 0;
  private steps = 0;
  private active: FnDef[] = [];
  private constCache = new Map<string, V | "pending">();
  private readonly moduleFrame: Frame = { vars: new Map(), params: new Set(), isUnit: false, ret: null };
  notes: EvalNote[] = [];

  constructor(private readonly mod: ModuleInfo) {}

  /** Fresh state for the next unit: module objects are mutable, so no unit sees another's changes. */
  reset(): void {
    this.log = [];
    this.branchDepth = 0;
    this.depth = 0;
    this.steps = 0;
    this.active = [];
    this.constCache = new Map();
    this.notes = [];
  }

  // ---------------------------------------------------------------- entry points

  /** Runs a recipe function with its defaults; returns the frame (its `ret` is the result). */
  runUnitFunction(fn: FnDef): { frame: Frame; status: Status } {
    const frame = this.newFrame(true);
    this.bindParams(fn, frame, { pos: [], kw: new Map(), open: null });
    this.active.push(fn);
    const status = this.execBlock(fn.body.c, frame);
    this.active.pop();
    return { frame, status };
  }

  /** A parameter's default, as the recipe sees it when called without arguments. */
  parameterDefault(p: ParamInfo): V | undefined {
    return p.def ? this.ev(p.def, this.moduleFrame, "parameter-default") : undefined;
  }

  constantValue(name: string, use: PyNode): V {
    return this.lookupConstant(name, use, "assignment") ?? unk(`${name} is not a module constant`, this.org(use, "assignment"));
  }

  /** Field defaults of a dataclass body, base classes of the same module first. */
  classDefaults(cls: ClassDef, depth = 0): Map<string, V> {
    const fields = new Map<string, V>();
    if (depth > 10) return fields;
    for (const base of cls.bases) {
      const parent = base.t === "identifier" ? this.mod.classes.get(this.text(base)) : undefined;
      if (parent && parent !== cls) for (const [k, v] of this.classDefaults(parent, depth + 1)) fields.set(k, v);
    }
    for (const stmt of cls.body.c) {
      const a = stmt.t === "expression_statement" ? stmt.c[0] : undefined;
      if (!a || a.t !== "assignment" || a.c[0]?.t !== "identifier") continue;
      const eq = a.c.findIndex((c) => c.t === "=");
      const value = eq >= 0 ? a.c[eq + 1] : undefined;
      if (!value) continue;
      fields.delete(this.text(a.c[0]));
      fields.set(this.text(a.c[0]), this.fieldDefault(value));
    }
    return fields;
  }

  // ---------------------------------------------------------------- statements

  execBlock(stmts: readonly PyNode[], f: Frame): Status {
    for (const s of stmts) {
      const status = this.execStmt(s, f);
      if (status !== "ok") return status;
    }
    return "ok";
  }

  private execStmt(s: PyNode, f: Frame): Status {
    this.tick();
    if (this.depth > MAX_DEPTH) return "ok";
    this.depth++;
    try {
      switch (s.t) {
        case "expression_statement":
          for (const e of named(s)) this.execExpression(e, f);
          return "ok";
        case "return_statement": {
          const value = named(s)[0];
          f.ret = value ? this.ev(value, f, "assignment") : lit(null, this.org(s, "assignment"));
          return "return";
        }
        case "if_statement":
          return this.execIf(s, f);
        case "for_statement":
        case "while_statement":
          return this.execLoop(s, f);
        case "with_statement":
          return this.execWith(s, f);
        case "try_statement":
          return this.execTry(s, f);
        case "raise_statement":
          return "raise";
        default:
          return "ok";
      }
    } finally {
      this.depth--;
    }
  }

  private execExpression(e: PyNode, f: Frame): void {
    if (e.t === "assignment") this.assignment(e, f);
    else if (e.t === "augmented_assignment") this.augmented(e, f);
    else this.ev(e, f, "assignment");
  }

  private assignment(n: PyNode, f: Frame): V {
    const left = n.c[0];
    const eq = n.c.findIndex((c) => c.t === "=");
    const right = eq >= 0 ? n.c[eq + 1] : undefined;
    if (!left || !right) return unk("declaration without a value", this.org(n, "assignment"));
    const value = right.t === "assignment" ? this.assignment(right, f) : this.ev(right, f, "assignment");
    this.assignTo(left, value, f);
    return value;
  }

  private augmented(n: PyNode, f: Frame): void {
    const [left, opNode, right] = n.c;
    if (!left || !opNode || !right) return;
    const current = this.ev(left, f, "assignment");
    const operand = this.ev(right, f, "assignment");
    this.assignTo(left, this.binary(opNode.t.slice(0, -1), current, operand, n, "assignment"), f);
  }

  private assignTo(target: PyNode, value: V, f: Frame): void {
    switch (target.t) {
      case "identifier":
        this.write(f.vars, this.text(target), value);
        return;
      case "attribute": {
        const base = target.c[0];
        const nameNode = target.c[target.c.length - 1];
        if (!base || !nameNode) return;
        const owner = this.ev(base, f, "assignment");
        const name = this.text(nameNode);
        if (owner.k === "obj") this.setField(owner, name, value);
        else if (RELEVANT_ATTRIBUTES.has(name)) this.note(`could not tell which object \`${this.short(target)}\` belongs to (${owner.k === "unk" ? owner.why : "not an object"})`, target);
        return;
      }
      case "subscript": {
        const [container, , index] = target.c;
        if (!container || !index) return;
        const holder = this.ev(container, f, "assignment");
        const key = this.ev(index, f, "assignment");
        if (holder.k === "dict") {
          if (key.k === "lit" && typeof key.v === "string") this.write(holder.map, key.v, value);
          else holder.open = `a key of ${this.short(container)} is computed`;
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
        targets.forEach((t, i) => this.assignTo(t, items ? (items[i] as V) : unk(`unpacked from ${this.short(value.o)}`, value.o), f));
        return;
      }
      default:
        return;
    }
  }

  private execIf(n: PyNode, f: Frame): Status {
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
      const t = truthy(this.ev(clause.cond, f, "assignment"));
      if (t === false) continue;
      arms.push(clause.block);
      if (t === true) {
        decided = true;
        break;
      }
      why ||= `depends on \`${this.short(clause.cond)}\` (line ${this.line(clause.cond.s)})`;
    }
    if (!decided) arms.push(undefined); // no arm taken
    if (arms.length === 1) return arms[0] ? this.execBlock(arms[0].c, f) : "ok";
    return this.runBranches(
      arms.map((block) => () => (block ? this.execBlock(block.c, f) : "ok")),
      why || "depends on a condition",
      f,
    );
  }

  private execLoop(n: PyNode, f: Frame): Status {
    const body = n.c.find((c) => c.t === "block");
    const why = `set in a loop (line ${this.line(n.s)})`;
    if (n.t === "for_statement") {
      const target = n.c[1];
      if (target) this.assignTo(target, unk(`loop variable (line ${this.line(n.s)})`, this.org(target, "assignment")), f);
    }
    // The body may run any number of times; what it sets is known only if it was already so.
    return this.runBranches([() => (body ? this.execBlock(body.c, f) : "ok"), () => "ok"], why, f);
  }

  private execWith(n: PyNode, f: Frame): Status {
    const body = n.c.find((c) => c.t === "block");
    return body ? this.execBlock(body.c, f) : "ok";
  }

  private execTry(n: PyNode, f: Frame): Status {
    const body = n.c.find((c) => c.t === "block");
    const handlers = n.c.filter((c) => c.t === "except_clause" || c.t === "except_group_clause");
    const elseBlock = n.c.find((c) => c.t === "else_clause")?.c.find((c) => c.t === "block");
    const finallyBlock = n.c.find((c) => c.t === "finally_clause")?.c.find((c) => c.t === "block");
    const arms: Array<() => Status> = [
      () => {
        const st = body ? this.execBlock(body.c, f) : "ok";
        return st === "ok" && elseBlock ? this.execBlock(elseBlock.c, f) : st;
      },
      ...handlers.map((h) => () => {
        const block = h.c.find((c) => c.t === "block");
        return block ? this.execBlock(block.c, f) : "ok";
      }),
    ];
    const status = arms.length === 1 ? (arms[0] as () => Status)() : this.runBranches(arms, `depends on whether the try block at line ${this.line(n.s)} raises`, f);
    if (finallyBlock) {
      const fin = this.execBlock(finallyBlock.c, f);
      if (fin !== "ok") return fin;
    }
    return status;
  }

  /**
   * Runs each arm from the same state, then keeps what all the arms that finish agree on;
   * anything they disagree on (or only some set) becomes unknown with `why`.
   */
  private runBranches(arms: Array<() => Status>, why: string, f: Frame): Status {
    const mark = this.log.length;
    const savedRet = f.ret;
    const results: Array<{ status: Status; effects: Map<Map<string, V>, Map<string, V | undefined>>; ret: V | null }> = [];
    this.branchDepth++;
    try {
      for (const arm of arms) {
        f.ret = null;
        const status = arm();
        results.push({ status, effects: this.effectsSince(mark), ret: f.ret });
        this.undo(mark);
      }
    } finally {
      this.branchDepth--;
      f.ret = savedRet;
    }
    const live = results.filter((r) => r.status !== "raise");
    if (live.length === 0) return "raise";
    this.mergeEffects(live.map((r) => r.effects), why);
    const returning = live.filter((r) => r.status === "return");
    if (returning.length === 0) return "ok";
    if (returning.length === live.length) {
      f.ret = this.mergeValues(returning.map((r) => r.ret ?? undefined), why, 0) ?? null;
      return "return";
    }
    const first = returning[0]?.ret;
    f.ret = first ? unk(`returns early only when the code ${why}`, first.o) : null;
    return "return";
  }

  private effectsSince(mark: number): Map<Map<string, V>, Map<string, V | undefined>> {
    const effects = new Map<Map<string, V>, Map<string, V | undefined>>();
    for (let i = mark; i < this.log.length; i++) {
      const entry = this.log[i] as LogEntry;
      let keys = effects.get(entry.map);
      if (!keys) effects.set(entry.map, (keys = new Map()));
      keys.set(entry.key, entry.map.get(entry.key));
    }
    return effects;
  }

  private undo(mark: number): void {
    while (this.log.length > mark) {
      const entry = this.log.pop() as LogEntry;
      if (entry.old === undefined) entry.map.delete(entry.key);
      else entry.map.set(entry.key, entry.old);
    }
  }

  private mergeEffects(all: Array<Map<Map<string, V>, Map<string, V | undefined>>>, why: string): void {
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
        const merged = this.mergeValues(values, why, 0);
        if (merged) this.write(map, key, merged);
      }
    }
  }

  /** One value for what several arms produced; undefined when no arm has one. */
  private mergeValues(values: Array<V | undefined>, why: string, depth: number): V | undefined {
    const defined = values.filter((v): v is V => v !== undefined);
    const first = defined[0];
    if (!first) return undefined;
    if (defined.length === values.length && defined.every((v) => sameValue(first, v))) return first;
    if (defined.length === values.length && depth < 8 && defined.every((v) => v.k === "obj")) {
      return this.mergeObjects(defined as ObjV[], why, depth);
    }
    return unk(`${defined.length === values.length ? "differs between branches" : "set only in some branches"}: ${why}`, first.o);
  }

  /** Objects built differently in each arm: fields they agree on stay known. */
  private mergeObjects(objects: ObjV[], why: string, depth: number): ObjV {
    const first = objects[0] as ObjV;
    const merged = obj(first.ctor, objects.find((o) => o.opaque !== null)?.opaque ?? null, first.o);
    merged.role = first.role;
    const names = new Set<string>();
    for (const o of objects) for (const name of o.fields.keys()) names.add(name);
    for (const name of names) {
      const value = this.mergeValues(
        objects.map((o) => o.fields.get(name)),
        why,
        depth + 1,
      );
      if (value) merged.fields.set(name, value);
    }
    return merged;
  }

  // ---------------------------------------------------------------- objects

  private setField(owner: ObjV, name: string, value: V): void {
    if (name === "transformer" && owner.role === "model") {
      // HEAD's GPTModelConfig proxies its TransformerConfig: cfg.model.transformer.X is cfg.model.X.
      if (value.k === "obj") for (const [k, v] of value.fields) this.write(owner.fields, k, v);
      return;
    }
    if (isSection(name) && value.k === "obj") {
      value.role ??= name;
      const old = owner.fields.get(name);
      if (old && old.k === "obj" && old !== value && value.opaque !== null) this.markReplaced(old, value, name);
    }
    this.write(owner.fields, name, value);
  }

  /**
   * `cfg.model = <unanalyzed call>` after settings were made: those settings are now
   * whatever the new object holds. Pinned, so a fix adds an override instead of editing the call.
   */
  private markReplaced(old: ObjV, fresh: ObjV, section: string): void {
    if (!isSection(section)) return;
    for (const field of old.fields.keys()) {
      if (!sectionFieldKey(section, field) || fresh.fields.has(field)) continue;
      const o: Org = { ...fresh.o, via: [], pinned: true };
      fresh.fields.set(field, unk(`cfg.${section} was replaced by ${fresh.ctor} (line ${this.line(fresh.o.s)}), which is not analyzed`, o));
    }
  }

  private getField(owner: ObjV, name: string, at: PyNode): V {
    if (name === "transformer" && owner.role === "model") return owner;
    const value = owner.fields.get(name);
    if (value) return value;
    if (isSection(name) || PACKING_SPEC_FIELDS.has(name)) {
      // Reading a nested config we never saw built: an object standing for it, so writes
      // through it (cfg.dataset.x = ...) land in one place. Not logged: reading is no change.
      const child = obj(`${owner.ctor}.${name}`, owner.opaque ?? `the default ${name} of ${owner.ctor}`, this.org(at, "assignment"));
      child.auto = true;
      if (isSection(name)) child.role = name;
      owner.fields.set(name, child);
      return child;
    }
    return unk(owner.opaque !== null ? `${name} comes from ${owner.opaque}` : `${name} is the default of ${owner.ctor}`, this.org(at, "assignment"));
  }

  // ---------------------------------------------------------------- expressions

  ev(n: PyNode, f: Frame, kind: OriginKind): V {
    this.tick();
    if (this.depth > MAX_DEPTH) return unk("expression nested too deeply", this.org(n, kind));
    this.depth++;
    try {
      return this.evInner(n, f, kind);
    } finally {
      this.depth--;
    }
  }

  private evInner(n: PyNode, f: Frame, kind: OriginKind): V {
    const o = (): Org => this.org(n, kind);
    switch (n.t) {
      case "integer":
        return this.integer(n, o());
      case "float": {
        const v = Number(this.text(n).replace(/_/g, ""));
        return Number.isFinite(v) ? lit(v, o()) : unk(`${this.short(n)} is not a plain number`, o());
      }
      case "true":
        return lit(true, o());
      case "false":
        return lit(false, o());
      case "none":
        return lit(null, o());
      case "string":
        return this.string(n, f, kind);
      case "concatenated_string":
        return this.concatenated(n, f, kind);
      case "identifier":
        return this.lookup(this.text(n), n, f, kind);
      case "parenthesized_expression": {
        const inner = named(n)[0];
        return inner ? this.ev(inner, f, kind) : unk("empty parentheses", o());
      }
      case "attribute":
        return this.attribute(n, f, kind);
      case "subscript":
        return this.subscript(n, f, kind);
      case "call":
        return this.call(n, f, kind);
      case "binary_operator": {
        const [left, op, right] = n.c;
        if (!left || !op || !right) return unk("incomplete expression", o());
        return this.binary(op.t, this.ev(left, f, kind), this.ev(right, f, kind), n, kind);
      }
      case "unary_operator":
        return this.unary(n, f, kind);
      case "not_operator": {
        const arg = named(n)[0];
        const t = arg ? truthy(this.ev(arg, f, kind)) : null;
        return t === null ? unk(`\`${this.short(n)}\` cannot be decided`, o()) : lit(!t, o());
      }
      case "boolean_operator":
        return this.booleanOp(n, f, kind);
      case "comparison_operator":
        return this.comparison(n, f, kind);
      case "conditional_expression":
        return this.conditional(n, f, kind);
      case "list":
      case "tuple":
      case "expression_list":
        return this.sequence(n, f, kind);
      case "dictionary":
        return this.dictionary(n, f, kind);
      default:
        return unk(`\`${this.short(n)}\` is not evaluated (${n.t.replace(/_/g, " ")})`, o());
    }
  }

  private integer(n: PyNode, o: Org): V {
    const raw = this.text(n).replace(/_/g, "").toLowerCase();
    let v: number;
    if (/^0[xob]/.test(raw)) v = Number(raw);
    else if (/^\d+$/.test(raw)) v = Number(raw);
    else return unk(`${this.short(n)} is not a plain integer`, o);
    return Number.isFinite(v) ? lit(v, o) : unk(`${this.short(n)} is not a plain integer`, o);
  }

  private string(n: PyNode, f: Frame, kind: OriginKind): V {
    const raw = this.text(n);
    const m = /^([A-Za-z]*)('''|"""|'|")/.exec(raw);
    if (!m) return unk("unreadable string", this.org(n, kind));
    const prefix = (m[1] ?? "").toLowerCase();
    const quote = m[2] as string;
    if (!raw.endsWith(quote) || raw.length < m[0].length + quote.length) return unk("unterminated string", this.org(n, kind));
    if (!prefix.includes("f")) {
      const body = raw.slice(m[0].length, raw.length - quote.length);
      return lit(prefix.includes("r") ? body : unescape(body), this.org(n, kind));
    }
    // f-string: literal text between interpolations, each interpolation must be known.
    let out = "";
    let pos = n.s + m[0].length;
    const end = n.e - quote.length;
    const via: string[] = [];
    for (const part of n.c) {
      if (part.t !== "interpolation") continue;
      out += unescape(this.mod.text.slice(pos, part.s));
      pos = part.e;
      const expr = named(part)[0];
      if (!expr || named(part).length > 1) return unk(`f-string part \`${this.short(part)}\` is formatted`, this.org(n, kind));
      const v = this.ev(expr, f, kind);
      if (v.k !== "lit") return unk(`f-string part \`${this.short(part)}\` is not known`, this.org(n, kind));
      out += pythonStr(v.v);
      via.push(...v.o.via);
    }
    out += unescape(this.mod.text.slice(pos, end));
    return lit(out, this.org(n, kind, via));
  }

  private concatenated(n: PyNode, f: Frame, kind: OriginKind): V {
    let out = "";
    for (const part of named(n)) {
      const v = this.string(part, f, kind);
      if (v.k !== "lit" || typeof v.v !== "string") return unk(`\`${this.short(n)}\` is not known`, this.org(n, kind));
      out += v.v;
    }
    return lit(out, this.org(n, kind));
  }

  private lookup(name: string, n: PyNode, f: Frame, kind: OriginKind): V {
    const local = f.vars.get(name);
    if (local !== undefined) {
      // In the recipe's own body the name itself is what a fix replaces; elsewhere the
      // value keeps pointing at where it was written (an argument, a default).
      if (f.isUnit && !f.params.has(name) && isScalar(local)) {
        return reorigin(local, this.org(n, kind, [...local.o.via, `${name} = ${this.short(local.o)} (line ${this.line(local.o.s)})`]));
      }
      return local;
    }
    const constant = this.lookupConstant(name, n, kind);
    if (constant) return constant;
    if (this.mod.fns.has(name) || this.mod.classes.has(name)) return unk(`${name} is a function or class, not a value`, this.org(n, kind));
    const missing = unk(`${name} is not defined in this file`, this.org(n, kind));
    // A capitalized import is most likely a class; a builder may receive it and call it.
    if (/^[A-Z]/.test(name)) missing.ctor = name;
    return missing;
  }

  private lookupConstant(name: string, n: PyNode, kind: OriginKind): V | undefined {
    if (!this.mod.consts.has(name)) return undefined;
    const def = this.mod.consts.get(name);
    if (!def) return unk(`${name} is assigned more than once or conditionally at module level`, this.org(n, kind));
    let value = this.constCache.get(name);
    if (value === "pending") return unk(`${name} is defined in terms of itself`, this.org(n, kind));
    if (!value) {
      this.constCache.set(name, "pending");
      value = this.ev(def.value, this.moduleFrame, "assignment");
      this.constCache.set(name, value);
    }
    if (!isScalar(value)) return value;
    return reorigin(value, this.org(n, kind, [...value.o.via, `${name} = ${this.short(def.value)} (line ${this.line(def.stmt.s)})`]));
  }

  private attribute(n: PyNode, f: Frame, kind: OriginKind): V {
    const base = n.c[0];
    const nameNode = n.c[n.c.length - 1];
    if (!base || !nameNode || nameNode === base) return unk("incomplete attribute", this.org(n, kind));
    const owner = this.ev(base, f, kind);
    if (owner.k !== "obj") return unk(`\`${this.short(n)}\` cannot be resolved${owner.k === "unk" ? ` (${owner.why})` : ""}`, this.org(n, kind));
    const value = this.getField(owner, this.text(nameNode), n);
    if (!isScalar(value)) return value;
    // A read of a setting is the text a fix would replace here, not where it was first set.
    const step = value.o.s !== n.s ? [`${this.short(n)} set at line ${this.line(value.o.s)}`] : [];
    return reorigin(value, this.org(n, kind, [...value.o.via, ...step]));
  }

  private subscript(n: PyNode, f: Frame, kind: OriginKind): V {
    const [container, , index] = n.c;
    if (!container || !index) return unk("incomplete subscript", this.org(n, kind));
    const holder = this.ev(container, f, kind);
    const key = this.ev(index, f, kind);
    let value: V | undefined;
    if (holder.k === "dict" && key.k === "lit" && typeof key.v === "string") value = holder.map.get(key.v);
    else if (holder.k === "list" && key.k === "lit" && typeof key.v === "number" && Number.isInteger(key.v)) {
      value = holder.items[key.v < 0 ? holder.items.length + key.v : key.v];
    }
    if (!value) return unk(`\`${this.short(n)}\` cannot be resolved`, this.org(n, kind));
    return isScalar(value) ? reorigin(value, this.org(n, kind, [...value.o.via, `${this.short(n)} line ${this.line(value.o.s)}`])) : value;
  }

  private binary(op: string, a: V, b: V, n: PyNode, kind: OriginKind): V {
    const o = this.org(n, kind, [...a.o.via, ...b.o.via]);
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
    if (op === "|" && a.k === "dict" && b.k === "dict") return this.mergedDict([a, b], o);
    const why = a.k === "unk" ? a.why : b.k === "unk" ? b.why : `\`${this.short(n)}\` is not evaluated`;
    return unk(why, o);
  }

  private unary(n: PyNode, f: Frame, kind: OriginKind): V {
    const [op, arg] = n.c;
    if (!op || !arg) return unk("incomplete expression", this.org(n, kind));
    const v = this.ev(arg, f, kind);
    const o = this.org(n, kind, v.o.via);
    if (v.k === "lit" && typeof v.v === "number") {
      if (op.t === "-") return lit(-v.v, o);
      if (op.t === "+") return lit(v.v, o);
    }
    return v.k === "unk" ? unk(v.why, o) : unk(`\`${this.short(n)}\` is not evaluated`, o);
  }

  private booleanOp(n: PyNode, f: Frame, kind: OriginKind): V {
    const [left, op, right] = n.c;
    if (!left || !op || !right) return unk("incomplete expression", this.org(n, kind));
    const a = this.ev(left, f, kind);
    const t = truthy(a);
    if (t === null) return unk(`\`${this.short(n)}\` cannot be decided`, this.org(n, kind));
    // Python returns an operand: `a or b` is a when a is truthy.
    if ((op.t === "or" && t) || (op.t === "and" && !t)) return a;
    return this.ev(right, f, kind);
  }

  private comparison(n: PyNode, f: Frame, kind: OriginKind): V {
    const operands: V[] = [];
    const ops: string[] = [];
    let pending = "";
    for (const c of n.c) {
      if (c.t === "comment") continue;
      if (isOperatorToken(c.t)) pending = pending ? `${pending} ${c.t}` : c.t;
      else {
        if (operands.length) ops.push(pending);
        pending = "";
        operands.push(this.ev(c, f, kind));
      }
    }
    const o = this.org(n, kind);
    for (let i = 0; i < ops.length; i++) {
      const r = compare(ops[i] as string, operands[i] as V, operands[i + 1] as V);
      if (r === null) return unk(`\`${this.short(n)}\` cannot be decided`, o);
      if (!r) return lit(false, o);
    }
    return lit(true, o);
  }

  private conditional(n: PyNode, f: Frame, kind: OriginKind): V {
    const [yes, cond, no] = named(n);
    if (!yes || !cond || !no) return unk("incomplete conditional expression", this.org(n, kind));
    const t = truthy(this.ev(cond, f, kind));
    if (t === true) return this.ev(yes, f, kind);
    if (t === false) return this.ev(no, f, kind);
    const a = this.ev(yes, f, kind);
    const b = this.ev(no, f, kind);
    if (sameValue(a, b)) return reorigin(a, this.org(n, kind, a.o.via));
    return unk(`depends on \`${this.short(cond)}\``, this.org(n, kind));
  }

  private sequence(n: PyNode, f: Frame, kind: OriginKind): V {
    const items: V[] = [];
    for (const c of named(n)) {
      if (c.t === "list_splat") {
        const inner = named(c)[0];
        const v = inner ? this.ev(inner, f, kind) : undefined;
        if (v?.k !== "list") return unk(`\`${this.short(c)}\` cannot be expanded`, this.org(n, kind));
        items.push(...v.items);
      } else items.push(this.ev(c, f, kind));
    }
    return { k: "list", items, o: this.org(n, kind) } satisfies ListV;
  }

  private dictionary(n: PyNode, f: Frame, kind: OriginKind): V {
    const d: DictV = { k: "dict", map: new Map(), open: null, o: this.org(n, kind) };
    for (const c of named(n)) {
      if (c.t === "pair") {
        const [keyNode, valueNode] = named(c);
        if (!keyNode || !valueNode) continue;
        const key = this.ev(keyNode, f, kind);
        if (key.k === "lit" && typeof key.v === "string") {
          d.map.delete(key.v);
          d.map.set(key.v, this.ev(valueNode, f, "keyword"));
        } else d.open = `a key of \`${this.short(n)}\` is computed`;
      } else if (c.t === "dictionary_splat") this.splatInto(c, f, d.map, (why) => (d.open = why));
      else d.open = `\`${this.short(c)}\` is not evaluated`;
    }
    return d;
  }

  /** `**name` into a dict or a call: entries keep their origin, plus the dict they came through. */
  private splatInto(splat: PyNode, f: Frame, into: Map<string, V>, open: (why: string) => void): void {
    const inner = named(splat)[0];
    if (!inner) return;
    const v = this.ev(inner, f, "keyword");
    if (v.k !== "dict") {
      open(`\`${this.short(splat)}\` cannot be resolved`);
      return;
    }
    const through = inner.t === "identifier" ? this.text(inner) : null;
    for (const [key, item] of v.map) {
      into.delete(key);
      into.set(key, through ? this.viaDict(item, through, key) : item);
    }
    if (v.open) open(v.open);
  }

  private viaDict(item: V, dictName: string, key: string): V {
    const suffix = `["${key}"] line ${this.line(item.o.s)}`;
    if (item.o.via.some((step) => step.endsWith(suffix))) return item;
    return withVia(item, `${dictName}${suffix}`);
  }

  private mergedDict(parts: DictV[], o: Org): DictV {
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

  // ---------------------------------------------------------------- calls

  private call(n: PyNode, f: Frame, kind: OriginKind): V {
    const callee = n.c[0];
    const argNode = n.c[1];
    if (!callee) return unk("incomplete call", this.org(n, kind));
    const args = argNode?.t === "argument_list" ? this.args(argNode, f) : { pos: [], kw: new Map<string, V>(), open: null };
    if (callee.t === "identifier") {
      const name = this.text(callee);
      const fn = this.mod.fns.get(name);
      if (fn) return this.callFunction(fn, args, n, kind);
      const cls = this.mod.classes.get(name);
      if (cls) return this.construct(name, args, n, kind, cls);
      const builtin = this.builtin(name, args, n, kind);
      if (builtin) return builtin;
      if (/^[A-Z]/.test(name)) return this.construct(name, args, n, kind, undefined);
      // `model_provider(...)` where the parameter holds a class passed in by the recipe.
      const bound = f.vars.get(name);
      if (bound?.k === "unk" && bound.ctor) return this.construct(bound.ctor, args, n, kind, undefined);
      return this.opaqueCall(callee, n, kind);
    }
    if (callee.t === "attribute") {
      const method = this.text(callee.c[callee.c.length - 1] as PyNode);
      const calleeText = this.text(callee);
      if (calleeText === "dataclasses.replace") return this.replace(args, n, kind);
      const receiver = this.ev(callee.c[0] as PyNode, f, kind);
      if (receiver.k === "dict") {
        const r = this.dictMethod(receiver, method, args, n, kind);
        if (r) return r;
      }
      if (/^[A-Z]/.test(method)) return this.construct(method, args, n, kind, undefined);
    }
    return this.opaqueCall(callee, n, kind);
  }

  private args(argNode: PyNode, f: Frame): Args {
    const args: Args = { pos: [], kw: new Map(), open: null };
    for (const c of named(argNode)) {
      if (c.t === "keyword_argument") {
        const nameNode = c.c[0];
        const valueNode = c.c[c.c.length - 1];
        if (!nameNode || !valueNode || valueNode === nameNode) continue;
        const name = this.text(nameNode);
        args.kw.delete(name);
        args.kw.set(name, this.ev(valueNode, f, "keyword"));
      } else if (c.t === "dictionary_splat") {
        this.splatInto(c, f, args.kw, (why) => (args.open = why));
      } else if (c.t === "list_splat") {
        const inner = named(c)[0];
        const v = inner ? this.ev(inner, f, "keyword") : undefined;
        if (v?.k === "list") args.pos.push(...v.items);
        else args.open ??= `\`${this.short(c)}\` cannot be expanded`;
      } else args.pos.push(this.ev(c, f, "keyword"));
    }
    return args;
  }

  private callFunction(fn: FnDef, args: Args, n: PyNode, kind: OriginKind): V {
    if (this.active.includes(fn)) return unk(`${fn.name}() calls itself`, this.org(n, kind));
    if (this.active.length >= MAX_CALL_DEPTH) return unk(`calls nested too deeply at ${fn.name}()`, this.org(n, kind));
    const frame = this.newFrame(false);
    this.bindParams(fn, frame, args);
    this.active.push(fn);
    let status: Status;
    try {
      status = this.execBlock(fn.body.c, frame);
    } finally {
      this.active.pop();
    }
    if (status === "raise") return unk(`${fn.name}() raises`, this.org(n, kind));
    const result = frame.ret ?? lit(null, this.org(n, kind));
    // A scalar result is written, for this caller, as the call expression.
    return isScalar(result) ? reorigin(result, this.org(n, kind, [...result.o.via, `returned by ${fn.name}() line ${this.line(result.o.s)}`])) : result;
  }

  private bindParams(fn: FnDef, frame: Frame, args: Args): void {
    const used = new Set<string>();
    let next = 0;
    for (const p of fn.params) {
      frame.params.add(p.name);
      if (p.star === 1) {
        frame.vars.set(p.name, { k: "list", items: args.pos.slice(next), o: this.org(p.nameNode, "parameter-default") });
        next = args.pos.length;
        continue;
      }
      if (p.star === 2) continue; // after the named ones, so it gets what is left
      frame.vars.set(p.name, this.argumentFor(p, args, next < args.pos.length && !p.kwOnly ? args.pos[next++] : undefined, used));
    }
    const rest = fn.params.find((p) => p.star === 2);
    if (rest) {
      const d: DictV = { k: "dict", map: new Map(), open: args.open, o: this.org(rest.nameNode, "parameter-default") };
      for (const [k, v] of args.kw) if (!used.has(k)) d.map.set(k, v);
      frame.vars.set(rest.name, d);
    }
  }

  private argumentFor(p: ParamInfo, args: Args, positional: V | undefined, used: Set<string>): V {
    if (positional) return positional;
    const byName = args.kw.get(p.name);
    if (byName) {
      used.add(p.name);
      return byName;
    }
    if (args.open) return unk(`${p.name} may be passed through ${args.open}`, this.org(p.nameNode, "parameter-default"));
    if (p.def) return this.ev(p.def, this.moduleFrame, "parameter-default");
    return unk(`parameter ${p.name} has no default`, this.org(p.nameNode, "parameter-default"));
  }

  private construct(name: string, args: Args, n: PyNode, kind: OriginKind, cls: ClassDef | undefined): ObjV {
    const o = obj(name, args.open, this.org(n, kind));
    if (cls) for (const [k, v] of this.classDefaults(cls)) o.fields.set(k, v);
    for (const [k, v] of args.kw) {
      o.fields.delete(k);
      o.fields.set(k, v);
    }
    if (name === "ConfigContainer") for (const [k, v] of o.fields) if (v.k === "obj" && isSection(k)) v.role ??= k;
    return o;
  }

  private replace(args: Args, n: PyNode, kind: OriginKind): V {
    const base = args.pos[0];
    const copy = obj(base?.k === "obj" ? base.ctor : "replace()", null, this.org(n, kind));
    if (base?.k === "obj") {
      copy.opaque = base.opaque;
      copy.role = base.role;
      for (const [k, v] of base.fields) copy.fields.set(k, v);
    } else copy.opaque = `the object given to replace() (${base?.k === "unk" ? base.why : "not known"})`;
    for (const [k, v] of args.kw) {
      copy.fields.delete(k);
      copy.fields.set(k, v);
    }
    if (args.open) copy.opaque ??= args.open;
    return copy;
  }

  private builtin(name: string, args: Args, n: PyNode, kind: OriginKind): V | undefined {
    const o = this.org(n, kind, args.pos.flatMap((a) => a.o.via));
    switch (name) {
      case "replace":
        return this.replace(args, n, kind);
      case "dict": {
        const parts: DictV[] = [];
        const first = args.pos[0];
        if (first) {
          if (first.k !== "dict") return unk(`\`${this.short(n)}\` cannot be resolved`, o);
          parts.push(first);
        }
        parts.push({ k: "dict", map: new Map(args.kw), open: args.open, o });
        return this.mergedDict(parts, o);
      }
      case "int":
      case "float":
      case "str":
      case "bool":
      case "abs":
        return this.convert(name, args.pos[0], o);
      case "max":
      case "min": {
        const nums = args.pos.map((a) => (a.k === "lit" && typeof a.v === "number" ? a.v : null));
        if (nums.length === 0 || nums.some((x) => x === null)) return unk(`\`${this.short(n)}\` cannot be computed`, o);
        return lit(name === "max" ? Math.max(...(nums as number[])) : Math.min(...(nums as number[])), o);
      }
      case "field": {
        const d = args.kw.get("default");
        return d ?? unk("default_factory is not evaluated", o);
      }
      case "setattr":
        return this.setattr(args, n, o);
      default:
        return undefined;
    }
  }

  private convert(name: string, a: V | undefined, o: Org): V {
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

  private setattr(args: Args, n: PyNode, o: Org): V {
    const [target, name, value] = args.pos;
    if (target?.k === "obj" && name?.k === "lit" && typeof name.v === "string" && value) this.setField(target, name.v, value);
    else if (target?.k === "obj") this.note(`setattr() with a computed name is not followed: \`${this.short(n)}\``, n);
    return lit(null, o);
  }

  private dictMethod(d: DictV, method: string, args: Args, n: PyNode, kind: OriginKind): V | undefined {
    switch (method) {
      case "update": {
        const other = args.pos[0];
        if (other && other.k !== "dict") d.open = `\`${this.short(n)}\` cannot be resolved`;
        const entries = [...(other?.k === "dict" ? other.map : []), ...args.kw];
        for (const [k, v] of entries) this.write(d.map, k, v);
        if (other?.k === "dict" && other.open) d.open = other.open;
        if (args.open) d.open = args.open;
        return lit(null, this.org(n, kind));
      }
      case "copy":
        return this.mergedDict([d], this.org(n, kind));
      case "get": {
        const key = args.pos[0];
        if (key?.k !== "lit" || typeof key.v !== "string") return unk(`\`${this.short(n)}\` cannot be resolved`, this.org(n, kind));
        const found = d.map.get(key.v);
        if (found) return found;
        if (d.open) return unk(d.open, this.org(n, kind));
        return args.pos[1] ?? lit(null, this.org(n, kind));
      }
      default:
        return undefined;
    }
  }

  /**
   * The result of a call we do not analyze. A config handed to such a helper may be changed
   * there; that is not noted per call (perf recipes do it in every function).
   */
  private opaqueCall(callee: PyNode, n: PyNode, kind: OriginKind): ObjV {
    const name = this.short(callee);
    return obj(`${name}()`, `${name}(), which is not analyzed`, this.org(n, kind));
  }

  // ---------------------------------------------------------------- helpers

  private write(map: Map<string, V>, key: string, value: V): void {
    // Only changes inside a branch can be undone; elsewhere no log is kept.
    if (this.branchDepth > 0) this.log.push({ map, key, old: map.get(key) });
    // Delete first so the map's order is the order of the last writes.
    map.delete(key);
    map.set(key, value);
  }

  private newFrame(isUnit: boolean): Frame {
    return { vars: new Map(), params: new Set(), isUnit, ret: null };
  }

  private tick(): void {
    if (++this.steps > STEP_BUDGET) throw new BudgetExceeded("evaluation budget exceeded");
  }

  private note(message: string, at: PyNode): void {
    this.notes.push({ message, s: at.s, e: at.e });
  }

  org(n: { s: number; e: number }, kind: OriginKind, via: readonly string[] = []): Org {
    return { s: n.s, e: n.e, kind, via };
  }

  private text(n: PyNode): string {
    return textOf(this.mod.text, n);
  }

  short(n: { s: number; e: number }): string {
    const raw = this.mod.text.slice(n.s, Math.min(n.e, n.s + MAX_SHORT * 2)).replace(/\s+/g, " ");
    return raw.length > MAX_SHORT || n.e - n.s > MAX_SHORT * 2 ? `${raw.slice(0, MAX_SHORT - 3)}...` : raw;
  }

  line(offset: number): number {
    return this.mod.index.point(offset).line;
  }

  private fieldDefault(value: PyNode): V {
    return this.ev(value, this.moduleFrame, "assignment");
  }
}

function isScalar(v: V): boolean {
  return v.k === "lit" || v.k === "unk" || v.k === "list";
}

function isOperatorToken(t: string): boolean {
  return /^(?:<|>|==|>=|<=|!=|<>|in|not|is)$/.test(t);
}

function arithmetic(op: string, x: number, y: number): number | undefined {
  switch (op) {
    case "+":
      return x + y;
    case "-":
      return x - y;
    case "*":
      return x * y;
    case "/":
      return y === 0 ? undefined : x / y;
    case "//":
      return y === 0 ? undefined : Math.floor(x / y);
    case "%":
      return y === 0 ? undefined : x - y * Math.floor(x / y);
    case "**":
      return x ** y;
    case "<<":
      return Number.isInteger(x) && Number.isInteger(y) && y >= 0 && y < 53 ? x * 2 ** y : undefined;
    case ">>":
      return Number.isInteger(x) && Number.isInteger(y) && y >= 0 ? Math.floor(x / 2 ** y) : undefined;
    default:
      return undefined;
  }
}

function compare(op: string, a: V, b: V): boolean | null {
  if (op === "is" || op === "is not") {
    if (a.k === "lit" && b.k === "lit" && (a.v === null || b.v === null)) return (a.v === b.v) === (op === "is");
    if ((a.k === "obj" && a.opaque === null && b.k === "lit" && b.v === null) || (b.k === "obj" && b.opaque === null && a.k === "lit" && a.v === null)) {
      return op === "is not";
    }
    return null;
  }
  if (op === "in" || op === "not in") {
    if (a.k !== "lit") return null;
    let found: boolean | null = null;
    if (b.k === "list" && b.items.every((i) => i.k === "lit")) found = b.items.some((i) => i.k === "lit" && i.v === a.v);
    else if (b.k === "dict" && typeof a.v === "string" && (b.map.has(a.v) || !b.open)) found = b.map.has(a.v);
    else if (b.k === "lit" && typeof b.v === "string" && typeof a.v === "string") found = b.v.includes(a.v);
    return found === null ? null : found === (op === "in");
  }
  if (a.k !== "lit" || b.k !== "lit") {
    if ((op === "==" || op === "!=") && a.k === "list" && b.k === "list" && a.items.every((i) => i.k === "lit") && b.items.every((i) => i.k === "lit")) {
      return sameValue(a, b) === (op === "==");
    }
    return null;
  }
  const x = a.v;
  const y = b.v;
  switch (op) {
    case "==":
      return x === y;
    case "!=":
    case "<>":
      return x !== y;
  }
  if (typeof x === "number" && typeof y === "number") {
    switch (op) {
      case "<":
        return x < y;
      case ">":
        return x > y;
      case "<=":
        return x <= y;
      case ">=":
        return x >= y;
    }
  }
  return null;
}

/** Python's str() of a literal value. */
function pythonStr(v: string | number | boolean | null): string {
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  return String(v);
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0", "\n": "" };

function unescape(s: string): string {
  if (!s.includes("\\")) return s;
  return s.replace(/\\(.)/gs, (whole, ch: string) => ESCAPES[ch] ?? whole);
}
