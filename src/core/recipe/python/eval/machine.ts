// The interpreter's state, shared by every part of the evaluator (expressions, statements,
// calls, containers): the undo log that branches use, the step budget, notes, and which
// module's text the nodes being evaluated belong to.
import type { OriginKind } from "../../../model/settings.ts";
import type { ModuleLibrary } from "../library.ts";
import type { FnDef, ModuleInfo } from "../module.ts";
import { textOf, type PyNode } from "../tree.ts";
import type { Org, V } from "../values.ts";

export interface Frame {
  vars: Map<string, V>;
  params: Set<string>;
  /** The recipe being extracted: names used here are replaced in place by a fix. */
  isUnit: boolean;
  ret: V | null;
}

export type Status = "ok" | "return" | "raise";

export interface Args {
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

interface LogEntry {
  map: Map<string, V>;
  key: string;
  old: V | undefined;
}

/** Thrown when one unit needs more work than any real recipe does; the unit is skipped with a note. */
export class BudgetExceeded extends Error {}

/**
 * Thrown when one file needs more work than any real recipe module does (in all its units):
 * the rest of the file is not analyzed, and a diagnostic says so (units.ts).
 */
export class FileBudgetExceeded extends Error {}

export const MAX_DEPTH = 150;
export const MAX_CALL_DEPTH = 12;
const STEP_BUDGET = 200_000;
/** Steps for all units of one file together: 20 units at the per-unit limit. */
export const FILE_STEP_BUDGET = 4_000_000;
const MAX_SHORT = 60;
/** The via of an origin that names no step: shared, never changed (Org.via is read-only). */
const NO_VIA: readonly string[] = Object.freeze([]);

export class Machine {
  /** The module whose nodes are being evaluated (changes while a builder of another module runs). */
  mod: ModuleInfo;
  log: LogEntry[] = [];
  branchDepth = 0;
  depth = 0;
  private steps = 0;
  /** Not reset between units: the file's whole evaluation is bounded. */
  private fileSteps = 0;
  active: FnDef[] = [];
  private constCaches = new Map<ModuleInfo, Map<string, V | "pending">>();
  private moduleFrames = new Map<ModuleInfo, Frame>();
  notes: EvalNote[] = [];
  /** The outermost call the unit's own code is running, if any (see Org.site). */
  site: { s: number; e: number } | null = null;
  /** How many functions were active when `site`'s call started (its callee's body runs one deeper). */
  siteDepth = 0;
  /** The call the function called at `site` is running, in its module (see Org.baseSite). */
  baseSite: { s: number; e: number; mod: ModuleInfo } | null = null;

  constructor(
    /** The module being extracted: values from it keep plain origins, others carry their module. */
    readonly root: ModuleInfo,
    /** Other modules of the analyzed tree, for builders and constants imported from them. */
    readonly library: ModuleLibrary | undefined,
  ) {
    this.mod = root;
  }

  /** Fresh state for the next unit: module objects are mutable, so no unit sees another's changes. */
  reset(): void {
    this.mod = this.root;
    this.log = [];
    this.branchDepth = 0;
    this.depth = 0;
    this.steps = 0;
    this.active = [];
    this.constCaches = new Map();
    this.notes = [];
    this.site = null;
    this.baseSite = null;
  }

  /** Runs `fn` with `mod` as the current module. */
  inModule<T>(mod: ModuleInfo, fn: () => T): T {
    if (mod === this.mod) return fn();
    const saved = this.mod;
    this.mod = mod;
    try {
      return fn();
    } finally {
      this.mod = saved;
    }
  }

  /** The frame module-level code (constants, parameter defaults, class bodies) runs in. */
  moduleFrame(): Frame {
    let frame = this.moduleFrames.get(this.mod);
    if (!frame) this.moduleFrames.set(this.mod, (frame = newFrame(false)));
    return frame;
  }

  constCache(): Map<string, V | "pending"> {
    let cache = this.constCaches.get(this.mod);
    if (!cache) this.constCaches.set(this.mod, (cache = new Map()));
    return cache;
  }

  write(map: Map<string, V>, key: string, value: V): void {
    // Only changes inside a branch can be undone; elsewhere no log is kept.
    if (this.branchDepth > 0) this.log.push({ map, key, old: map.get(key) });
    // Delete first so the map's order is the order of the last writes.
    map.delete(key);
    map.set(key, value);
  }

  undo(mark: number): void {
    while (this.log.length > mark) {
      const entry = this.log.pop() as LogEntry;
      if (entry.old === undefined) entry.map.delete(entry.key);
      else entry.map.set(entry.key, entry.old);
    }
  }

  /** For every map written since `mark`, the keys written and their current values. */
  effectsSince(mark: number): Map<Map<string, V>, Map<string, V | undefined>> {
    const effects = new Map<Map<string, V>, Map<string, V | undefined>>();
    for (let i = mark; i < this.log.length; i++) {
      const entry = this.log[i] as LogEntry;
      let keys = effects.get(entry.map);
      if (!keys) effects.set(entry.map, (keys = new Map()));
      keys.set(entry.key, entry.map.get(entry.key));
    }
    return effects;
  }

  tick(): void {
    if (++this.fileSteps > FILE_STEP_BUDGET) throw new FileBudgetExceeded("file evaluation budget exceeded");
    if (++this.steps > STEP_BUDGET) throw new BudgetExceeded("evaluation budget exceeded");
  }

  /** A note about the unit; notes from other modules are dropped (their values say why they are unknown). */
  note(message: string, at: PyNode): void {
    if (this.mod === this.root) this.notes.push({ message, s: at.s, e: at.e });
  }

  org(n: { s: number; e: number }, kind: OriginKind, via: readonly string[] = NO_VIA): Org {
    const o: Org = this.mod === this.root ? { s: n.s, e: n.e, kind, via } : { s: n.s, e: n.e, kind, via, mod: this.mod };
    if (this.site) o.site = this.site;
    if (this.baseSite) o.baseSite = this.baseSite;
    return o;
  }

  text(n: PyNode): string {
    return textOf(this.mod.text, n);
  }

  short(n: { s: number; e: number }): string {
    const raw = this.mod.text.slice(n.s, Math.min(n.e, n.s + MAX_SHORT * 2)).replace(/\s+/g, " ");
    return raw.length > MAX_SHORT || n.e - n.s > MAX_SHORT * 2 ? `${raw.slice(0, MAX_SHORT - 3)}...` : raw;
  }

  /** The text of a value's origin, in the module it was written in. */
  shortOrg(o: Org): string {
    return o.mod && o.mod !== this.mod ? this.inModule(o.mod, () => this.short(o)) : this.short(o);
  }

  line(offset: number): number {
    return this.mod.index.point(offset).line;
  }

  /** "line 12", or "recipes/common.py line 12" for a value written in another module. */
  where(o: Org): string {
    const mod = o.mod ?? this.root;
    const line = mod.index.point(o.s).line;
    return mod === this.mod ? `line ${line}` : `${mod.path} line ${line}`;
  }
}

export function newFrame(isUnit: boolean): Frame {
  return { vars: new Map(), params: new Set(), isUnit, ret: null };
}

export function isScalar(v: V): boolean {
  return v.k === "lit" || v.k === "unk" || v.k === "list";
}
