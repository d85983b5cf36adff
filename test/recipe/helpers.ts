// Shared helpers for the extractor tests: read a fixture, check provenance exactly.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { SourceFile } from "../../src/core/model/source.ts";
import type { ConfigUnit, Setting, SettingKey } from "../../src/core/model/settings.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/recipes/", import.meta.url));

export function fixture(rel: string): SourceFile {
  return { path: `fixtures/recipes/${rel}`, text: readFileSync(FIXTURES + rel, "utf8") };
}

export function setting(unit: ConfigUnit | undefined, key: SettingKey): Setting {
  const s = unit?.settings[key];
  if (!s) throw new Error(`${key} not set in ${unit?.id}`);
  return s;
}

/** The setting's range spells its origin text, and line/column agree with the offset. */
export function expectExactOrigin(text: string, s: Setting): void {
  const { start, end } = s.origin.location.range;
  expect(text.slice(start.offset, end.offset)).toBe(s.origin.text);
  for (const p of [start, end]) {
    const before = text.slice(0, p.offset);
    expect(p.line).toBe(before.split("\n").length);
    expect(p.column).toBe(p.offset - (before.lastIndexOf("\n") + 1) + 1);
  }
}

/** 1-based line and column of the first occurrence of `needle` (after `from`). */
export function pos(text: string, needle: string, from = 0): { line: number; column: number; offset: number } {
  const offset = text.indexOf(needle, from);
  if (offset < 0) throw new Error(`${needle} not found`);
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: offset - (before.lastIndexOf("\n") + 1) + 1, offset };
}
