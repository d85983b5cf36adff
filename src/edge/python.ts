// tree-sitter on edge runtimes: both WebAssembly modules arrive precompiled (imported as
// modules by the runtime entry), because Workers refuse to compile WebAssembly from bytes.
// web-tree-sitter itself is imported on the first parse, so a cold start that answers
// /healthz or a webhook never loads it (it is a chunk of its own in dist/edge).
import type { Language } from "web-tree-sitter";

export function pythonFromModules(runtime: WebAssembly.Module, grammar: WebAssembly.Module): () => Promise<Language> {
  let loading: Promise<Language> | undefined;
  return () => {
    loading ??= (async () => {
      const { Language, Parser } = await import("web-tree-sitter");
      await Parser.init({
        instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
          const instance = new WebAssembly.Instance(runtime, imports);
          done(instance, runtime);
          return instance.exports;
        },
      });
      return Language.loadSync(grammar);
    })();
    return loading;
  };
}
