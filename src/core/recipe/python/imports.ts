// The import statements of a Python module, read from its text, and where an imported
// module lives in a tree of files. Used to follow builders and constants that recipes
// import from other modules of the same repository (`from megatron.bridge.recipes.llama.common
// import _llama3_common`, `from ..common import _pretrain_common`).

/** What a local name is bound to by an import. */
export interface ImportBinding {
  /** Dotted module name as written, without the leading dots. */
  module: string;
  /** Leading dots of a relative import (0: absolute). */
  level: number;
  /** The imported name; null when the local name is the module itself (`import a.b as c`). */
  name: string | null;
}

export interface ModuleImports {
  names: Map<string, ImportBinding>;
  /** `from X import *`. */
  stars: Array<{ module: string; level: number }>;
}

const IMPORT_LINE = /^[ \t]*(?:from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import\b|import[ \t]+)/gm;
const IDENT = /^[A-Za-z_]\w*$/;
const DOTTED = /^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$/;

/** The statement text after `import`, up to its end (parentheses and backslashes continue it). */
function statementTail(text: string, from: number): string {
  let i = from;
  while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  if (text[i] === "(") {
    const close = text.indexOf(")", i);
    return text.slice(i + 1, close < 0 ? text.length : close);
  }
  let end = i;
  for (;;) {
    const nl = text.indexOf("\n", end);
    if (nl < 0) return text.slice(i);
    if (text[nl - 1] === "\\" || (text[nl - 1] === "\r" && text[nl - 2] === "\\")) {
      end = nl + 1;
      continue;
    }
    return text.slice(i, nl);
  }
}

function items(tail: string): Array<{ name: string; as: string }> {
  return tail
    .replace(/#[^\n]*/g, "")
    .replace(/\\\r?\n/g, " ")
    .split(",")
    .map((part) => part.trim().split(/\s+as\s+/))
    .filter((p) => p[0])
    .map((p) => ({ name: p[0] as string, as: (p[1] ?? p[0]) as string }));
}

export function scanImports(text: string): ModuleImports {
  const out: ModuleImports = { names: new Map(), stars: [] };
  if (!text.includes("import")) return out;
  IMPORT_LINE.lastIndex = 0;
  for (let m = IMPORT_LINE.exec(text); m; m = IMPORT_LINE.exec(text)) {
    const tail = statementTail(text, m.index + m[0].length);
    if (m[0].trimStart().startsWith("from")) {
      const level = (m[1] ?? "").length;
      const module = m[2] ?? "";
      if (level === 0 && !module) continue;
      for (const it of items(tail)) {
        if (it.name === "*") out.stars.push({ module, level });
        else if (IDENT.test(it.name) && IDENT.test(it.as)) out.names.set(it.as, { module, level, name: it.name });
      }
    } else {
      for (const it of items(tail)) {
        // `import a.b.c as d` binds d to the module; plain `import a.b` binds only `a`.
        if (it.as !== it.name && DOTTED.test(it.name) && IDENT.test(it.as)) out.names.set(it.as, { module: it.name, level: 0, name: null });
        else if (IDENT.test(it.name)) out.names.set(it.name, { module: it.name, level: 0, name: null });
      }
    }
  }
  return out;
}

function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

const join = (...parts: string[]): string => parts.filter((p) => p !== "").join("/");

/**
 * Paths that may hold `module` as imported from `fromPath`, most likely first. Absolute
 * names are placed under the folder that holds the importing file's top-level package
 * (`src/` for `src/megatron/bridge/...`), or next to the importing file.
 */
export function candidatePaths(fromPath: string, module: string, level: number): string[] {
  const parts = module ? module.split(".") : [];
  const bases: string[] = [];
  if (level > 0) {
    let dir = dirname(fromPath);
    for (let i = 1; i < level; i++) dir = dirname(dir);
    bases.push(dir);
  } else {
    const top = parts[0];
    if (!top) return [];
    const segments = fromPath.split("/");
    const at = segments.lastIndexOf(top, segments.length - 2);
    if (at >= 0) bases.push(segments.slice(0, at).join("/"));
    bases.push(dirname(fromPath));
  }
  const out: string[] = [];
  for (const base of bases) {
    const stem = join(base, ...parts);
    if (!stem) continue;
    if (parts.length > 0) out.push(`${stem}.py`);
    out.push(`${stem}/__init__.py`);
  }
  return [...new Set(out)];
}

/**
 * Where the modules a file imports from its own repository may live, for a reader that
 * cannot list the tree (the PR review reads files by path at a commit). Relative imports
 * resolve next to the file; absolute ones only under the folder holding the file's own
 * top-level package (`megatron.bridge.…` from `src/megatron/bridge/…`), so third-party
 * imports (`torch`, `megatron.core` from a Bridge file) cost at most a missing path.
 */
export function importCandidates(fromPath: string, text: string): string[] {
  const imports = scanImports(text);
  const segments = fromPath.split("/");
  const out = new Set<string>();
  const add = (module: string, level: number) => {
    if (level === 0) {
      const top = module.split(".")[0] ?? "";
      if (!top || segments.lastIndexOf(top, segments.length - 2) < 0) return;
    }
    // The first candidate is the package-root (or relative) one; the second, next to the file, only for relative imports.
    for (const p of candidatePaths(fromPath, module, level).slice(0, 2)) out.add(p);
  };
  for (const b of imports.names.values()) {
    add(b.module, b.level);
    if (b.name !== null) add(b.module ? `${b.module}.${b.name}` : b.name, b.level);
  }
  for (const s of imports.stars) add(s.module, s.level);
  return [...out];
}
