// Property: whatever a fixture is mutated into, the analyzer does not throw, and every
// location it reports (findings, related places, fix edits, diagnostics) lies inside the
// file it names, with line/column agreeing with the offset.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import fc from "fast-check";
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { classifyFile } from "../../src/core/analyze/classify.ts";
import { LineIndex, type Location, type SourceFile } from "../../src/core/model/source.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

const root = join(import.meta.dirname, "..", "..");

function fixtures(dir: string): SourceFile[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return fixtures(p);
    if (!classifyFile(p) || statSync(p).size > 200_000) return [];
    const text = readFileSync(p, "utf8");
    return text.includes("\u0000") ? [] : [{ path: relative(root, p), text }];
  });
}

type Mutation =
  | { kind: "delete"; at: number; length: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "swap-lines"; a: number; b: number }
  | { kind: "duplicate-line"; at: number };

const SNIPPETS = ["(", ")", "[", "]", "{", "}", ":", "\n", "    ", '"', "'", "\\\n", "=", "a2a+p2p", "[2, 2]", "--context-parallel-size 4 ", "model.", "#", "$", "`", "\t", "\u00e9", "\ud83d\ude00"];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), text: fc.oneof(fc.constantFrom(...SNIPPETS), fc.string({ maxLength: 12 })) }),
  fc.record({ kind: fc.constant("swap-lines" as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant("duplicate-line" as const), at: fc.nat() }),
);

function mutate(text: string, m: Mutation): string {
  switch (m.kind) {
    case "delete": {
      const at = text.length ? m.at % text.length : 0;
      return text.slice(0, at) + text.slice(at + m.length);
    }
    case "insert": {
      const at = text.length ? m.at % (text.length + 1) : 0;
      return text.slice(0, at) + m.text + text.slice(at);
    }
    case "swap-lines": {
      const lines = text.split("\n");
      const a = m.a % lines.length;
      const b = m.b % lines.length;
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      return lines.join("\n");
    }
    case "duplicate-line": {
      const lines = text.split("\n");
      const at = m.at % lines.length;
      lines.splice(at, 0, lines[at]!);
      return lines.join("\n");
    }
  }
}

function problemsWith(loc: Location, files: Map<string, LineIndex>): string[] {
  const index = files.get(loc.file);
  if (!index) return [`location names a file that was not analyzed: ${loc.file}`];
  const out: string[] = [];
  for (const p of [loc.range.start, loc.range.end]) {
    if (p.offset < 0 || p.offset > index.text.length) out.push(`offset ${p.offset} outside 0..${index.text.length} in ${loc.file}`);
    const expected = index.point(p.offset);
    if (expected.line !== p.line || expected.column !== p.column) {
      out.push(`${loc.file}: offset ${p.offset} is ${expected.line}:${expected.column}, reported ${p.line}:${p.column}`);
    }
  }
  if (loc.range.end.offset < loc.range.start.offset) out.push(`${loc.file}: range ends before it starts`);
  return out;
}

describe("analyzer on mutated fixtures", () => {
  let python: Language;
  const corpus = fixtures(join(root, "fixtures", "recipes")).concat(fixtures(join(root, "fixtures", "cli")));

  beforeAll(async () => {
    python = await loadPythonLanguage();
  });

  it("has fixtures of every kind to mutate", () => {
    const kinds = new Set(corpus.map((f) => classifyFile(f.path)));
    expect(kinds).toEqual(new Set(["python", "yaml", "shell", "markdown", "pins"]));
  });

  it("never throws and reports only locations inside the files", () => {
    fc.assert(
      fc.property(fc.nat({ max: corpus.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 6 }), (which, mutations) => {
        const original = corpus[which]!;
        const text = mutations.reduce(mutate, original.text);
        const file = { path: original.path, text };
        const report = analyze([file], { python });
        const indexes = new Map([[file.path, new LineIndex(text)]]);
        const locations: Location[] = [
          ...report.findings.flatMap((f) => [f.location, ...f.related.map((r) => r.location), ...(f.fix?.edits ?? []).map((e) => ({ file: e.file, range: e.range }))]),
          ...report.diagnostics.flatMap((d) => (d.location ? [d.location] : [])),
          ...report.units.flatMap((u) => [u.location, ...Object.values(u.settings).map((s) => s!.origin.location)]),
        ];
        const problems = locations.flatMap((l) => problemsWith(l, indexes));
        expect(problems).toEqual([]);
      }),
      { numRuns: 300, seed: 424242 },
    );
  });
});
