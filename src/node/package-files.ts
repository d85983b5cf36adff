// Files the package ships next to its code (templates/, app.yml, the probe, the compiled
// worker). The code runs from src/ (tests, through tsx) or from dist/ (the build, where
// esbuild has moved every module into a bundle), so paths are taken from the package root,
// never relative to the module that asks.
import { existsSync } from "node:fs";
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

/** A file shipped with the package, by its path from the package root (e.g. "templates/hcp-smoke.yml"). */
export function packageFile(path: string): string {
  return join(PACKAGE_ROOT, path);
}
