// The V8 code cache `hcp-bot lint` starts with (src/node/code-cache.ts): used when valid,
// replaced when damaged or rejected, never used from a folder others may write to, and never
// in the way when it cannot be written. Each start is a fresh process, as for a user (within
// one process V8 keeps compiled scripts in memory and would hide what the cache did). Then
// the real binary: a cached lint answers exactly what an uncached one does.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheDirFrom } from "../../src/node/code-cache.ts";
import { hcpBot, root } from "../support/cli.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-code-cache-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A CommonJS bundle with the build's hash line; `answer` is what its exported function returns. */
function bundle(answer: string, { hashLine = true } = {}): string {
  const text = `const words = ${JSON.stringify(answer)}.split(" ");\nmodule.exports = { answer: () => words.map((w) => w.toUpperCase()).join(" "), file: __filename };\n`;
  const file = join(dir, `bundle-${n++}`, "lint.cjs");
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, hashLine ? `//sha256=${createHash("sha256").update(text).digest("hex")}\n${text}` : text);
  return file;
}

interface Start {
  cache: "accepted" | "rejected" | "none";
  cacheFile?: string;
  answer: string;
  file: string;
}

/** One start in a fresh Node process: runs the bundle through runCachedScript, then saves the cache. */
function runCachedScript(file: string, cacheDir: string | undefined): Start & { saveCache(): void } {
  const script = `
    import { runCachedScript } from ${JSON.stringify(join(root, "src", "node", "code-cache.ts"))};
    const [file, dir, save] = JSON.parse(process.argv[1]);
    const run = runCachedScript(file, dir ?? undefined);
    if (save) run.saveCache();
    process.stdout.write(JSON.stringify({ cache: run.cache, cacheFile: run.cacheFile, answer: run.exports.answer(), file: run.exports.file }));`;
  const start = (save: boolean): Start => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, JSON.stringify([file, cacheDir ?? null, save])], { cwd: root, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`the start failed (${r.status}): ${r.stderr}`);
    return JSON.parse(r.stdout) as Start;
  };
  // Saving is what a start does after its work: the same start again, this time saving.
  return { ...start(false), saveCache: () => void start(true) };
}

function freshCacheDir(): string {
  const cache = join(dir, `cache-${n++}`);
  mkdirSync(cache, { mode: 0o700 });
  return cache;
}

describe("runCachedScript", () => {
  it("compiles without a cache, writes one after the run, and starts from it the next time", () => {
    const file = bundle("from the bundle");
    const cache = freshCacheDir();
    const first = runCachedScript(file, cache);
    expect(first.cache).toBe("none");
    expect(first.answer).toBe("FROM THE BUNDLE");
    expect(first.file).toBe(file);
    first.saveCache();
    expect(readdirSync(cache)).toEqual([first.cacheFile!.slice(cache.length + 1)]);
    const written = statSync(first.cacheFile!).mtimeMs;
    const second = runCachedScript(file, cache);
    expect(second.cache).toBe("accepted");
    expect(second.answer).toBe("FROM THE BUNDLE");
    second.saveCache(); // accepted: nothing to write
    expect(statSync(first.cacheFile!).mtimeMs).toBe(written);
  }, 60_000); // fresh Node processes through tsx, on a shared machine

  it("a bundle changed to text of the same length is compiled afresh, never run from the old cache", () => {
    const cache = freshCacheDir();
    const before = bundle("aaaa");
    const first = runCachedScript(before, cache);
    first.saveCache();
    const after = bundle("bbbb");
    // Same folder layout and length: only the contents differ.
    writeFileSync(before, readFileSync(after));
    const second = runCachedScript(before, cache);
    expect(second.cache).toBe("none");
    expect(second.answer).toBe("BBBB");
    expect(second.cacheFile).not.toBe(first.cacheFile);
    second.saveCache();
    expect(readdirSync(cache)).toHaveLength(1); // the old build's cache is removed
    // Changed after the build, its hash line left as it was: compiled afresh all the same.
    const hashLine = readFileSync(before, "utf8").split("\n")[0]!;
    writeFileSync(before, `${hashLine}\n${readFileSync(bundle("cccc"), "utf8").split("\n").slice(1).join("\n")}`);
    const third = runCachedScript(before, cache);
    expect(third.cache).toBe("none");
    expect(third.answer).toBe("CCCC");
  }, 60_000); // fresh Node processes through tsx, on a shared machine

  it("a corrupt cache is rejected by V8, the result is still right, and the cache is replaced", () => {
    const file = bundle("corrupt cache");
    const cache = freshCacheDir();
    const first = runCachedScript(file, cache);
    first.saveCache();
    const data = readFileSync(first.cacheFile!);
    for (let i = 0; i < data.length; i += 7) data[i] = data[i]! ^ 0xff;
    writeFileSync(first.cacheFile!, data);
    const second = runCachedScript(file, cache);
    expect(second.cache).toBe("rejected");
    expect(second.answer).toBe("CORRUPT CACHE");
    second.saveCache();
    expect(runCachedScript(file, cache).cache).toBe("accepted");
  }, 60_000); // fresh Node processes through tsx, on a shared machine

  it("a folder others may write to is never read or written", () => {
    const file = bundle("shared folder");
    const cache = freshCacheDir();
    runCachedScript(file, cache).saveCache();
    chmodSync(cache, 0o777);
    try {
      const run = runCachedScript(file, cache);
      expect(run.cache).toBe("none");
      expect(run.answer).toBe("SHARED FOLDER");
      rmSync(run.cacheFile!);
      run.saveCache();
      expect(existsSync(run.cacheFile!)).toBe(false);
    } finally {
      chmodSync(cache, 0o700);
    }
  }, 60_000); // fresh Node processes through tsx, on a shared machine

  it("a cache folder that cannot be made costs nothing but the cache", () => {
    const file = bundle("no folder");
    const blocker = join(dir, `blocker-${n++}`);
    writeFileSync(blocker, "a file where the folder's parent should be");
    const run = runCachedScript(file, join(blocker, "hcp-bot"));
    expect(run.answer).toBe("NO FOLDER");
    expect(() => run.saveCache()).not.toThrow();
    expect(runCachedScript(file, join(blocker, "hcp-bot")).cache).toBe("none");
  }, 60_000); // fresh Node processes through tsx, on a shared machine

  it("a bundle without the build's hash line, or no cache folder, runs without a cache", () => {
    const unhashed = runCachedScript(bundle("no hash", { hashLine: false }), freshCacheDir());
    expect(unhashed.cacheFile).toBeUndefined();
    expect(unhashed.answer).toBe("NO HASH");
    unhashed.saveCache();
    const off = runCachedScript(bundle("off"), undefined);
    expect(off.cache).toBe("none");
    expect(off.cacheFile).toBeUndefined();
  }, 60_000); // fresh Node processes through tsx, on a shared machine

  it("the folder: HCP_BOT_CACHE_DIR (off or empty: none), else XDG_CACHE_HOME, else ~/.cache", () => {
    expect(cacheDirFrom({ HCP_BOT_CACHE_DIR: "/x/y", XDG_CACHE_HOME: "/c" })).toBe("/x/y");
    expect(cacheDirFrom({ HCP_BOT_CACHE_DIR: "off" })).toBeUndefined();
    expect(cacheDirFrom({ HCP_BOT_CACHE_DIR: "" })).toBeUndefined();
    expect(cacheDirFrom({ XDG_CACHE_HOME: "/c" })).toBe(join("/c", "hcp-bot"));
    expect(cacheDirFrom({})).toMatch(/[/\\]\.cache[/\\]hcp-bot$/);
  });
});

describe("hcp-bot lint through the code cache", () => {
  const fx = (name: string) => join("fixtures", "cli", name);

  it("answers exactly what an uncached lint does, writes the cache once, and then starts from it", async () => {
    const cache = join(dir, `bin-cache-${n++}`);
    const env = { ...process.env, HCP_BOT_CACHE_DIR: cache, NO_COLOR: "1" };
    const args = ["lint", "--format", "json", fx("hcp_recipes.py"), fx("override.yaml")];
    const uncached = await hcpBot(args, { env: { ...env, HCP_BOT_CACHE_DIR: "off" } });
    expect(uncached.code).toBe(1);
    expect(JSON.parse(uncached.stdout).findings.length).toBeGreaterThan(0);
    const first = await hcpBot(args, { env });
    const files = readdirSync(cache);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^lint\.cjs-[0-9a-f]{32}-[0-9a-f]{8}\.v8$/);
    const written = statSync(join(cache, files[0]!)).mtimeMs;
    const second = await hcpBot(args, { env });
    expect(statSync(join(cache, files[0]!)).mtimeMs).toBe(written); // accepted, not rewritten
    for (const run of [first, second]) {
      expect(run.code).toBe(uncached.code);
      expect(run.stdout).toBe(uncached.stdout);
      expect(run.stderr).toBe(uncached.stderr);
    }
  }, 60_000);

  it("a usage error and another command whose arguments say `lint` answer as before", async () => {
    const env = { ...process.env, HCP_BOT_CACHE_DIR: join(dir, `bin-cache-${n++}`), NO_COLOR: "1" };
    const bad = await hcpBot(["lint", "--format", "xml", fx("clean_recipe.py")], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('hcp-bot: --format takes text, json, sarif, github (got "xml")\n');
    // `explain lint` runs from dist/main.js: the lint bundle leaves explain's answer alone.
    const explain = await hcpBot(["explain", "lint"], { env });
    expect(explain.code).toBe(2);
    expect(explain.stderr).toMatch(/^hcp-bot: unknown rule lint/);
  }, 60_000);
});
