// Reads the files named on the command line: files as given, folders through the
// default globs (docs/domain.md 1.1). A glob matches a path or any tail of it that starts at
// a folder boundary, so `lint .`, `lint /abs/checkout` and `lint src/megatron/...` agree.
// The path is taken from the project root (the nearest folder above with `.git` or
// `pyproject.toml`), so a folder deep inside a checkout (`cd src/megatron/bridge/recipes &&
// hcp-bot lint .`) is read through the same globs as the whole checkout.
import type { Stats } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { SourceFile } from "../core/model/source.ts";
import { readBytes, readEntries, statPath } from "./fs-callbacks.ts";
import { classifyFile, compileGlobs, DEFAULT_GLOBS } from "../core/analyze/classify.ts";

const SKIPPED_DIRS = new Set([".git", "node_modules", ".venv", "venv", "__pycache__", "3rdparty", ".tox", ".mypy_cache", "dist", "build"]);

export class InputError extends Error {}

export interface CollectOptions {
  globs?: readonly string[];
  /** Read every file the analyzer understands below a folder, not only the default globs. */
  all?: boolean;
}

function matchesAnyTail(path: string, match: (p: string) => boolean): boolean {
  if (match(path)) return true;
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
    if (match(path.slice(i + 1))) return true;
  }
  return false;
}

async function walk(dir: string, out: string[]): Promise<void> {
  const entries = await readEntries(dir);
  for (const e of entries) {
    if (e.isDirectory()) {
      if (!SKIPPED_DIRS.has(e.name)) await walk(join(dir, e.name), out);
    } else if (e.isFile()) out.push(join(dir, e.name));
  }
}

/** Display path: relative to the working folder when below it, with `/` separators. */
export function displayPath(p: string, cwd = process.cwd()): string {
  const rel = relative(cwd, p);
  const shown = rel.startsWith("..") ? p : rel;
  return shown.split(sep).join("/");
}

const ROOT_MARKERS = [".git", "pyproject.toml"];

/** The nearest folder at or above `dir` holding `.git` or `pyproject.toml`; undefined when none does. */
export async function projectRoot(dir: string): Promise<string | undefined> {
  for (let at = resolve(dir); ; at = dirname(at)) {
    for (const marker of ROOT_MARKERS) {
      if (await statPath(join(at, marker)).then(() => true, () => false)) return at;
    }
    if (dirname(at) === at) return undefined;
  }
}

export async function collectPaths(inputs: readonly string[], options: CollectOptions = {}, cwd = process.cwd()): Promise<string[]> {
  return (await collectInputs(inputs, options, cwd)).paths;
}

export interface Collected {
  paths: string[];
  /** Folders given that hold no file the globs select: never a quiet pass. */
  unmatched: string[];
}

export async function collectInputs(inputs: readonly string[], options: CollectOptions = {}, cwd = process.cwd()): Promise<Collected> {
  const match = compileGlobs(options.globs ?? DEFAULT_GLOBS);
  const picked = new Set<string>();
  const unmatched: string[] = [];
  for (const input of inputs) {
    let info;
    try {
      info = await statPath(input);
    } catch (error) {
      throw new InputError(`cannot read ${input}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or folder" : String(error)}`);
    }
    if (info.isFile()) {
      picked.add(input);
      continue;
    }
    if (!info.isDirectory()) {
      // Reading /dev/zero never ends and a FIFO blocks: only regular files and folders are linted.
      throw new InputError(`cannot lint ${input}: it is a ${specialKind(info)}, not a regular file or folder`);
    }
    const found: string[] = [];
    await walk(input, found);
    const root = await projectRoot(input);
    let any = false;
    for (const f of found) {
      const shown = displayPath(f, cwd);
      if (!classifyFile(shown)) continue;
      const fromRoot = root === undefined ? undefined : relative(root, resolve(f)).split(sep).join("/");
      if (options.all || matchesAnyTail(shown, match) || (fromRoot !== undefined && matchesAnyTail(fromRoot, match))) {
        picked.add(f);
        any = true;
      }
    }
    if (!any) unmatched.push(input);
  }
  return { paths: [...picked].sort(), unmatched };
}

function specialKind(info: Stats): string {
  if (info.isCharacterDevice()) return "character device";
  if (info.isBlockDevice()) return "block device";
  if (info.isFIFO()) return "FIFO (named pipe)";
  if (info.isSocket()) return "socket";
  return "special file";
}

/**
 * Files above this many bytes are not read: UTF-8 needs at least one byte per character
 * and at most four, so such a file is certainly over the analyzer's 16 Mi-character limit.
 */
export const MAX_READ_BYTES = 4 * 16 * 1024 * 1024;

export interface ReadResult {
  files: SourceFile[];
  /** Files that were not read, with why (too large); the caller reports them, never skips them quietly. */
  unread: Array<{ path: string; reason: string }>;
}

export async function readSources(paths: readonly string[], cwd = process.cwd()): Promise<ReadResult> {
  const read = await Promise.all(
    paths.map(async (p): Promise<SourceFile | { path: string; reason: string }> => {
      const path = displayPath(p, cwd);
      try {
        const info = await statPath(p);
        if (!info.isFile()) return { path, reason: `it is a ${specialKind(info)}, not a regular file` };
        if (info.size > MAX_READ_BYTES) return { path, reason: `${info.size} bytes is over the 16 Mi-character limit` };
        const bytes = await readBytes(p);
        return { path, text: bytes.toString("utf8") };
      } catch (error) {
        throw new InputError(`cannot read ${p}: ${(error as Error).message}`);
      }
    }),
  );
  const out: ReadResult = { files: [], unread: [] };
  for (const r of read) {
    if ("text" in r) out.files.push(r);
    else out.unread.push(r);
  }
  return out;
}
