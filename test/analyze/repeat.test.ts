// The analyzer keeps a few answers per file object between its steps (the nesting scan, where
// an import lands): a second analysis of the same objects must report exactly what a first
// analysis of fresh copies reports, and a file object whose text changed is read again.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { classifyFile } from "../../src/core/analyze/classify.ts";
import type { SourceFile } from "../../src/core/model/source.ts";
import { firstTooDeep } from "../../src/core/recipe/python/nesting.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

const ROOT = join(import.meta.dirname, "..", "..");

function fixtureFiles(dir = join(ROOT, "fixtures")): SourceFile[] {
  const out: SourceFile[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...fixtureFiles(path));
    else {
      const shown = relative(ROOT, path);
      if (classifyFile(shown)) out.push({ path: shown, text: readFileSync(path, "utf8") });
    }
  }
  return out;
}

describe("analyzing the same file objects again", () => {
  it("reports over fixtures/ what fresh copies report, byte for byte", async () => {
    const python = await loadPythonLanguage();
    const files = fixtureFiles();
    expect(files.filter((f) => f.path.endsWith(".py")).length).toBeGreaterThan(10);
    const first = JSON.stringify(analyze(files, { python }));
    const again = JSON.stringify(analyze(files, { python }));
    const fresh = JSON.stringify(analyze(files.map((f) => ({ ...f })), { python }));
    expect(again).toBe(first);
    expect(fresh).toBe(first);
    expect(first).toContain('"ruleId":"HCP');
  });

  it("reads a file object again when its text was replaced", async () => {
    const python = await loadPythonLanguage();
    const file: SourceFile = { path: "recipes/deep_recipe.py", text: `X = ${"(".repeat(300)}1${")".repeat(300)}\n` };
    const deep = analyze([file], { python });
    expect(deep.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/^not analyzed: too deeply nested/)]);
    file.text = "def pretrain_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 2\n    return cfg\n";
    const shallow = analyze([file], { python });
    expect(shallow.diagnostics.filter((d) => /too deeply nested/.test(d.message))).toEqual([]);
    expect(shallow.units.map((u) => u.name)).toContain("pretrain_config");
  });
});

describe("the nesting scan", () => {
  const brackets = (n: number) => `${"(".repeat(n)}1${")".repeat(n)}`;

  it("does not count brackets inside strings, whatever their quotes", () => {
    expect(firstTooDeep(`x = '''${"(".repeat(300)}'''\n`)).toBeUndefined();
    expect(firstTooDeep(`x = """ " ' ${"[".repeat(300)}"""\n`)).toBeUndefined();
    expect(firstTooDeep(`x = '\\'${"{".repeat(300)}'\n`)).toBeUndefined();
    expect(firstTooDeep(`x = "${"(".repeat(300)}\ny = 1\n`)).toBeUndefined(); // an unterminated string ends at its line
    expect(firstTooDeep(`# ${"(".repeat(300)}\ny = 1\n`)).toBeUndefined();
  });

  it("finds the bracket past the limit, after a triple-quoted string that holds the other quote", () => {
    const head = `s = """a ' b"""\nx = `;
    expect(firstTooDeep(`${head}${brackets(201)}\n`)).toEqual({ offset: head.length + 200, kind: "brackets" });
    expect(firstTooDeep(`${head}${brackets(200)}\n`)).toBeUndefined();
  });

  it("counts indentation levels, not continuation lines inside brackets", () => {
    let blocks = "";
    for (let i = 0; i <= 101; i++) blocks += `${" ".repeat(i)}if x:\n`;
    expect(firstTooDeep(blocks)?.kind).toBe("indentation");
    let inside = "x = (\n";
    for (let i = 0; i <= 150; i++) inside += `${" ".repeat(i)}1,\n`;
    expect(firstTooDeep(`${inside})\n`)).toBeUndefined();
  });
});
