// docs/architecture.md is the newcomer's map: every src/ path it names must exist, and every
// folder of src/ must be on it, so a move or a new layer that forgets the map fails here.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");

/** Each `src/...` path the document names (a folder ends in "/"), once. */
function namedPaths(text: string): string[] {
  return [...new Set([...text.matchAll(/\bsrc\/[\w./-]*[\w/]/g)].map((m) => m[0]))];
}

describe("docs/architecture.md", () => {
  const paths = namedPaths(doc);

  it("names the files of the three flows", () => {
    expect(paths).toEqual(expect.arrayContaining(["src/server/webhook-guard.ts", "src/github/smoke/request.ts", "src/cli/lint-start.ts"]));
  });

  it.each(paths)("names %s, which exists", (path) => {
    expect(existsSync(join(ROOT, path))).toBe(true);
  });

  it("shows every folder of src/ in its picture of the layers", () => {
    const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `src/${e.name}/`);
    expect(folders.length).toBeGreaterThan(5);
    const picture = doc.slice(doc.indexOf("## The layers"), doc.indexOf("## A pull request"));
    expect(folders.filter((f) => !picture.includes(f))).toEqual([]);
  });
});
