// dist/lint.cjs: `hcp-bot lint` as one CommonJS script, the same `main` as dist/main.js, so
// bin/hcp-bot.js can run it with a V8 code cache (src/cli/lint-start.ts). Only `lint` runs
// from it: the other commands' modules are left out (scripts/build.mjs) and run from dist/main.js.
import { takeGlobalFlags } from "./args.ts";

export { main } from "../cli.ts";
export { processIo } from "./process-io.ts";
export { loadPythonLanguage, quickExit } from "../node/treesitter.ts";

/** True when `argv` runs `hcp-bot lint` (its --help included); anything else, a bad global flag too, is for dist/main.js. */
export function isLintCommand(argv: readonly string[]): boolean {
  try {
    return takeGlobalFlags(argv).rest[0] === "lint";
  } catch {
    return false;
  }
}
