import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { timeLimitsIn } from "../support/time-limits.ts";

const TEST_DIR = join(import.meta.dirname, "..");

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe("time limits in tests (one figure, test/support/patience.ts, for every wait)", () => {
  it("finds a limit however it is written", () => {
    const sample = [
      'it("a", () => {}, 5000);',
      'it.each([1])("b", (n) => {}, 30_000);',
      'describe("c", { timeout: 1 }, () => {});',
      "beforeAll(async () => {}, 60_000);",
      'await until("d", check, 30_000);',
      'await page.waitForFunction(() => true, undefined, { timeout: SOME + 10_000 });',
      // Not limits: the shared figure, a test without one, rows of `.each`, a setTimeout.
      'it("e", () => {});',
      'await page.waitForSelector("body", { timeout: PATIENCE_MS });',
      "setTimeout(done, 1000);",
    ].join("\n");
    expect(timeLimitsIn("sample.ts", sample).map((l) => l.line)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("no test, suite, hook or wait in test/ names a figure of its own", () => {
    const limits = testFiles(TEST_DIR).flatMap((file) => timeLimitsIn(file, readFileSync(file, "utf8")).map((l) => `${relative(TEST_DIR, file)}:${l.line}: ${l.what}`));
    expect(limits).toEqual([]);
  });
});
