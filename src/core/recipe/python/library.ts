// The other Python modules of the analyzed tree, parsed on demand, so a recipe's call to
// a builder imported from another module (or a constant imported from one) is evaluated
// as if it were written in the recipe's own file. Bounded: a name is followed through at
// most MAX_HOPS re-exports, and at most MAX_MODULES modules are parsed per extraction.
import type { SourceFile } from "../../model/source.ts";
import type { Diagnostic } from "../types.ts";
import { candidatePaths, scanImports, type ImportBinding, type ModuleImports } from "./imports.ts";
import type { ClassDef, ConstDef, FnDef, ModuleInfo } from "./module.ts";
import type { V } from "./values.ts";

export type ResolvedName =
  | { kind: "fn"; fn: FnDef; mod: ModuleInfo }
  | { kind: "class"; cls: ClassDef; mod: ModuleInfo }
  | { kind: "const"; name: string; def: ConstDef; mod: ModuleInfo }
  | { kind: "module"; mod: ModuleInfo };

const MAX_HOPS = 5;
/** Larger modules are not builders anyone imports; they are not parsed as library modules. */
const MAX_MODULE_CHARS = 2_000_000;
/** Parsed modules kept at once (by source size); the least recently used are dropped and parsed again if needed. */
const MAX_CACHED_CHARS = 6_000_000;

/** A parsed module and its first syntax error (reported by the file's own extraction). */
export interface ParsedModule {
  mod: ModuleInfo;
  syntax: Diagnostic | null;
}

export type ParseModule = (file: SourceFile) => ParsedModule | undefined;

export class ModuleLibrary {
  private readonly files = new Map<string, SourceFile>();
  /** In least-recently-used order. */
  private readonly parsed = new Map<string, ParsedModule | null>();
  private targets: Set<string> | undefined;
  private cachedChars = 0;
  private readonly imports = new Map<string, ModuleImports>();
  // Weak: the modules being extracted come and go; their answers must not keep their trees alive.
  private readonly names = new WeakMap<ModuleInfo, Map<string, ResolvedName | null>>();
  private suffixes: Map<string, string[]> | undefined;
  private readonly direct = new Map<string, string | undefined>();
  /** Results of builders called without arguments, evaluated once per extraction (see calls.ts). */
  readonly memo = new WeakMap<FnDef, V>();
  /** Memoized results made as a unit's outermost call, whose Org.baseSite are the builder's own calls. */
  readonly memoOutermost = new WeakSet<FnDef>();

  constructor(
    files: readonly SourceFile[],
    private readonly parse: ParseModule,
  ) {
    for (const f of files) if (f.path.endsWith(".py")) this.files.set(f.path, f);
  }

  /** What `name` is in `from`, when it comes from a module of the tree (undefined otherwise). */
  resolveName(from: ModuleInfo, name: string): ResolvedName | undefined {
    let cache = this.names.get(from);
    if (!cache) this.names.set(from, (cache = new Map()));
    if (cache.has(name)) return cache.get(name) ?? undefined;
    cache.set(name, null); // a cycle of re-exports resolves to nothing
    const found = this.resolveImported(from, name, 0);
    cache.set(name, found ?? null);
    return found;
  }

  private resolveImported(from: ModuleInfo, name: string, hops: number): ResolvedName | undefined {
    if (hops > MAX_HOPS) return undefined;
    const imports = this.importsOf(from);
    const binding = imports.names.get(name);
    if (binding) return this.resolveBinding(from, binding, hops);
    // `from x import *` brings in public names only (no __all__ handling: private names stay unresolved).
    if (name.startsWith("_")) return undefined;
    for (const star of imports.stars) {
      const mod = this.moduleAt(from.path, star.module, star.level);
      const found = mod && (defined(mod, name) ?? this.resolveImported(mod, name, hops + 1));
      if (found) return found;
    }
    return undefined;
  }

  private resolveBinding(from: ModuleInfo, b: ImportBinding, hops: number): ResolvedName | undefined {
    if (b.name === null) {
      const mod = this.moduleAt(from.path, b.module, b.level);
      return mod ? { kind: "module", mod } : undefined;
    }
    const mod = this.moduleAt(from.path, b.module, b.level);
    const found = mod && (defined(mod, b.name) ?? this.resolveImported(mod, b.name, hops + 1));
    if (found) return found;
    // `from package import submodule`.
    const sub = this.moduleAt(from.path, b.module ? `${b.module}.${b.name}` : b.name, b.level);
    return sub ? { kind: "module", mod: sub } : undefined;
  }

  private importsOf(mod: ModuleInfo): ModuleImports {
    let imports = this.imports.get(mod.path);
    if (!imports) this.imports.set(mod.path, (imports = scanImports(mod.text)));
    return imports;
  }

  private moduleAt(fromPath: string, module: string, level: number): ModuleInfo | undefined {
    const path = this.pathOf(fromPath, module, level);
    return path ? this.module(path) : undefined;
  }

  private module(path: string): ModuleInfo | undefined {
    return this.parsedModule(path)?.mod;
  }

  /** The file parsed (once per extraction, within the cache budget); undefined when it is not in the tree. */
  parsedModule(path: string): ParsedModule | undefined {
    if (this.parsed.has(path)) {
      const hit = this.parsed.get(path) ?? null;
      this.parsed.delete(path);
      this.parsed.set(path, hit);
      return hit ?? undefined;
    }
    const file = this.files.get(path);
    const parsed = file && file.text.length <= MAX_MODULE_CHARS ? this.parse(file) : undefined;
    this.parsed.set(path, parsed ?? null);
    this.cachedChars += parsed ? file!.text.length : 0;
    for (const [old, info] of this.parsed) {
      if (this.cachedChars <= MAX_CACHED_CHARS || old === path) break;
      this.parsed.delete(old);
      if (info) this.cachedChars -= info.mod.text.length;
    }
    return parsed;
  }

  /** Whether some file of the tree imports this one (then its extraction shares the library's parse). */
  isImportTarget(path: string): boolean {
    if (!this.targets) {
      this.targets = new Set();
      for (const file of this.files.values()) for (const p of importedPaths(this, file)) this.targets.add(p);
    }
    return this.targets.has(path);
  }

  /** The file holding `module`: the usual places first, then any file whose path ends with the dotted name. */
  pathOf(fromPath: string, module: string, level: number): string | undefined {
    const direct = this.directPath(fromPath, module, level);
    if (direct || level > 0 || !module.includes(".")) return direct;
    const hits = this.suffixIndex().get(module) ?? [];
    if (hits.length <= 1) return hits[0];
    // Two checkouts in one tree: the one nearest the importing file.
    const shared = (p: string) => commonPrefix(p, fromPath);
    const best = Math.max(...hits.map(shared));
    const nearest = hits.filter((p) => shared(p) === best);
    return nearest.length === 1 ? nearest[0] : undefined;
  }

  /**
   * The first of the usual places that is a file of the tree. They depend only on the importing
   * file's folder, so the answer is kept per folder: every recipe of a family imports the same modules.
   */
  private directPath(fromPath: string, module: string, level: number): string | undefined {
    const key = `${level} ${module} ${fromPath.slice(0, fromPath.lastIndexOf("/") + 1)}`;
    if (this.direct.has(key)) return this.direct.get(key);
    const found = candidatePaths(fromPath, module, level).find((p) => this.files.has(p));
    this.direct.set(key, found);
    return found;
  }

  private suffixIndex(): Map<string, string[]> {
    if (this.suffixes) return this.suffixes;
    const index = new Map<string, string[]>();
    for (const path of this.files.keys()) {
      const parts = path.replace(/\.py$/, "").split("/");
      if (parts[parts.length - 1] === "__init__") parts.pop();
      for (let i = parts.length - 2; i >= 0; i--) {
        const key = parts.slice(i).join(".");
        const list = index.get(key);
        if (list) list.push(path);
        else index.set(key, [path]);
      }
    }
    return (this.suffixes = index);
  }
}

function defined(mod: ModuleInfo, name: string): ResolvedName | undefined {
  const fn = mod.fns.get(name);
  if (fn) return { kind: "fn", fn, mod };
  const cls = mod.classes.get(name);
  if (cls) return { kind: "class", cls, mod };
  const def = mod.consts.get(name);
  return def ? { kind: "const", name, def, mod } : undefined;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * The modules of `all` that `files` import, directly or through up to `depth` further
 * imports, that are not in `files` themselves: what an extractor of `files` needs in its
 * library. Read from import statements only (nothing is parsed).
 */
export function importClosure(files: readonly SourceFile[], all: readonly SourceFile[], depth = MAX_HOPS): SourceFile[] {
  const paths = new ModuleLibrary(all, () => undefined);
  const byPath = new Map(all.map((f) => [f.path, f]));
  const own = new Set(files.map((f) => f.path));
  const out: SourceFile[] = [];
  // A file without a def (a compatibility module that only re-exports names) runs no builder, so
  // it needs no library; a re-exporting __init__.py reached from a builder is still followed.
  let frontier = files.filter((f) => f.path.endsWith(".py") && DEFINES.test(f.text));
  const seen = new Set<string>(frontier.map((f) => f.path));
  for (let level = 0; level <= depth && frontier.length > 0; level++) {
    const next: SourceFile[] = [];
    for (const file of frontier) {
      for (const target of importedPaths(paths, file)) {
        if (seen.has(target)) continue;
        seen.add(target);
        const f = byPath.get(target);
        if (!f) continue;
        // A module of the shard itself is not sent again, but what it imports is (a re-export chain).
        if (!own.has(target)) out.push(f);
        next.push(f);
      }
    }
    frontier = next;
  }
  return out;
}

const DEFINES = /^[ \t]*(?:async[ \t]+)?def[ \t]/m;

function importedPaths(paths: ModuleLibrary, file: SourceFile): string[] {
  const imports = scanImports(file.text);
  const out: string[] = [];
  const add = (module: string, level: number) => {
    const p = paths.pathOf(file.path, module, level);
    if (p) out.push(p);
  };
  for (const b of imports.names.values()) {
    add(b.module, b.level);
    if (b.name !== null) add(b.module ? `${b.module}.${b.name}` : b.name, b.level);
  }
  for (const s of imports.stars) add(s.module, s.level);
  return out;
}
