// Types of wasm.js (the source-phase imports TypeScript does not parse).
export declare const treeSitterRuntime: WebAssembly.Module;
export declare const pythonGrammar: WebAssembly.Module;
export declare const anchorScan: WebAssembly.Module;
