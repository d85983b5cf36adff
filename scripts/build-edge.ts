// `npm run build:edge`: the edge deployment in dist/edge/ (a clean folder each time: a stale
// .wasm left there gives workerd a duplicate module). worker.js is the Cloudflare Workers
// module (wrangler.toml serves it unbundled), deno.js the Deno entry; both import the three
// WebAssembly files next to them as modules. Each entry is split (esbuild `splitting`): what
// a first request needs stays in the entry and its static chunks, and what the entry imports
// dynamically (the webhook and Slack work, tree-sitter) is a chunk of its own, worker-*.js or
// deno-*.js, that a runtime loads on first need (Deno) or at least does not evaluate (workerd
// compiles every module of a worker up front). The web pages' built files (dist/web, built
// first when stale) go to dist/edge-web/, named in the edge:web-files module written
// here (webFilesPlugin). Prints the sizes the budgets are about.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { build, type Metafile, type Plugin } from "esbuild";
import { ANCHOR_SCAN_WASM_BASE64 } from "../src/core/verdict/scan/anchor-scan.wasm.ts";
import { ensureWebBuild } from "../src/web/build.ts";

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

/**
 * The folder beside dist/edge that holds the web pages' files, dist/edge-web: wrangler.toml's
 * [assets] directory, read by Deno from beside its bundle. Not inside dist/edge, where wrangler
 * would attach every file as a module of the worker (its upload budget is the worker's code).
 */
export function webFilesDir(dir = EDGE_DIR): string {
  return `${dir}-web`;
}

/** Every file of a folder, as paths relative to it. */
function filesIn(dir: string, under = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesIn(join(dir, e.name), under) : [relative(under, join(dir, e.name))]))
    .sort();
}

/**
 * `edge:web-files` (src/edge/web-files.d.ts): the names of the web build's files and its hash.
 * The entries read only these names: a request never names a path to read.
 */
function webFilesPlugin(names: readonly string[], hash: string, folder: string): Plugin {
  const contents = `export const hash = ${JSON.stringify(hash)};\nexport const names = ${JSON.stringify(names)};\nexport const folder = ${JSON.stringify(folder)};\n`;
  return {
    name: "edge-web-files",
    setup(b) {
      b.onResolve({ filter: /^edge:web-files$/ }, () => ({ path: "web-files", namespace: "edge-web-files" }));
      b.onLoad({ filter: /.*/, namespace: "edge-web-files" }, () => ({ contents, loader: "js" }));
    },
  };
}

/** The JavaScript files of one entry: the entry itself first, then its chunks (`worker-*.js`). */
export function edgeModules(name: "worker" | "deno", dir = EDGE_DIR): string[] {
  const chunks = readdirSync(dir).filter((f) => f.startsWith(`${name}-`) && f.endsWith(".js")).sort();
  return [`${name}.js`, ...chunks];
}

export interface EdgeSizes {
  /** Every file of dist/edge. */
  files: Record<string, { bytes: number; gzip: number }>;
  /** Per entry, its JavaScript (entry and chunks) together: each file gzipped on its own, summed. */
  js: Record<"worker" | "deno", { bytes: number; gzip: number }>;
  /**
   * Per entry, the source files in the modules its first request evaluates: the entry and
   * what it imports statically (a dynamic import is evaluated only on first need).
   */
  firstRequest: Record<"worker" | "deno", { files: string[]; sources: string[] }>;
  /** Per entry, every source file bundled into it. */
  sources: Record<"worker" | "deno", string[]>;
}

/** The entry's output file and every output it reaches by static imports, with the sources bundled into them. */
function staticClosure(metafile: Metafile, entryOutput: string): { files: string[]; sources: string[] } {
  const seen = new Set<string>();
  const visit = (out: string) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const imported of metafile.outputs[out]?.imports ?? []) if (imported.kind === "import-statement" && !imported.external) visit(imported.path);
  };
  visit(entryOutput);
  const files = [...seen].map((out) => out.split("/").pop()!);
  const sources = [...seen].flatMap((out) => Object.keys(metafile.outputs[out]!.inputs)).sort();
  return { files, sources };
}

/** Builds into `dir` (dist/edge unless a test asks for a folder of its own). */
export async function buildEdge(quiet = false, dir = EDGE_DIR): Promise<EdgeSizes> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const web = await ensureWebBuild();
  const webDir = webFilesDir(dir);
  rmSync(webDir, { recursive: true, force: true });
  cpSync(web.dir, webDir, { recursive: true, filter: (src) => !src.endsWith("build.json") });
  const webNames = filesIn(webDir);
  const webFolder = `../${basename(webDir)}/`;
  const entries = { worker: "src/edge/workers/main.ts", deno: "src/edge/deno/main.ts" };
  const firstRequest = {} as EdgeSizes["firstRequest"];
  const sources = {} as EdgeSizes["sources"];
  for (const [name, entry] of Object.entries(entries) as ["worker" | "deno", string][]) {
    const { metafile } = await build({
      entryPoints: { [name]: join(root, entry) },
      outdir: dir,
      splitting: true,
      chunkNames: `${name}-[name]-[hash]`,
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
      plugins: [nodeOnlyImports(name === "worker" ? "workerd" : "deno"), webFilesPlugin(webNames, web.hash, webFolder)],
      logLevel: quiet ? "silent" : "warning",
      metafile: true,
    });
    const entryOutput = Object.keys(metafile.outputs).find((out) => out.endsWith(`/${name}.js`))!;
    firstRequest[name] = staticClosure(metafile, entryOutput);
    sources[name] = [...new Set(Object.values(metafile.outputs).flatMap((out) => Object.keys(out.inputs)))].sort();
  }
  for (const [name, bytes] of Object.entries(WASM_FILES)) writeFileSync(join(dir, name), bytes());
  const files: EdgeSizes["files"] = {};
  for (const name of readdirSync(dir).sort()) {
    const file = join(dir, name);
    files[name] = { bytes: statSync(file).size, gzip: gzipSync(readFileSync(file)).length };
  }
  const total = (names: string[]) => names.reduce((t, n) => ({ bytes: t.bytes + files[n]!.bytes, gzip: t.gzip + files[n]!.gzip }), { bytes: 0, gzip: 0 });
  return { files, js: { worker: total(edgeModules("worker", dir)), deno: total(edgeModules("deno", dir)) }, firstRequest, sources };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = await buildEdge();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const [name, s] of Object.entries(sizes.files)) console.log(`dist/edge/${name.padEnd(32)} ${kb(s.bytes).padStart(10)}  gzip ${kb(s.gzip).padStart(9)}`);
  for (const [name, s] of Object.entries(sizes.js)) console.log(`${name} JS in all${" ".repeat(24 - name.length)} ${kb(s.bytes).padStart(10)}  gzip ${kb(s.gzip).padStart(9)}`);
  for (const [name, first] of Object.entries(sizes.firstRequest)) {
    const bytes = first.files.reduce((t, f) => t + sizes.files[f]!.bytes, 0);
    console.log(`${name} first request evaluates ${first.files.join(", ")}: ${kb(bytes)}`);
  }
}
