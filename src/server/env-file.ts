// Where the setup flow keeps the App credentials it is handed (the manifest's conversion or
// the import form): `.env` in the working folder, merged with what is there, and readable by
// its owner only (0600), since it holds the App's private key and webhook secret. Probot's
// own writer leaves the file as the umask makes it (0644: readable by every local user).
import { chmodSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";

function readExisting(path: string): Record<string, string> {
  try {
    return parseEnv(readFileSync(path, "utf8")) as Record<string, string>;
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return {};
    throw error;
  }
}

/** Merges `values` into `.env` (written whole, 0600, then moved into place) and into process.env. */
export function writeEnvFile(values: Record<string, string>, dir = process.cwd()): Record<string, string> {
  const path = join(dir, ".env");
  const merged = { ...readExisting(path), ...values };
  const text = Object.entries(merged)
    .map(([key, value]) => `${key}=${value.replace(/\n/g, "\\n")}`)
    .join("\n");
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${text}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600); // an existing temporary file keeps its mode otherwise
  renameSync(temporary, path);
  Object.assign(process.env, merged);
  return merged;
}
