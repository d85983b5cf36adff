// Loads the tree-sitter runtime and the Python grammar from node_modules (Node only:
// the core receives the ready Language, so it never touches the file system).
//
// Start-up matters here (a one-file lint should answer in ~100 ms): both WebAssembly
// modules are read at once and compiled concurrently (V8 compiles off the main thread),
// and the runtime is instantiated from its compiled module rather than found and fetched
// by web-tree-sitter itself.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import type { Language } from "web-tree-sitter";

const resolveFromHere = createRequire(import.meta.url).resolve;
let loading: Promise<Language> | undefined;

function compileFile(path: string): Promise<WebAssembly.Module> {
  return WebAssembly.compile(readFileSync(path));
}

async function load(): Promise<Language> {
  const runtime = compileFile(resolveFromHere("web-tree-sitter/web-tree-sitter.wasm"));
  const grammar = compileFile(resolveFromHere("tree-sitter-python/tree-sitter-python.wasm"));
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
 * compiler before knowing the input, see src/node/lint-start.ts).
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
