// Loads the tree-sitter runtime and the Python grammar from node_modules (Node only:
// the core receives the ready Language, so it never touches the file system).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Language, Parser } from "web-tree-sitter";

const require = createRequire(import.meta.url);
let loading: Promise<Language> | undefined;

export function loadPythonLanguage(): Promise<Language> {
  loading ??= (async () => {
    await Parser.init();
    const bytes = await readFile(require.resolve("tree-sitter-python/tree-sitter-python.wasm"));
    return Language.load(new Uint8Array(bytes));
  })();
  return loading;
}
