// Runs the pure core analyzer under Deno on the files named as arguments and prints the
// findings as JSON. test/deno/deno.test.ts compares this with the same run under Node.
import { Language, Parser } from "web-tree-sitter";
import { analyze } from "../../src/core/analyze/index.ts";

declare const Deno: {
  args: string[];
  readFile(path: string): Promise<Uint8Array>;
  readTextFile(path: string): Promise<string>;
};

await Parser.init();
const grammar = await Deno.readFile(new URL("../../node_modules/tree-sitter-python/tree-sitter-python.wasm", import.meta.url).pathname);
const python = await Language.load(grammar);
const files = await Promise.all(Deno.args.map(async (path) => ({ path, text: await Deno.readTextFile(path) })));
const report = analyze(files, { python });
console.log(JSON.stringify({ runtime: "deno", units: report.units.length, findings: report.findings, diagnostics: report.diagnostics }));
