// Where the grammar and the runtime are read from (src/node/treesitter.ts): the same files
// Node's own resolver (package exports included) names, found without it.
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPythonLanguage, packageFile } from "../../src/node/treesitter.ts";

const resolve = createRequire(join(import.meta.dirname, "..", "..", "src", "node", "treesitter.ts")).resolve;

describe("packageFile", () => {
  it.each([
    ["web-tree-sitter", "web-tree-sitter.wasm"],
    ["tree-sitter-python", "tree-sitter-python.wasm"],
  ])("%s/%s is the file require.resolve answers", (pkg, file) => {
    expect(realpathSync(packageFile(pkg, file))).toBe(realpathSync(resolve(`${pkg}/${file}`)));
  });

  it("asks require.resolve for what no node_modules folder holds, and fails as it does", () => {
    expect(() => packageFile("web-tree-sitter", "no-such-file.wasm")).toThrow(/not defined by "exports"/);
  });

  it("loads a grammar that parses Python", async () => {
    const language = await loadPythonLanguage();
    expect(language.nodeTypeCount).toBeGreaterThan(100);
  });
});
