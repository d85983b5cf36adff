// How bin/hcp-bot.js starts `hcp-bot lint`: dist/lint.cjs run with its V8 code cache
// (code-cache.ts), so a repeated small lint skips compiling ~400 KB of JavaScript. Built to
// dist/lint-start.cjs (CommonJS, like bin/hcp-bot.js: a lint never starts the ESM loader).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { cacheDirFrom, runCachedScript } from "./code-cache.ts";
import type * as LintBundle from "../cli/lint-bundle.ts";

export { cacheDirFrom, runCachedScript } from "./code-cache.ts";
export type { LintBundle };

/**
 * Runs `argv` from dist/lint.cjs and answers true, or answers false (nothing run) when argv
 * is not a lint or the bundle is not built: the caller then runs dist/main.js.
 */
export async function startLint(argv: readonly string[], distDir = join(fileURLToPath(import.meta.url), "..")): Promise<boolean> {
  const file = join(distDir, "lint.cjs");
  if (!existsSync(file)) return false;
  // V8 accepts a code cache only under the flags it was made with, and a small lint (the
  // common case) runs the grammar on the baseline compiler (treesitter.ts preferQuickExit):
  // that flag is set before the bundle compiles, and a large lint turns it back off.
  setFlagsFromString("--liftoff-only");
  const bundle = runCachedScript<typeof LintBundle>(file, cacheDirFrom(process.env));
  if (!bundle.exports.isLintCommand(argv)) {
    setFlagsFromString("--no-liftoff-only");
    return false;
  }
  process.exitCode = await bundle.exports.main([...argv], bundle.exports.processIo({ direct: true }));
  // A cache written under other flags would only be rejected at the next start.
  if (bundle.exports.quickExit() !== false) bundle.saveCache();
  return true;
}
