// `npm run build`: compiles the package into dist/.
//
// - JavaScript: esbuild bundles the Node entry points (the CLI, the extraction worker and
//   the library) with code splitting, so a command loads one bundle plus the chunks it
//   needs. Every dependency is bundled in: loading ~150 separate files costs most of a small
//   lint's time, and the `hcp-bot` package then has no dependency to install (a light install,
//   test/package/light-install.test.ts). The two .wasm files tree-sitter needs are copied to
//   dist/vendor/ (src/node/treesitter.ts hands them to web-tree-sitter compiled).
// - The server: src/cli/serve.ts (Probot, Bolt, the stores, the web pages) is one more bundle,
//   dist/server/serve.js, whose server packages stay imports of the installed dependencies.
//   The CLI reaches it only by a computed import() (src/cli/serve-loader.ts), and
//   packages/server (the hcp-bot-server package) receives it with dist/web and app.yml.
// - Types: tsc emits declarations for the library entry points into dist/types (skipped
//   with --no-types, which the test setup uses: tests import the sources).
// - The web pages: the full build also runs src/web/build.ts (dist/web, the playground's
//   browser bundle), so the package ships it and an installed server never builds it.
//
// Only the paths this script owns are replaced; other builds may write elsewhere in dist/.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");

/** dist/NAME.js for each entry point. */
export const ENTRY_POINTS = {
  main: "src/main.ts",
  index: "src/index.ts",
  node: "src/node/index.ts",
  "extract-worker": "src/node/extract-worker.ts",
  "artifact-worker": "src/node/artifact-worker.ts",
};

/** dist/lint.cjs: `hcp-bot lint` in one CommonJS script, which bin/hcp-bot.js runs with a V8 code cache. */
export const LINT_BUNDLE = { lint: "src/cli/lint-bundle.ts" };

/**
 * dist/lint-start.cjs: what bin/hcp-bot.js (CommonJS) require()s to run dist/lint.cjs. CommonJS
 * too, so a lint never starts Node's ESM loader, and Node's modules it uses are require()d:
 * an ESM import of node:fs builds a facade that reads every export, fs.promises and the
 * stream getters included (~10 ms, bench:cli).
 */
export const LINT_START = { "lint-start": "src/cli/lint-start.ts" };

/** Files earlier builds wrote that this one no longer does: removed, so `npm pack` cannot ship them. */
const FORMER = ["lint-start.js"];

/** dist/server/serve.js: `serve`, the GitHub App and Slack server (the hcp-bot-server package's code). */
export const SERVER_ENTRY = { "server/serve": "src/cli/serve.ts" };


/** The server bundle's imports of installed packages (the hcp-bot-server package's dependencies). */
export const EXTERNAL = ["probot", "@slack/bolt", "execa", "pino", "pino-pretty", "web-tree-sitter", "esbuild", "tsx", "playwright-core"];

/**
 * Packages only the server (or the build) uses: a CLI bundle that reaches one fails the build
 * instead of bundling it (or of importing a package `npm install hcp-bot` does not install).
 */
const SERVER_ONLY = /^(probot|@slack\/|@octokit\/|ioredis|pino|prom-client|esbuild|tsx|playwright-core)(\/|$)/;

/** What this script writes; everything else under dist/ is left alone. */
const OWNED = [...Object.keys(ENTRY_POINTS).map((n) => `${n}.js`), ...Object.keys({ ...LINT_BUNDLE, ...LINT_START }).map((n) => `${n}.cjs`), "chunks", "server", "vendor", "types", ".build-stamp"];

/**
 * dist/vendor/: the tree-sitter runtime and the Python grammar the CLI loads (src/node/treesitter.ts
 * wasmFile), so `hcp-bot` depends on neither package (tree-sitter-python's install builds a
 * native module nobody here loads).
 */
const VENDOR = {
  "web-tree-sitter.wasm": "node_modules/web-tree-sitter/web-tree-sitter.wasm",
  "tree-sitter-python.wasm": "node_modules/tree-sitter-python/tree-sitter-python.wasm",
};

/** packages/server: the hcp-bot-server package, which receives these build outputs (its package.json and bin/ are committed). */
export const SERVER_PACKAGE_DIR = join(root, "packages", "server");
const SERVER_PACKAGE_FILES = ["dist/server", "dist/web", "app.yml", "LICENSE"];

const NO_SERVER_PACKAGES = {
  name: "no-server-packages",
  setup(b) {
    b.onResolve({ filter: SERVER_ONLY }, (args) => ({ errors: [{ text: `${args.path} is the server's (imported by ${relative(root, args.importer)}): the hcp-bot package's bundles must not need it` }] }));
  },
};

// yaml's CommonJS build calls require("process"); a bundle in ESM format needs a real require for that.
const BANNER = 'import { createRequire as __hcpCreateRequire } from "node:module";\nconst require = __hcpCreateRequire(import.meta.url);';

async function buildJs(outdir) {
  await build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outdir,
    entryNames: "[name]",
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    plugins: [NO_SERVER_PACKAGES],
    banner: { js: BANNER },
    legalComments: "none",
    // Less to parse at every start (~30 ms of a small lint on the 2-core machine, bench:cli).
    minify: true,
    logLevel: "warning",
  });
}

/** dist/server/serve.js, one file (no splitting: it shares no chunk with the CLI's bundles, which the server package does not ship). */
async function buildServer(outdir) {
  await build({
    absWorkingDir: root,
    entryPoints: SERVER_ENTRY,
    outdir,
    entryNames: "[dir]/[name]",
    outbase: ".",
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: EXTERNAL,
    banner: { js: BANNER },
    legalComments: "none",
    minify: true,
    logLevel: "warning",
  });
}

function copyVendor(outdir) {
  mkdirSync(join(outdir, "vendor"), { recursive: true });
  for (const [name, from] of Object.entries(VENDOR)) copyFileSync(join(root, from), join(outdir, "vendor", name));
}

/** Copies the server's build outputs into packages/server, replacing what an earlier build put there. */
function assembleServerPackage() {
  for (const path of SERVER_PACKAGE_FILES) {
    const from = join(root, path);
    const to = join(SERVER_PACKAGE_DIR, path);
    rmSync(to, { recursive: true, force: true });
    if (existsSync(from)) cpSync(from, to, { recursive: true });
  }
}

/**
 * Modules lint itself loads with import() only when needed: the settings schema (and zod with
 * it) once a `.github/hcp-bot.yml` or `[tool.hcp-bot]` is found (src/node/lint-config.ts), and
 * `--fix`/`--diff` (src/cli/lint-fix.ts), the code frame on a terminal (src/cli/code-frame.ts),
 * --watch (src/cli/lint-watch.ts). A tail is matched against the import()'s specifier.
 */
const LAZY_IN_LINT = ["/core/config/repo-config.ts", "/lint-fix.ts", "/code-frame.ts", "/lint-watch.ts"];

/**
 * The other commands' modules (what cli.ts loads with import()) are not part of the lint
 * bundle: an import() of one there fails with this message instead of bundling the server.
 */
const LEAVE_OUT_LAZY_COMMANDS = {
  name: "leave-out-lazy-commands",
  setup(b) {
    b.onResolve({ filter: /^\./ }, (args) =>
      args.kind === "dynamic-import" && !LAZY_IN_LINT.some((tail) => args.path.endsWith(tail)) ? { path: args.path, namespace: "not-in-lint-bundle" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "not-in-lint-bundle" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`hcp-bot: ${args.path} is not in dist/lint.cjs; bin/hcp-bot.js runs commands other than lint from dist/main.js`)});`,
      loader: "js",
    }));
  },
};

/**
 * A package the lint bundle loads on first call of one of the functions it takes from it:
 * the code is still bundled, behind a require() of a module that re-exports only those
 * names (so esbuild still leaves out what is not used). A name not listed fails the build
 * ("No matching export" or "will always be undefined"), never the lint.
 */
function lazyPackage(pkg, exportNames) {
  const namespace = `lazy-${pkg}`;
  const names = exportNames.join(", ");
  return {
    name: namespace,
    setup(b) {
      b.onResolve({ filter: new RegExp(`^${pkg}$`) }, (args) => (args.namespace.startsWith(namespace) ? undefined : { path: pkg, namespace }));
      b.onResolve({ filter: new RegExp(`^${namespace}-exports$`) }, () => ({ path: pkg, namespace: `${namespace}-exports` }));
      b.onLoad({ filter: /.*/, namespace: `${namespace}-exports` }, () => ({ contents: `export { ${names} } from ${JSON.stringify(pkg)};`, loader: "js", resolveDir: root }));
      b.onLoad({ filter: /.*/, namespace }, () => ({
        contents: [
          "let lib;",
          `const load = () => (lib ??= require(${JSON.stringify(`${namespace}-exports`)}));`,
          // `enum` and `null` are names zod exports but not names a function can have.
          ...exportNames.map((name) => `function lazy_${name}(...args) { return load().${name}(...args); }`),
          `export { ${exportNames.map((name) => `lazy_${name} as ${name}`).join(", ")} };`,
        ].join("\n"),
        loader: "js",
        resolveDir: root,
      }));
    },
  };
}

/** Only a YAML file needs the yaml package (~115 KB, ~5 ms to load): the functions recipe/yaml.ts and the settings file (config/repo-config.ts) take from it. */
const LAZY_YAML = lazyPackage("yaml", ["isAlias", "isMap", "isScalar", "isSeq", "parseAllDocuments", "parseDocument", "visit"]);

/**
 * A plain lint uses the model's zod schemas only as types (src/core/model/deferred.ts), so
 * zod (~4 ms to load and set up from the code cache) loads at the first schema built: rule
 * options (--select, --ignore) or a fix's layout.
 */
const LAZY_ZOD = lazyPackage("zod", ["array", "boolean", "discriminatedUnion", "enum", "lazy", "literal", "null", "number", "object", "partialRecord", "prettifyError", "record", "string", "tuple", "union"]);

async function buildLintBundle(outdir) {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { ...LINT_BUNDLE, ...LINT_START },
    outdir,
    entryNames: "[name]",
    outExtension: { ".js": ".cjs" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    // web-tree-sitter is bundled in as its CommonJS build (the ESM one loads Node modules with
    // import(), which a vm.Script cannot); the grammar and runtime .wasm are found by treesitter.ts.
    external: [],
    alias: { "web-tree-sitter": "./node_modules/web-tree-sitter/web-tree-sitter.cjs" },
    define: { "import.meta.url": "__hcpModuleUrl" },
    banner: { js: 'const __hcpModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [NO_SERVER_PACKAGES, LEAVE_OUT_LAZY_COMMANDS, LAZY_YAML, LAZY_ZOD],
    legalComments: "none",
    minify: true,
    logLevel: "warning",
  });
  if (result.warnings.length > 0) throw new Error(`the lint bundle has ${result.warnings.length} warning(s); see above`);
}

function buildTypes(outdir) {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", outdir], { cwd: root, stdio: "inherit" });
  // The sources import "./x.ts"; a published declaration must name the JavaScript file.
  for (const file of walk(outdir)) {
    if (!file.endsWith(".d.ts")) continue;
    const text = readFileSync(file, "utf8");
    const fixed = text.replace(/(from\s+|import\()(["'])(\.{1,2}\/[^"']+)\.ts\2/g, "$1$2$3.js$2");
    if (fixed !== text) writeFileSync(file, fixed);
  }
}

/** dist/web, by the web pages' own build (it rebuilds only when an input changed). */
function buildWeb() {
  execFileSync(process.execPath, ["--import", "tsx", join(root, "src", "web", "build.ts")], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

/**
 * Moves every file of `from` to the same place under `to`, each with one rename (which
 * replaces a file atomically), then removes the files of `to` the build no longer has: a
 * command started meanwhile (tests run the binary while `npm pack` rebuilds) sees either
 * the old file or the new one, never none.
 */
function moveInto(from, to) {
  const moved = new Set();
  for (const file of walk(from)) {
    const target = join(to, relative(from, file));
    mkdirSync(dirname(target), { recursive: true });
    renameSync(file, target);
    moved.add(target);
  }
  if (existsSync(to) && statSync(to).isDirectory()) for (const file of walk(to)) if (!moved.has(file)) rmSync(file);
}

/** Builds into a fresh folder next to dist/, then moves the owned paths in (chunks first, entry points after). */
export async function buildPackage({ types = true } = {}) {
  const staging = join(root, `.dist-staging-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await Promise.all([buildJs(staging), buildLintBundle(staging), buildServer(staging)]);
    copyVendor(staging);
    if (types) buildTypes(join(staging, "types"));
    if (types) buildWeb();
    writeFileSync(join(staging, ".build-stamp"), `${JSON.stringify({ built: new Date().toISOString(), types })}\n`);
    mkdirSync(dist, { recursive: true });
    moveInto(join(staging, "chunks"), join(dist, "chunks"));
    for (const name of OWNED) {
      const from = join(staging, name);
      if (name === "chunks" || !existsSync(from)) continue; // types stay as an earlier full build wrote them
      if (statSync(from).isDirectory()) moveInto(from, join(dist, name));
      else renameSync(from, join(dist, name));
    }
    for (const name of FORMER) rmSync(join(dist, name), { force: true });
    assembleServerPackage();
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The newest modification time under the inputs of the JavaScript build. */
export function newestInput() {
  const inputs = [join(root, "src"), join(root, "package.json"), fileURLToPath(import.meta.url)];
  let newest = 0;
  for (const input of inputs) {
    for (const file of statSync(input).isDirectory() ? walk(input) : [input]) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/** True when dist/ lacks a build (with declarations, when `types`) or is older than a source file. */
export function isStale({ types = true } = {}) {
  const stamp = join(dist, ".build-stamp");
  if (!existsSync(stamp) || !existsSync(join(dist, "main.js"))) return true;
  if (types && !JSON.parse(readFileSync(stamp, "utf8")).types) return true;
  return statSync(stamp).mtimeMs < newestInput();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const types = !process.argv.includes("--no-types");
  // `prepare` runs after `npm ci` and again during `npm pack` right after `prepack`: build once.
  if (process.argv.includes("--if-stale") && !isStale({ types })) process.exit(0);
  const started = performance.now();
  await buildPackage({ types });
  const ms = Math.round(performance.now() - started);
  process.stderr.write(`built ${relative(process.cwd(), dist) || "dist"}/ (${types ? "JavaScript and types" : "JavaScript"}) in ${ms} ms\n`);
}
