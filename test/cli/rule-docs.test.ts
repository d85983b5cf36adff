// The documentation URL's one function (src/core/rules/doc-url.ts): HCP_DOCS_URL, else the bot's own
// pages at HCP_PUBLIC_URL, else package.json's homepage, else no link; and PACKAGE_HOMEPAGE kept equal to package.json's `homepage`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { docsBase, docUrlFor, ownDocsBase, PACKAGE_HOMEPAGE, ruleDocUrl } from "../../src/core/rules/doc-url.ts";
import { root } from "../support/cli.ts";

describe("rule documentation URLs", () => {
  it("PACKAGE_HOMEPAGE is package.json's homepage", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { homepage?: string };
    expect(PACKAGE_HOMEPAGE).toBe(pkg.homepage);
  });

  it("HCP_DOCS_URL names the folder of the pages and wins over the homepage", () => {
    expect(docsBase({ HCP_DOCS_URL: "https://ghe.example.test/org/hcp-bot/blob/v1/docs/rules" }, "https://github.com/o/hcp-bot")).toBe("https://ghe.example.test/org/hcp-bot/blob/v1/docs/rules/");
    expect(docUrlFor({ HCP_DOCS_URL: "https://d.example.test/r/" })("HCP001")).toBe("https://d.example.test/r/HCP001.md");
  });

  it("a GitHub repository homepage gives its blob/main/docs/rules pages; another site its docs/rules", () => {
    expect(ruleDocUrl("HCP007", docsBase({}, "https://github.com/o/hcp-bot#readme"))).toBe("https://github.com/o/hcp-bot/blob/main/docs/rules/HCP007.md");
    expect(ruleDocUrl("HCP007", docsBase({}, "https://hcp-bot.example.test/"))).toBe("https://hcp-bot.example.test/docs/rules/HCP007.md");
  });

  it("no link without either, and none from an HCP_DOCS_URL that is not an http(s) URL", () => {
    expect(docsBase({}, undefined)).toBeUndefined();
    expect(docsBase({ HCP_DOCS_URL: "javascript:alert(1)" }, "https://github.com/o/hcp-bot")).toBeUndefined();
    expect(ruleDocUrl("HCP001", undefined)).toBeUndefined();
  });

  it("HCP_PUBLIC_URL links the bot's own rule pages (/docs/rules/ID), unless HCP_DOCS_URL names other ones", () => {
    expect(docUrlFor({ HCP_PUBLIC_URL: "https://hcp-bot.example.test/" })("HCP001")).toBe("https://hcp-bot.example.test/docs/rules/HCP001");
    expect(docUrlFor({ HCP_PUBLIC_URL: "http://127.0.0.1:3000" })("AB002")).toBe("http://127.0.0.1:3000/docs/rules/AB002");
    expect(docUrlFor({ HCP_PUBLIC_URL: "https://bot.example.test", HCP_DOCS_URL: "https://d.example.test/r" })("HCP001")).toBe("https://d.example.test/r/HCP001.md");
    expect(ownDocsBase("ftp://bot.example.test")).toBeUndefined();
    expect(docUrlFor({ HCP_PUBLIC_URL: "not a url" })("HCP001")).toBeUndefined();
  });
});
