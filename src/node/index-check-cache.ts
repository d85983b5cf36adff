// Checking the index of upstream recipes against its schema (zod, over the 619 KB shipped
// file's 728 recipes) costs 200-400 ms, far more than the rest of a lint of a script that
// starts from an upstream recipe. The index does not change between lints, so the SHA-256
// of the last text that passed is kept in the private cache folder (the one that holds
// lint's compile cache and python3's answer); a text with that hash is known to have the
// shape, and only the cheap checks that follow the schema run again. Another text, a missing
// or unreadable record, or no cache folder: the full check, as before.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheDirFrom, privateDir } from "./code-cache.ts";

const FILE = "bridge-index-checked.txt";

export interface ShapeRecord {
  /** Whether this exact text passed the schema check before. */
  checked: boolean;
  /** Remember that it passed (call only after the full check succeeded). */
  remember(): void;
}

export function shapeRecord(text: string, env: Readonly<Record<string, string | undefined>> = process.env): ShapeRecord {
  const dir = cacheDirFrom(env);
  const folder = dir !== undefined && privateDir(dir) ? dir : undefined;
  if (!folder) return { checked: false, remember: () => {} };
  // Loaded here, not at the top: node:crypto costs ~15 ms to load, and most lints never get here.
  const { createHash } = process.getBuiltinModule("node:crypto");
  const hash = createHash("sha256").update(text).digest("hex");
  return { checked: readRecord(folder) === hash, remember: () => writeRecord(folder, hash) };
}

function readRecord(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, FILE), "utf8").trim();
  } catch {
    return undefined;
  }
}

function writeRecord(dir: string, hash: string): void {
  try {
    const tmp = join(dir, `${FILE}.${process.pid}.tmp`);
    writeFileSync(tmp, `${hash}\n`, { mode: 0o600 });
    renameSync(tmp, join(dir, FILE));
  } catch {
    // an unwritable cache only means the next lint checks the whole index again
  }
}
