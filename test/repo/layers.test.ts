// The layers of src/ (docs/architecture.md draws them): a module imports only from its own layer
// or one below it. The order, low to high, and why each layer sits where it does:
//
//   core    the pure analysis: rules, recipes, verdicts, renderers. No I/O (test/core-purity.test.ts).
//   shared  what every host needs and that knows no feature: the one Log port, the limits,
//           redaction, the capped body read, the package version.
//   store   the state (types.ts with the rate gate's interface) and one folder per store;
//           it needs only core and shared.
//   node    Node platform helpers the CLI and the server share: tree-sitter loading, worker
//           threads, files, the package's own files.
//   gpu     what runs on the GPU runner (`hcp-bot smoke-run`, `init-workflow`, the probe); it reads
//           the package's files through node.
//   jobs    the durable job runner over the store; it logs through shared's Log.
//   github  the GitHub App's behaviour: routes, reviews, smoke requests, verdicts, and the
//           settings and health report every host reads (settings name the job policy, so above jobs).
//   slack   the Slack app; it acts on GitHub through the smoke service it is handed, and imports
//           github's types only (the second test below).
//   web     the web pages (runs, playground) over store and node.
//   server  the Node server host: Probot, Bolt, durable jobs, metrics, the webhook guard, the web mount.
//   edge    the Deno and Cloudflare Workers hosts (they never load server or node).
//   cli     the `hcp-bot` command (src/cli.ts, src/main.ts, src/cli/): `serve` starts the server
//           and `setup` checks a key with edge's reader, so it is on top.
// The library entry src/index.ts re-exports core for `import ... from "hcp-bot"` and sits on top too.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");

const LAYERS = ["core", "shared", "store", "node", "gpu", "jobs", "github", "slack", "web", "server", "edge", "cli", "library"] as const;
type Layer = (typeof LAYERS)[number];

/** Files directly in src/ have no folder to name their layer. */
const ROOT_FILES: Record<string, Layer> = { "version.ts": "shared", "cli.ts": "cli", "main.ts": "cli", "index.ts": "library" };

interface Import {
  file: string;
  spec: string;
  target: string;
  typeOnly: boolean;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourcesUnder(join(dir, e.name)) : /\.(ts|js|mjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Every relative import of a file: import and export declarations, import() calls and `typeof import()` types. */
function importsOf(root: string, file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (spec.startsWith(".")) found.push({ file: relative(root, file), spec, target: relative(root, resolve(dirname(file), spec)), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const allTypes = clause !== undefined && (clause.isTypeOnly || (clause.name === undefined && clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, allTypes);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const allTypes = node.isTypeOnly || (node.exportClause !== undefined && ts.isNamedExports(node.exportClause) && node.exportClause.elements.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier.text, allTypes);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function layerOf(path: string): Layer | undefined {
  const [top, ...rest] = path.split("/");
  if (rest.length === 0) return ROOT_FILES[top!];
  return (LAYERS as readonly string[]).includes(top!) ? (top as Layer) : undefined;
}

const rank = (layer: Layer) => LAYERS.indexOf(layer);

/** "file: spec (from -> to)" for each import of a tree that reaches up a layer. */
function upwardImports(imports: readonly Import[]): string[] {
  return imports
    .filter((i) => rank(layerOf(i.target)!) > rank(layerOf(i.file)!))
    .map((i) => `${i.file}: ${i.spec} (${layerOf(i.file)} -> ${layerOf(i.target)})`);
}

const files = sourcesUnder(SRC);
const imports = files.flatMap((f) => importsOf(SRC, f));

describe("src/ is layered", () => {
  it("reads the imports of every source file, dynamic ones included", () => {
    expect(files.length).toBeGreaterThan(100);
    // src/cli/serve.ts loads the server only for `serve`, by import(); the parser must see it.
    expect(imports).toContainEqual(expect.objectContaining({ file: "cli/serve.ts", target: "server/server.ts", typeOnly: false }));
    // A `typeof import()` type counts as a type-only import.
    expect(imports.some((i) => i.typeOnly && i.file === "node/lint-config.ts")).toBe(true);
  });

  it("puts every file of src/ in a layer", () => {
    expect(files.map((f) => relative(SRC, f)).filter((f) => layerOf(f) === undefined)).toEqual([]);
  });

  it("has no import from a lower layer to a higher one", () => {
    expect(upwardImports(imports)).toEqual([]);
  });

  it("names each upward import of a tree that has them, whatever form the import takes", () => {
    const root = mkdtempSync(join(tmpdir(), "hcp-layers-"));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      write("github/gate.ts", "export interface Gate { wait(): void }\nexport const GATE = 1;\n");
      write("store/static.ts", 'import type { Gate } from "../github/gate.ts";\nexport type G = Gate;\n');
      write("store/dynamic.ts", 'export const load = () => import("../github/gate.ts");\n');
      write("shared/reexport.ts", 'export { GATE } from "../github/gate.ts";\n');
      write("core/type-query.ts", 'export type M = typeof import("../store/static.ts");\n');
      write("cli/down.ts", 'import { GATE } from "../github/gate.ts";\nexport const x = GATE;\n');
      const found = sourcesUnder(root).flatMap((f) => importsOf(root, f));
      expect(upwardImports(found).sort()).toEqual([
        "core/type-query.ts: ../store/static.ts (core -> store)",
        "shared/reexport.ts: ../github/gate.ts (shared -> github)",
        "store/dynamic.ts: ../github/gate.ts (store -> github)",
        "store/static.ts: ../github/gate.ts (store -> github)",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/**
 * Value imports from slack into github: none, since the smoke service (src/github/smoke/) hands
 * Slack what it needs (settings, roles, the requests) by construction. The list may only shrink.
 */
const SLACK_VALUE_IMPORTS_FROM_GITHUB: string[] = [];

describe("slack uses github's types", () => {
  const fromSlack = imports.filter((i) => layerOf(i.file) === "slack" && layerOf(i.target) === "github");

  it("imports github's types and no other value than the listed ones", () => {
    expect(fromSlack.length).toBeGreaterThan(0);
    expect(fromSlack.filter((i) => !i.typeOnly).map((i) => `${i.file}: ${i.spec}`).sort()).toEqual(SLACK_VALUE_IMPORTS_FROM_GITHUB);
  });
});
