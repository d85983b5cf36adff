// Asking `python3` where megatron.bridge lives costs a process start (with pyenv's shims, half
// a second) on every lint of a user's script. The answer is remembered in the private cache
// folder (the one that holds lint's compile cache), per environment (working folder, PATH,
// VIRTUAL_ENV, PYTHONPATH, CONDA_PREFIX, PYENV_VERSION), together with the folders on Python's
// module path and their modification times. An install or uninstall adds or removes an entry
// in one of those folders and so changes its time; then, or after an hour, or when anything in
// the entry cannot be read back, python3 is asked again. No cache folder: asked every time.
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheDirFrom, privateDir } from "./code-cache.ts";

/** What the probe learned: the package's root (null: not importable) and Python's module path. */
export interface PythonAnswer {
  root: string | null;
  path: string[];
}

const MAX_AGE_MS = 60 * 60 * 1000;
const MAX_ENTRIES = 32;
const FILE = "python-bridge.json";

/** One remembered answer; a folder that did not exist is watched with the time -1. */
interface Entry {
  key: string;
  at: number;
  root: string | null;
  watched: [string, number][];
}

/** The key of an environment: what decides which python3 runs and what it can import. */
export function environmentKey(env: NodeJS.ProcessEnv, cwd: string): string {
  return JSON.stringify([cwd, env.PATH ?? "", env.VIRTUAL_ENV ?? "", env.PYTHONPATH ?? "", env.CONDA_PREFIX ?? "", env.PYENV_VERSION ?? ""]);
}

/** The remembered answer for this environment, if every watched folder is as it was; else undefined. */
export function rememberedRoot(env: NodeJS.ProcessEnv, cwd: string, now = Date.now()): { root: string | null } | undefined {
  const dir = cacheFolder(env);
  if (dir === undefined) return undefined;
  const key = environmentKey(env, cwd);
  const entry = readEntries(dir).find((e) => e.key === key);
  if (!entry || now - entry.at > MAX_AGE_MS || now < entry.at) return undefined;
  return entry.watched.every(([folder, mtime]) => modified(folder) === mtime) ? { root: entry.root } : undefined;
}

/** Remembers python3's answer for this environment (best effort: a cache that cannot be written is no error). */
export function rememberRoot(env: NodeJS.ProcessEnv, cwd: string, answer: PythonAnswer, now = Date.now()): void {
  const dir = cacheFolder(env);
  if (dir === undefined) return;
  const key = environmentKey(env, cwd);
  const folders = new Set(answer.path.map((p) => (p === "" ? cwd : p)));
  if (answer.root !== null) folders.add(join(answer.root, "megatron", "bridge"));
  const watched = [...folders].map((folder): [string, number] => [folder, modified(folder)]);
  const entries = [{ key, at: now, root: answer.root, watched }, ...readEntries(dir).filter((e) => e.key !== key)].slice(0, MAX_ENTRIES);
  try {
    const tmp = join(dir, `${FILE}.${process.pid}.tmp`);
    writeFileSync(tmp, JSON.stringify(entries), { mode: 0o600 });
    renameSync(tmp, join(dir, FILE));
  } catch {
    // an unwritable cache only means python3 is asked again next time
  }
}

/** The private cache folder (made if missing, as lint's compile cache is), or undefined: none. */
function cacheFolder(env: NodeJS.ProcessEnv): string | undefined {
  const dir = cacheDirFrom(env);
  return dir !== undefined && privateDir(dir) ? dir : undefined;
}

// Checked by hand, not with a zod schema: lint loads zod only for files that need it (the
// lint-bundle test), and this runs on every lint of a user's script.
function readEntries(dir: string): Entry[] {
  try {
    const data: unknown = JSON.parse(readFileSync(join(dir, FILE), "utf8"));
    return Array.isArray(data) ? data.filter(isEntry).slice(0, MAX_ENTRIES) : [];
  } catch {
    return [];
  }
}

function isEntry(e: unknown): e is Entry {
  if (typeof e !== "object" || e === null) return false;
  const { key, at, root, watched } = e as Record<string, unknown>;
  return (
    typeof key === "string" &&
    typeof at === "number" &&
    (root === null || typeof root === "string") &&
    Array.isArray(watched) &&
    watched.every((w) => Array.isArray(w) && w.length === 2 && typeof w[0] === "string" && typeof w[1] === "number")
  );
}

/** A folder's modification time in ms; -1 when it is not a folder that can be read. */
function modified(folder: string): number {
  try {
    const info = statSync(folder);
    return info.isDirectory() ? info.mtimeMs : -1;
  } catch {
    return -1;
  }
}
