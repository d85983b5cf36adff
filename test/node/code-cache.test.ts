// Node's compile cache as `hcp-bot lint` uses it (src/node/code-cache.ts): written by the
// first lint, accepted by the next, replaced when damaged, never used from a folder others
// may write to, and never in the way when it cannot be made. Each start is the real binary
// in a fresh process, as for a user; what Node did with the cache is read from its own
// debug channel (NODE_DEBUG_NATIVE=COMPILE_CACHE). A cached lint answers exactly what an
// uncached one does.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheDirFrom } from "../../src/node/code-cache.ts";
import { hcpBot, type Run } from "../support/cli.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-code-cache-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fx = (name: string) => join("fixtures", "cli", name);
const ARGS = ["lint", "--format", "json", fx("hcp_recipes.py"), fx("override.yaml")];
let n = 0;
const freshDir = () => join(dir, `cache-${n++}`);

/** One lint in a fresh process with the cache in `cacheDir` ("off": none); `debug` adds Node's compile-cache log to stderr. */
function lint(cacheDir: string, debug = false): Promise<Run> {
  return hcpBot(ARGS, { env: { ...process.env, HCP_BOT_CACHE_DIR: cacheDir, NO_COLOR: "1", NODE_DEBUG_NATIVE: debug ? "COMPILE_CACHE" : "" } });
}

/** What Node said about the lint bundle: "accepted", "rejected", "none" (nothing read). */
function bundleCache(run: Run): "accepted" | "rejected" | "none" {
  const about = run.stderr.split("\n").filter((line) => line.startsWith("[compile cache]") && line.includes("lint.cjs"));
  if (about.some((line) => /lint\.cjs was accepted/.test(line))) return "accepted";
  if (about.some((line) => /rejected|mismatch|failed/i.test(line))) return "rejected";
  return "none";
}

/** The cache files Node wrote under `cacheDir` (in its per-version folder). */
function cacheFiles(cacheDir: string): string[] {
  if (!existsSync(cacheDir)) return [];
  return readdirSync(cacheDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

let uncached: Run;
beforeAll(async () => {
  uncached = await lint("off");
});

describe("hcp-bot lint with Node's compile cache", () => {
  it("the first lint writes the cache, the next starts from it, and both answer what an uncached lint does", async () => {
    expect(uncached.code).toBe(1);
    expect(JSON.parse(uncached.stdout).findings.length).toBeGreaterThan(0);
    const cache = freshDir();
    const first = await lint(cache, true);
    expect(bundleCache(first)).toBe("none");
    expect(cacheFiles(cache).length).toBeGreaterThan(0);
    const second = await lint(cache, true);
    expect(bundleCache(second)).toBe("accepted");
    const quiet = await lint(cache);
    for (const run of [first, second, quiet]) {
      expect(run.code).toBe(uncached.code);
      expect(run.stdout).toBe(uncached.stdout);
    }
    expect(quiet.stderr).toBe(uncached.stderr);
  });

  it("a damaged cache is refused before V8 runs it, the answer is still right, and the cache is replaced", async () => {
    const cache = freshDir();
    await lint(cache);
    for (const file of cacheFiles(cache)) {
      const data = readFileSync(file);
      for (let i = 0; i < data.length; i += 7) data[i] = data[i]! ^ 0xff;
      writeFileSync(file, data);
    }
    const damaged = await lint(cache, true);
    expect(bundleCache(damaged)).toBe("rejected");
    expect([damaged.code, damaged.stdout]).toEqual([uncached.code, uncached.stdout]);
    expect(bundleCache(await lint(cache, true))).toBe("accepted");
  });

  it("a folder others may write to is never read or written", async () => {
    const cache = freshDir();
    await lint(cache);
    const written = cacheFiles(cache);
    chmodSync(cache, 0o777);
    try {
      for (const file of written) rmSync(file);
      const run = await lint(cache, true);
      expect(bundleCache(run)).toBe("none");
      expect([run.code, run.stdout]).toEqual([uncached.code, uncached.stdout]);
      expect(cacheFiles(cache)).toEqual([]);
    } finally {
      chmodSync(cache, 0o700);
    }
  });

  it("a cache folder that cannot be made costs nothing but the cache", async () => {
    const blocker = join(dir, `blocker-${n++}`);
    writeFileSync(blocker, "a file where the folder's parent should be");
    const run = await lint(join(blocker, "hcp-bot"));
    expect([run.code, run.stdout, run.stderr]).toEqual([uncached.code, uncached.stdout, uncached.stderr]);
  });

  it("a usage error and another command whose arguments say `lint` answer as before", async () => {
    const env = { ...process.env, HCP_BOT_CACHE_DIR: freshDir(), NO_COLOR: "1" };
    const bad = await hcpBot(["lint", "--format", "xml", fx("clean_recipe.py")], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('hcp-bot: --format takes text, json, sarif, github (got "xml")\n');
    // `explain lint` runs from dist/main.js: the lint bundle leaves explain's answer alone.
    const explain = await hcpBot(["explain", "lint"], { env });
    expect(explain.code).toBe(2);
    expect(explain.stderr).toMatch(/^hcp-bot: unknown rule lint/);
  });

  it("the folder: HCP_BOT_CACHE_DIR (off or empty: none), else XDG_CACHE_HOME, else ~/.cache", () => {
    expect(cacheDirFrom({ HCP_BOT_CACHE_DIR: "/x/y", XDG_CACHE_HOME: "/c" })).toBe("/x/y");
    expect(cacheDirFrom({ HCP_BOT_CACHE_DIR: "off" })).toBeUndefined();
    expect(cacheDirFrom({ HCP_BOT_CACHE_DIR: "" })).toBeUndefined();
    expect(cacheDirFrom({ XDG_CACHE_HOME: "/c" })).toBe(join("/c", "hcp-bot"));
    expect(cacheDirFrom({})).toMatch(/[/\\]\.cache[/\\]hcp-bot$/);
  });
});
