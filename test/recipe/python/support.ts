// Shared set-up for the Python extractor tests: the real tree-sitter parser and fixtures.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Parser } from "web-tree-sitter";
import { expect } from "vitest";
import type { ConfigUnit, Setting, SettingKey } from "../../../src/core/model/settings.ts";
import { extractPython } from "../../../src/core/recipe/python/index.ts";
import type { ExtractResult } from "../../../src/core/recipe/types.ts";
import { loadPythonLanguage } from "../../../src/node/treesitter.ts";

export const FIXTURES = join(import.meta.dirname, "..", "..", "..", "fixtures", "recipes", "python");

let parser: Parser | undefined;

export async function pythonParser(): Promise<Parser> {
  if (!parser) {
    const language = await loadPythonLanguage();
    parser = new Parser();
    parser.setLanguage(language);
  }
  return parser;
}

export function fixtureText(name: string): string {
  return readFileSync(join(FIXTURES, name), "utf8");
}

export async function extractText(path: string, text: string): Promise<ExtractResult> {
  return extractPython({ path, text }, await pythonParser());
}

export async function extractFixture(name: string): Promise<{ text: string; result: ExtractResult }> {
  const text = fixtureText(name);
  return { text, result: await extractText(`fixtures/recipes/python/${name}`, text) };
}

export function unitNamed(result: ExtractResult, name: string): ConfigUnit {
  const unit = result.units.find((u) => u.name === name);
  if (!unit) throw new Error(`no unit ${name}; units: ${result.units.map((u) => u.name).join(", ")}`);
  return unit;
}

export function setting(unit: ConfigUnit, key: SettingKey): Setting {
  const s = unit.settings[key];
  if (!s) throw new Error(`${unit.name} does not set ${key}; it sets ${Object.keys(unit.settings).join(", ")}`);
  return s;
}

export function valueOf(unit: ConfigUnit, key: SettingKey): unknown {
  const s = setting(unit, key);
  return s.value.known ? s.value.value : { unknown: s.value.reason };
}

/** The origin's range must give back exactly its text, and its line/column must match the offsets. */
export function expectExactOrigin(text: string, s: Setting): void {
  const { start, end } = s.origin.location.range;
  expect(text.slice(start.offset, end.offset)).toBe(s.origin.text);
  const before = text.slice(0, start.offset).split("\n");
  expect(start.line).toBe(before.length);
  expect(start.column).toBe((before[before.length - 1] ?? "").length + 1);
}

/** 1-based line of the first occurrence of a snippet in a text. */
export function lineOf(text: string, snippet: string, from = 0): number {
  const at = text.indexOf(snippet, from);
  if (at < 0) throw new Error(`snippet not found: ${snippet}`);
  return text.slice(0, at).split("\n").length;
}
