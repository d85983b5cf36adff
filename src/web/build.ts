// Builds the web pages' static files into dist/web: the playground's page script and
// analysis worker (esbuild, platform browser: the same src/core the bot runs), the two
// tree-sitter WebAssembly files, the examples from fixtures/playground, and the style
// sheet. `npm run build:web` runs it; the server and the browser tests call ensureWebBuild(),
// which rebuilds only when an input changed.
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { PACKAGE_ROOT } from "../node/package-files.ts";
import { exampleFromFile, type Example } from "./playground/examples.ts";
import { renderRulePage, RULE_ID } from "./server/rule-pages.ts";

const requireHere = createRequire(import.meta.url);
// From the package root: the compiled server runs from a bundle in dist/, not from src/web/.
export const ROOT = PACKAGE_ROOT;
export const WEB_DIST = join(ROOT, "dist", "web");
const EXAMPLES_DIR = join(ROOT, "fixtures", "playground");
/** The rule pages `npm run docs` writes; the build renders them to HTML (src/web/server/rule-pages.ts). */
const RULE_DOCS_DIR = join(ROOT, "docs", "rules");
const STAMP = "build.json";

function wasmFiles(): Record<string, string> {
  return {
    "web-tree-sitter.wasm": requireHere.resolve("web-tree-sitter/web-tree-sitter.wasm"),
    "tree-sitter-python.wasm": requireHere.resolve("tree-sitter-python/tree-sitter-python.wasm"),
  };
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : Promise.resolve([join(dir, e.name)]))));
  return nested.flat().sort();
}

/** A hash of everything the output is made from: sources, examples, WebAssembly, esbuild's version. */
async function inputsHash(): Promise<string> {
  const hash = createHash("sha256");
  const { version } = requireHere("esbuild/package.json") as { version: string };
  hash.update(`esbuild ${version}\n`);
  const files = [
    ...(await filesUnder(join(ROOT, "src", "core"))),
    ...(await filesUnder(join(ROOT, "src", "web", "playground"))),
    ...(await filesUnder(join(ROOT, "src", "web", "markdown"))),
    ...(await filesUnder(join(ROOT, "src", "web", "assets"))),
    ...(await filesUnder(EXAMPLES_DIR)),
    ...(await filesUnder(RULE_DOCS_DIR)),
    join(ROOT, "src", "web", "server", "html.ts"),
    join(ROOT, "src", "web", "server", "rule-pages.ts"),
    join(ROOT, "src", "web", "server", "paths.ts"),
    fileURLToPath(import.meta.url),
    ...Object.values(wasmFiles()),
  ];
  for (const f of files) {
    hash.update(`${relative(ROOT, f)}\n`);
    hash.update(await readFile(f));
  }
  return hash.digest("hex");
}

export async function readExamples(): Promise<Example[]> {
  const names = (await readdir(EXAMPLES_DIR)).sort();
  const examples = await Promise.all(names.map(async (n) => exampleFromFile(n, await readFile(join(EXAMPLES_DIR, n), "utf8"))));
  return examples.filter((e): e is Example => e !== undefined);
}

/** `import examples from "playground:examples"` in page.ts: the fixture files as data. */
function examplesPlugin(examples: Example[]): Plugin {
  return {
    name: "playground-examples",
    setup(b) {
      b.onResolve({ filter: /^playground:examples$/ }, () => ({ path: "examples", namespace: "playground" }));
      b.onLoad({ filter: /.*/, namespace: "playground" }, () => ({ contents: JSON.stringify(examples), loader: "json" }));
    },
  };
}

export interface WebBuild {
  dir: string;
  hash: string;
  /** false when the existing build was already current. */
  built: boolean;
  ms: number;
}

async function buildInto(dir: string, hash: string): Promise<void> {
  const playground = join(dir, "playground");
  await mkdir(playground, { recursive: true });
  await mkdir(join(dir, "web"), { recursive: true });
  const result = await build({
    entryPoints: { page: join(ROOT, "src", "web", "playground", "page.ts"), worker: join(ROOT, "src", "web", "playground", "worker.ts") },
    outdir: playground,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    metafile: true,
    logLevel: "silent",
    plugins: [examplesPlugin(await readExamples())],
  });
  if (result.errors.length) throw new Error(`the playground bundle failed: ${result.errors[0]!.text}`);
  for (const [name, path] of Object.entries(wasmFiles())) await copyFile(path, join(playground, name));
  await copyFile(join(ROOT, "src", "web", "playground", "index.html"), join(playground, "index.html"));
  for (const asset of ["style.css", "noscript.css", "icon.svg"]) await copyFile(join(ROOT, "src", "web", "assets", asset), join(dir, "web", asset));
  await writeRulePages(join(dir, "docs", "rules"));
  const sizes = Object.fromEntries(Object.entries(result.metafile.outputs).map(([file, o]) => [relative(dir, join(ROOT, file)), o.bytes]));
  await writeFile(join(dir, STAMP), JSON.stringify({ hash, sizes }, null, 2));
}

/** docs/rules/ID.md as docs/rules/ID.html, README.md (the rule table) as index.html. */
async function writeRulePages(out: string): Promise<void> {
  await mkdir(out, { recursive: true });
  for (const name of await readdir(RULE_DOCS_DIR)) {
    const id = name.replace(/\.md$/, "");
    if (name === "README.md") await writeFile(join(out, "index.html"), renderRulePage(await readFile(join(RULE_DOCS_DIR, name), "utf8")));
    else if (RULE_ID.test(id) && name.endsWith(".md")) await writeFile(join(out, `${id}.html`), renderRulePage(await readFile(join(RULE_DOCS_DIR, name), "utf8"), id));
  }
}

/** Every file of `from` renamed to its place under `to` (the stamp last), then the files `to` no longer has removed. */
async function moveInto(from: string, to: string): Promise<void> {
  const files = (await filesUnder(from)).sort((a, b) => Number(a.endsWith(STAMP)) - Number(b.endsWith(STAMP)));
  const moved = new Set<string>();
  for (const file of files) {
    const target = join(to, relative(from, file));
    await mkdir(dirname(target), { recursive: true });
    await rename(file, target);
    moved.add(target);
  }
  for (const file of await filesUnder(to)) if (!moved.has(file)) await rm(file, { force: true });
}

const building = new Map<string, Promise<WebBuild>>();

/** Builds dist/web unless it is current; concurrent callers in one process share one build. */
export function ensureWebBuild(dir: string = WEB_DIST): Promise<WebBuild> {
  const current = building.get(dir);
  if (current) return current;
  const job = (async () => {
    const started = performance.now();
    // An installed package ships dist/web built and no sources to build it from: serve what it ships.
    if (!existsSync(join(ROOT, "src", "web", "playground", "page.ts"))) {
      const shipped = await readFile(join(dir, STAMP), "utf8").then((t) => (JSON.parse(t) as { hash: string }).hash, () => undefined);
      if (!shipped) throw new Error(`${dir} holds no playground build and the sources to build one are not here`);
      return { dir, hash: shipped, built: false, ms: Math.round(performance.now() - started) };
    }
    const hash = await inputsHash();
    const stamp = await readFile(join(dir, STAMP), "utf8").then((t) => (JSON.parse(t) as { hash?: string }).hash, () => undefined);
    if (stamp === hash) return { dir, hash, built: false, ms: Math.round(performance.now() - started) };
    // Built next to the target and moved in file by file, each with one rename (which replaces
    // a file atomically): a server reading dist/web meanwhile (another test process, say) sees
    // the old file or the new one, never none, as it did when the folder was removed first.
    const tmp = `${dir}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await buildInto(tmp, hash);
      await moveInto(tmp, dir);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return { dir, hash, built: true, ms: Math.round(performance.now() - started) };
  })().finally(() => building.delete(dir));
  building.set(dir, job);
  return job;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await ensureWebBuild();
  const stamp = JSON.parse(await readFile(join(result.dir, STAMP), "utf8")) as { sizes: Record<string, number> };
  const sizes = Object.entries(stamp.sizes).map(([f, b]) => `${f} ${(b / 1024).toFixed(0)} KB`).join(", ");
  process.stdout.write(`${result.built ? "built" : "up to date:"} ${relative(process.cwd(), result.dir)} in ${result.ms} ms (${sizes})\n`);
}
