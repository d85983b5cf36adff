// Runs a CommonJS bundle with a V8 code cache, so a second start skips compiling it (the
// technique of v8-compile-cache; Node 20 has no module.enableCompileCache). `hcp-bot lint`
// runs dist/lint.cjs this way: compiling the bundle and its functions was ~70 ms of a small
// lint (bench:cli).
//
// The cache holds V8 bytecode that the process will run, so it is only read from a folder
// this user owns and no one else can write to, under a name that covers the bundle's text,
// Node's version, the platform and the V8 flags of the process (V8 itself only checks the
// text's length, its own version and the flags). The text is named by the SHA-256 the build
// writes on the bundle's first line (hashing it here would cost loading node:crypto, ~8 ms,
// at every start) together with its size and modification time, so a bundle changed after
// the build is compiled afresh. V8 does not check the bytes themselves (a damaged cache
// crashes the process in its deserializer), so the file carries a CRC-32 of them, checked
// before V8 sees them. A cache that fails a check is replaced after the run; a folder that
// cannot be made or written means no cache, never an error.
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { crc32 } from "node:zlib";

/** HCP_BOT_CACHE_DIR, else $XDG_CACHE_HOME/hcp-bot, else ~/.cache/hcp-bot; undefined: no cache ("off" or "" turns it off). */
export function cacheDirFrom(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const given = env.HCP_BOT_CACHE_DIR;
  if (given !== undefined) return given === "" || given === "off" ? undefined : given;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "hcp-bot");
  try {
    return join(homedir(), ".cache", "hcp-bot");
  } catch {
    return undefined;
  }
}

export interface CachedScript<T> {
  /** The bundle's `module.exports`. */
  exports: T;
  /** Where the cache is (or would be) kept; undefined when there is none. */
  cacheFile: string | undefined;
  /** "accepted": compiled from the cache; "rejected": V8 refused it; "none": no cache was read. */
  cache: "accepted" | "rejected" | "none";
  /** Writes the cache when it was missing or rejected; call after the work, so the functions it ran are in it. */
  saveCache(): void;
}

const WRAPPER_HEAD = "(function (exports, require, module, __filename, __dirname) {\n";
const WRAPPER_TAIL = "\n})";

/** The first line of a bundle the build has hashed: `//sha256=HEX` of the rest of the file. */
export const BUNDLE_HASH_LINE = /^\/\/sha256=([0-9a-f]{64})\n/;

/** Loads and runs `file` (CommonJS) with the code cache kept in `cacheDir` (none for a bundle without its hash line). */
export function runCachedScript<T>(file: string, cacheDir: string | undefined): CachedScript<T> {
  const { source, size, mtimeMs } = readWithStat(file);
  const hash = BUNDLE_HASH_LINE.exec(source)?.[1];
  const key = hash === undefined ? undefined : cacheKey(hash, `${size}\0${mtimeMs}`);
  const dir = cacheDir !== undefined && privateDir(cacheDir, false) ? cacheDir : undefined;
  const cacheFile = cacheDir === undefined || key === undefined ? undefined : join(cacheDir, `${basename(file)}-${key}.v8`);
  const stored = dir && cacheFile ? readIfPresent(cacheFile) : undefined;
  const cachedData = stored && intact(stored);
  const script = new Script(WRAPPER_HEAD + source + WRAPPER_TAIL, { filename: file, lineOffset: -1, cachedData });
  const module = { exports: {} as T };
  const run = script.runInThisContext() as (e: unknown, r: NodeRequire, m: unknown, f: string, d: string) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
  const cache = stored === undefined ? "none" : cachedData === undefined || script.cachedDataRejected ? "rejected" : "accepted";
  return {
    exports: module.exports,
    cacheFile,
    cache,
    saveCache() {
      if (cache === "accepted" || cacheDir === undefined || cacheFile === undefined) return;
      try {
        if (!privateDir(cacheDir, true)) return;
        writeAtomically(cacheFile, sealed(script.createCachedData()));
        removeOtherVersions(cacheDir, basename(file), cacheFile);
      } catch {
        // A full disk or a read-only home: the next start compiles again, nothing else changes.
      }
    },
  };
}

/** The text and the stat of one file (by path: Node's fast UTF-8 read; by descriptor is ~5 ms slower for 500 KB). */
function readWithStat(file: string): { source: string; size: number; mtimeMs: number } {
  const { size, mtimeMs } = statSync(file);
  return { source: readFileSync(file, "utf8"), size, mtimeMs };
}

/**
 * What makes a compiled bundle valid: its text (the build's hash of it, with the file's size
 * and time), the Node and V8 build, the platform, and the flags V8 runs with (FNV-1a of those).
 */
function cacheKey(hash: string, file: string): string {
  const text = `${file}\0${process.version}\0${process.versions.v8}\0${process.platform}\0${process.arch}\0${process.execArgv.join(" ")}\0${process.env.NODE_OPTIONS ?? ""}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `${hash.slice(0, 32)}-${h.toString(16).padStart(8, "0")}`;
}

/** True when `dir` is a real folder owned by this user that no one else may write to (made, mode 700, when `create`). */
function privateDir(dir: string, create: boolean): boolean {
  try {
    if (create) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = lstatSync(dir);
    if (!info.isDirectory()) return false;
    if (process.platform === "win32") return true;
    return info.uid === process.getuid?.() && (info.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

const MAGIC = 0x43504348; // "HCPC"
const HEADER_BYTES = 8;

/** The cache file: magic, CRC-32 of the V8 data, the data. */
function sealed(data: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(MAGIC, 0);
  header.writeUInt32LE(crc32(data), 4);
  return Buffer.concat([header, data]);
}

/** The V8 data of a cache file whose CRC matches; undefined for a damaged or foreign file. */
function intact(file: Buffer): Buffer | undefined {
  if (file.length <= HEADER_BYTES || file.readUInt32LE(0) !== MAGIC) return undefined;
  const data = file.subarray(HEADER_BYTES);
  return crc32(data) === file.readUInt32LE(4) ? data : undefined;
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** A reader sees the old cache or the new one, never part of one (processes start concurrently). */
function writeAtomically(file: string, data: Buffer): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** Caches of earlier builds or Node versions of the same bundle: one file is kept per bundle. */
function removeOtherVersions(dir: string, bundle: string, keep: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (path !== keep && name.startsWith(`${bundle}-`) && name.endsWith(".v8")) rmSync(path, { force: true });
  }
}
