// How bin/hcp-bot.js starts `hcp-bot lint`: dist/lint.cjs loaded with Node's compile cache
// on (code-cache.ts), so a repeated small lint skips compiling ~500 KB of JavaScript. Built to
// dist/lint-start.cjs (CommonJS, like bin/hcp-bot.js: a lint never starts the ESM loader).
import { existsSync } from "node:fs";
import { createRequire, flushCompileCache } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { cacheDirFrom, enablePrivateCompileCache } from "../node/code-cache.ts";
import type * as LintBundle from "./lint-bundle.ts";

export { cacheDirFrom, enablePrivateCompileCache } from "../node/code-cache.ts";
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
  enablePrivateCompileCache(cacheDirFrom(process.env));
  const bundle = createRequire(file)(file) as typeof LintBundle;
  if (!bundle.isLintCommand(argv)) {
    setFlagsFromString("--no-liftoff-only");
    return false;
  }
  process.exitCode = await bundle.main([...argv], bundle.processIo({ direct: true }));
  // Written now: quickExit may end the process before Node's own flush at exit.
  if (bundle.quickExit() !== false) flushCompileCache();
  return true;
}
