// dist/lint.cjs leaves zod out of a plain lint (scripts/build.mjs LAZY_ZOD, src/core/model/deferred.ts):
// the model's schemas are only types there. Rule options need zod, and get it on first use; so
// does a user's script that starts from an upstream recipe, whose settings come from the shipped
// index of upstream recipes (data/megatron-bridge-recipes.json), a file checked against its
// schema: once, and again only when its text changes (its hash kept in the cache folder).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "../support/cli.ts";

const userScript = join(root, "fixtures", "cli", "clean_recipe.py");
/** The same recipe inside a Bridge checkout: its imports are the tree's own, so no index is read. */
const recipe = join(mkdtempSync(join(tmpdir(), "hcp-bundle-")), "src", "megatron", "bridge", "recipes", "clean_recipe.py");
mkdirSync(join(recipe, ".."), { recursive: true });
copyFileSync(userScript, recipe);

/** Runs `hcp-bot ARGS` from dist/lint.cjs in a fresh process; says whether zod was loaded by then. */
function lintInProcess(args: string[], env: NodeJS.ProcessEnv = process.env): { code: number; out: string; zodLoaded: boolean } {
  const script = `
    const bundle = require(${JSON.stringify(join(root, "dist", "lint.cjs"))});
    let out = "";
    bundle.main(${JSON.stringify(args)}, { out: (t) => (out += t), err: (t) => (out += t) }).then((code) => {
      // zod registers its global registry when it loads.
      process.stdout.write(JSON.stringify({ code, out, zodLoaded: globalThis.__zod_globalRegistry !== undefined }));
    });`;
  const r = spawnSync(process.execPath, ["-e", script], { cwd: root, encoding: "utf8", env });
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as { code: number; out: string; zodLoaded: boolean };
}

describe("dist/lint.cjs and zod", () => {
  it("a plain lint never loads zod", () => {
    const r = lintInProcess(["lint", recipe]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^No findings in 1 file \(1 configuration\)$/m);
    expect(r.zodLoaded).toBe(false);
  });

  it("a user's script that imports megatron.bridge but starts from no upstream recipe reads no index, so no zod", () => {
    const r = lintInProcess(["lint", userScript]);
    expect(r.code).toBe(0);
    expect(r.zodLoaded).toBe(false);
  });

  it("a script on an upstream recipe loads it to check the index, once: the hash of the text that passed is kept", () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-bundle-index-"));
    const script = join(dir, "train.py");
    // Nothing for a rule to fix (a fix's layout advice loads zod too): only the index needs it.
    writeFileSync(script, "from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\n\ncfg = llama3_8b_pretrain_config()\n");
    const cache = join(dir, "cache");
    const env: NodeJS.ProcessEnv = { ...process.env, HCP_BOT_CACHE_DIR: cache, NO_COLOR: "1" };
    delete env.HCP_BRIDGE_INDEX;
    delete env.MEGATRON_BRIDGE_DIR;
    const first = lintInProcess(["lint", "--isolated", script], env);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/info base-from-index: .* judged with its settings in Megatron-Bridge 0\.7\.0/);
    expect(first.zodLoaded).toBe(true);
    const shipped = readFileSync(join(root, "data", "megatron-bridge-recipes.json"), "utf8");
    expect(readFileSync(join(cache, "bridge-index-checked.txt"), "utf8")).toBe(`${createHash("sha256").update(shipped).digest("hex")}\n`);
    const second = lintInProcess(["lint", "--isolated", script], env);
    expect(second).toEqual({ ...first, zodLoaded: false });
    // No cache folder: checked every time.
    expect(lintInProcess(["lint", "--isolated", script], { ...env, HCP_BOT_CACHE_DIR: "off" }).zodLoaded).toBe(true);
  });

  it("rule options load it and are still checked", () => {
    const ok = lintInProcess(["lint", "--select", "hcp001", recipe]);
    expect(ok.code).toBe(0);
    expect(ok.zodLoaded).toBe(true);
    const bad = lintInProcess(["lint", "--ignore", "HCP999", recipe]);
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/unknown rule id HCP999/);
  });
});
