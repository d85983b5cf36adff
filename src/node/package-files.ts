// Files the package ships next to its code (templates/, app.yml, the probe, the compiled
// worker). The code runs from src/ (tests, through tsx) or from dist/ (the build, where
// esbuild has moved every module into a bundle), so paths are taken from the package root,
// never relative to the module that asks.
//
// Two packages run this code: `hcp-bot` (the CLI and library) and `hcp-bot-server` (the
// GitHub App and Slack server, packages/server), which depends on `hcp-bot` and ships only
// the server's own files (its bundle, app.yml, the web pages). A file the server package does
// not ship (the workers, templates/, the upstream index, the probe, the grammar) is taken
// from the `hcp-bot` package it depends on. In a clone both are the repository root.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folder holding this package's package.json. */
export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** True when running the TypeScript sources (tsx) rather than the build. */
export const FROM_SOURCE = import.meta.url.endsWith(".ts");

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`hcp-bot: no package.json above ${start}`);
  }
}

let cliRoot: string | null | undefined;

/** The installed `hcp-bot` package's folder, seen from this package (null when there is none). */
function cliPackageRoot(): string | null {
  if (cliRoot === undefined) {
    try {
      cliRoot = dirname(createRequire(join(PACKAGE_ROOT, "package.json")).resolve("hcp-bot/package.json"));
    } catch {
      cliRoot = null;
    }
  }
  return cliRoot;
}

/**
 * A file shipped with the package, by its path from the package root (e.g. "templates/hcp-smoke.yml"):
 * this package's own copy, else the `hcp-bot` dependency's; the own path when neither has it
 * (so the error names where it was looked for).
 */
export function packageFile(path: string): string {
  const own = join(PACKAGE_ROOT, path);
  if (existsSync(own)) return own;
  const cli = cliPackageRoot();
  if (cli !== null && cli !== PACKAGE_ROOT && existsSync(join(cli, path))) return join(cli, path);
  return own;
}
