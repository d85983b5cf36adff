// `npm run build:edge`: the edge deployment in dist/edge/ (a clean folder each time: a stale
// .wasm left there gives workerd a duplicate module). worker.js is the Cloudflare Workers
// module (wrangler.toml serves it unbundled), deno.js the Deno entry; both import the three
// WebAssembly files next to them as modules. Prints the sizes the budgets are about.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { build, type Plugin } from "esbuild";
import { ANCHOR_SCAN_WASM_BASE64 } from "../src/core/verdict/scan/anchor-scan.wasm.ts";

const root = join(import.meta.dirname, "..");
export const EDGE_DIR = join(root, "dist", "edge");
const require = createRequire(import.meta.url);

export const WASM_FILES = {
  "web-tree-sitter.wasm": () => readFileSync(require.resolve("web-tree-sitter/web-tree-sitter.wasm")),
  "tree-sitter-python.wasm": () => readFileSync(require.resolve("tree-sitter-python/tree-sitter-python.wasm")),
  "anchor-scan.wasm": () => Buffer.from(ANCHOR_SCAN_WASM_BASE64, "base64"),
};

/**
 * web-tree-sitter's Emscripten loader imports `module` and `fs/promises` on its Node path.
 * workerd never takes that path (no `process`): they become empty modules, so the worker
 * names no Node built-in. Deno 2 has a `process` global, so Emscripten does take it there:
 * they become Deno's own `node:` modules (with the WebAssembly handed in, nothing is read).
 */
function nodeOnlyImports(target: "workerd" | "deno"): Plugin {
  return {
    name: "node-only-imports",
    setup(b) {
      b.onResolve({ filter: /^(module|fs\/promises)$/ }, (args) => (target === "deno" ? { path: `node:${args.path}`, external: true } : { path: args.path, namespace: "node-only" }));
      b.onLoad({ filter: /.*/, namespace: "node-only" }, () => ({ contents: "export default {};", loader: "js" }));
    },
  };
}

export async function buildEdge(quiet = false): Promise<Record<string, { bytes: number; gzip: number }>> {
  rmSync(EDGE_DIR, { recursive: true, force: true });
  mkdirSync(EDGE_DIR, { recursive: true });
  const entries = { worker: "src/edge/workers/main.ts", deno: "src/edge/deno/main.ts" };
  for (const [name, entry] of Object.entries(entries)) {
    await build({
      entryPoints: [join(root, entry)],
      outfile: join(EDGE_DIR, `${name}.js`),
      bundle: true,
      format: "esm",
      // web-tree-sitter's browser map drops `module` and `fs`; `neutral` would keep them.
      platform: "browser",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["browser", "module", "main"],
      target: "esnext",
      minify: true,
      legalComments: "none",
      external: ["*.wasm", "cloudflare:workers"],
      plugins: [nodeOnlyImports(name === "worker" ? "workerd" : "deno")],
      logLevel: quiet ? "silent" : "warning",
    });
  }
  for (const [name, bytes] of Object.entries(WASM_FILES)) writeFileSync(join(EDGE_DIR, name), bytes());
  const sizes: Record<string, { bytes: number; gzip: number }> = {};
  for (const name of ["worker.js", "deno.js", ...Object.keys(WASM_FILES)]) {
    const file = join(EDGE_DIR, name);
    sizes[name] = { bytes: statSync(file).size, gzip: gzipSync(readFileSync(file)).length };
  }
  return sizes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = await buildEdge();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const [name, s] of Object.entries(sizes)) console.log(`dist/edge/${name.padEnd(24)} ${kb(s.bytes).padStart(10)}  gzip ${kb(s.gzip).padStart(9)}`);
}
