// dist/lint.cjs leaves zod out of a plain lint (scripts/build.mjs LAZY_ZOD, src/core/model/deferred.ts):
// the model's schemas are only types there. Rule options need zod, and get it on first use; so
// does a user's script that imports megatron.bridge, whose bases come from the shipped index of
// upstream recipes (data/megatron-bridge-recipes.json), a file checked against its schema.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync } from "node:fs";
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
function lintInProcess(args: string[]): { code: number; out: string; zodLoaded: boolean } {
  const script = `
    const bundle = require(${JSON.stringify(join(root, "dist", "lint.cjs"))});
    let out = "";
    bundle.main(${JSON.stringify(args)}, { out: (t) => (out += t), err: (t) => (out += t) }).then((code) => {
      // zod registers its global registry when it loads.
      process.stdout.write(JSON.stringify({ code, out, zodLoaded: globalThis.__zod_globalRegistry !== undefined }));
    });`;
  const r = spawnSync(process.execPath, ["-e", script], { cwd: root, encoding: "utf8" });
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

  it("a user's script that imports megatron.bridge loads it, to check the index its bases come from", () => {
    const r = lintInProcess(["lint", userScript]);
    expect(r.code).toBe(0);
    expect(r.zodLoaded).toBe(true);
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
