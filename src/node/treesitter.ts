// Loads the tree-sitter runtime and the Python grammar (the copies in dist/vendor/, else node_modules; Node only:
// the core receives the ready Language, so it never touches the file system).
//
// Start-up matters here (a one-file lint should answer in ~100 ms): both WebAssembly
// modules are read at once and compiled concurrently (V8 compiles off the main thread),
// and the runtime is instantiated from its compiled module rather than found and fetched
// by web-tree-sitter itself.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import type { Language } from "web-tree-sitter";
import { packageFile as shippedFile } from "./package-files.ts";

const requireHere = createRequire(import.meta.url);
let loading: Promise<Language> | undefined;

/**
 * `pkg/file` from the node_modules folders Node's resolver searches from here. A full
 * require.resolve reads the package's `exports`, which loads Node's ESM resolver (~5 ms,
 * bench:cli); both files are exported under their own names (web-tree-sitter's `exports`
 * maps "./web-tree-sitter.wasm" to itself, tree-sitter-python has none), so the first
 * folder holding the file is what require.resolve answers. Anything else asks it.
 */
export function packageFile(pkg: string, file: string): string {
  for (const dir of requireHere.resolve.paths(pkg) ?? []) {
    const path = join(dir, pkg, file);
    if (existsSync(path)) return path;
  }
  return requireHere.resolve(`${pkg}/${file}`);
}

/**
 * `pkg`'s WebAssembly file: the build copies both into dist/vendor/ (scripts/build.mjs), and
 * the `hcp-bot` package ships those copies and depends on neither package (web-tree-sitter's
 * JavaScript is bundled; tree-sitter-python's install builds a native module nobody here
 * loads). Running from the sources, or a build without them, node_modules has them.
 */
export function wasmFile(pkg: "web-tree-sitter" | "tree-sitter-python"): string {
  const shipped = shippedFile(`dist/vendor/${pkg}.wasm`);
  return existsSync(shipped) ? shipped : packageFile(pkg, `${pkg}.wasm`);
}

function compileFile(path: string): Promise<WebAssembly.Module> {
  return WebAssembly.compile(readFileSync(path));
}

async function load(): Promise<Language> {
  const runtime = compileFile(wasmFile("web-tree-sitter"));
  const grammar = compileFile(wasmFile("tree-sitter-python"));
  const { Parser, Language } = await import("web-tree-sitter");
  const runtimeModule = await runtime;
  // Emscripten's hook has no error callback: a failed instantiation rejects `failed` instead of hanging init.
  let fail: (error: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => (fail = reject));
  const init = Parser.init({
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
      WebAssembly.instantiate(runtimeModule, imports).then((instance) => done(instance, runtimeModule), fail);
      return {};
    },
  });
  await Promise.race([init, failed]);
  return Language.loadSync(await grammar);
}

/**
 * For a short run (a small lint, one recipe's advice): keep the grammar on V8's baseline
 * WebAssembly compiler. Its optimizing tier recompiles hot functions on background threads,
 * and the process waits for those compiles before it exits: ~150-200 ms here, more than a
 * small analysis takes (bench:cli), while a 500 KB lint is as fast without them. Only takes
 * effect before the grammar is compiled; the server and large lints keep the optimizing tier
 * (`quick` false turns it back on where the `hcp-bot lint` start-up chose the baseline
 * compiler before knowing the input, see src/cli/lint-start.ts).
 */
export function preferQuickExit(quick = true): void {
  if (loading) return;
  setFlagsFromString(quick ? "--liftoff-only" : "--no-liftoff-only");
  quickExitChosen = quick;
}

let quickExitChosen: boolean | undefined;

/** What preferQuickExit last chose (undefined: it was not called). */
export function quickExit(): boolean | undefined {
  return quickExitChosen;
}

export function loadPythonLanguage(): Promise<Language> {
  loading ??= load();
  return loading;
}
