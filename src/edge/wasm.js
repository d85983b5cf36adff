// The WebAssembly the edge bundles need, imported as modules (source phase): Workers refuse
// to compile WebAssembly from bytes at run time, Deno accepts both. The build copies the
// three files next to the bundle.
import source treeSitterRuntime from "./web-tree-sitter.wasm";
import source pythonGrammar from "./tree-sitter-python.wasm";
import source anchorScan from "./anchor-scan.wasm";

export { treeSitterRuntime, pythonGrammar, anchorScan };
