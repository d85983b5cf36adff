// Where `hcp-bot lint` keeps Node's compile cache (module.enableCompileCache), so a second
// start skips compiling dist/lint.cjs (~500 KB; compiling it was ~70 ms of a small lint).
//
// Node keys each entry by the file, checks the text's hash and a checksum of the cached
// bytes before V8 sees them, and puts its own version and V8's flags in the folder's name.
// What stays ours is where: the cache holds bytecode the process will run, so it is used
// only in a folder this user owns and no one else can write to. A folder that cannot be
// made or is not private means no cache, never an error.
import { constants, enableCompileCache } from "node:module";
import { lstatSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

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

/** Turns Node's compile cache on in `dir` when it is private (made, mode 700, if missing); the folder Node uses, or undefined. */
export function enablePrivateCompileCache(dir: string | undefined): string | undefined {
  if (dir === undefined || !privateDir(dir)) return undefined;
  const { status, directory } = enableCompileCache(dir);
  const on = status === constants.compileCacheStatus.ENABLED || status === constants.compileCacheStatus.ALREADY_ENABLED;
  return on ? directory : undefined;
}

/** True when `dir` is a real folder owned by this user that no one else may write to. */
export function privateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = lstatSync(dir);
    if (!info.isDirectory()) return false;
    if (process.platform === "win32") return true;
    return info.uid === process.getuid?.() && (info.mode & 0o022) === 0;
  } catch {
    return false;
  }
}
