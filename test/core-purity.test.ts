// The core must run on Deno and Cloudflare Workers: no Node built-ins, no process, no I/O.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourcesUnder(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const FORBIDDEN: [RegExp, string][] = [
  [/from\s+["']node:/, "imports a node: module"],
  [/from\s+["'](fs|path|os|child_process|http|https|net|crypto|stream|url|util)(\/[^"']*)?["']/, "imports a Node built-in"],
  [/\bprocess\.(env|argv|exit|cwd|stdout|stderr)/, "uses process"],
  [/\bBuffer\./, "uses Buffer"],
  [/\brequire\(/, "uses require"],
  [/\bfetch\(/, "does network I/O"],
];

describe("src/core is runtime-neutral", () => {
  const files = sourcesUnder(join(import.meta.dirname, "..", "src", "core"));

  it("has source files to check", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files)("%s uses no Node built-ins or I/O", (file) => {
    const text = readFileSync(file, "utf8").replace(/\/\/.*$/gm, "");
    const problems = FORBIDDEN.filter(([re]) => re.test(text)).map(([, why]) => why);
    expect(problems).toEqual([]);
  });
});

describe("imports that edge bundles depend on", () => {
  const src = join(import.meta.dirname, "..", "src");
  const all = sourcesUnder(src);

  it.each(all)("%s imports zod as a namespace (a named import pulls all of zod into a bundle)", (file) => {
    expect(readFileSync(file, "utf8")).not.toMatch(/import\s*\{[^}]*\}\s*from\s*["']zod["']/);
  });

  it("keeps Probot and Bolt in src/server (the behaviour runs on hosts without them)", () => {
    const using = all.filter((f) => /from\s+["'](probot|@slack\/bolt)["']/.test(readFileSync(f, "utf8"))).map((f) => f.slice(src.length + 1));
    expect(using.length).toBeGreaterThan(0);
    // The web mount (Probot's server, Node only) is the server host's too: src/server/web-mount.ts.
    expect(using.filter((f) => !f.startsWith("server/"))).toEqual([]);
  });
});
