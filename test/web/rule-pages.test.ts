// The rule pages (docs/rules/*.md, rendered at build time) served by `hcp-bot serve` over real
// HTTP: every page `npm run docs` writes is there under the strict page CSP (no script at
// all), the index links each one, an unknown rule is a 404 page, and Markdown's raw HTML never
// reaches the browser as markup.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ruleById } from "../../src/core/rules/index.ts";
import { PAGE_CSP } from "../../src/web/server/headers.ts";
import { renderRulePage } from "../../src/web/server/rule-pages.ts";
import { root, type Started } from "../support/cli.ts";
import { servePages } from "../support/setup-mode.ts";

const DOCS = join(root, "docs", "rules");
const IDS = readdirSync(DOCS).filter((f) => /^[A-Z]+\d{3}\.md$/.test(f)).map((f) => f.slice(0, -3)).sort();

let server: Started;
let base = "";
beforeAll(async () => {
  ({ server, base } = await servePages("rule-pages"));
});
afterAll(() => {
  server?.child.kill("SIGTERM");
});

/** A page's tags that would run or style anything from the text: none may be there. */
const MARKUP = /<(script|style|iframe|img|object|embed|form)\b|\son\w+=|javascript:/i;

describe("the rule pages on the Node server", () => {
  it("serve every page npm run docs writes, as HTML under the page CSP, titled by the rule", async () => {
    expect(IDS.length).toBeGreaterThan(20);
    for (const id of IDS) {
      const res = await fetch(`${base}/docs/rules/${id}`);
      expect(res.status, id).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("content-security-policy")).toBe(PAGE_CSP);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      const text = await res.text();
      const rule = ruleById(id);
      if (rule) expect(text, id).toContain(`<h1>${id}: ${rule.name}</h1>`);
      else expect(text, id).toContain(`<h1>${id}`);
      expect(text, id).toContain('<link rel="stylesheet" href="/web/style.css">');
      expect(text, id).not.toMatch(MARKUP);
      // The rule's example is the page's code block, as docs/rules/ID.md has it.
      const example = /```\w*\n([^`]+?)\n```/.exec(readFileSync(join(DOCS, `${id}.md`), "utf8"))?.[1];
      if (example) expect(text, id).toContain(example.split("\n")[0]!.replace(/"/g, "&#34;").replace(/'/g, "&#39;"));
    }
  });

  it("the index at /docs/rules links each rule's page, and each link answers", async () => {
    const res = await fetch(`${base}/docs/rules`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(PAGE_CSP);
    const text = await res.text();
    const linked = [...text.matchAll(/<a href="\/docs\/rules\/([A-Z]+\d{3})"/g)].map((m) => m[1]!);
    expect([...new Set(linked)].sort()).toEqual(IDS);
    // A rule page links back to the index and to the other rules as this server's pages.
    const page = await (await fetch(`${base}/docs/rules/HCP001`)).text();
    expect(page).toContain('<a href="/docs/rules" rel="noreferrer noopener">the rule index</a>');
    expect(page).not.toContain(".md)");
    const style = await fetch(`${base}/web/style.css`);
    expect(style.status).toBe(200);
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8");
  });

  it("answer HCP001.md too (the address of a folder of Markdown pages)", async () => {
    const res = await fetch(`${base}/docs/rules/HCP001.md`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<h1>HCP001: a2a-p2p-without-sizes</h1>");
  });

  it("an unknown rule, or a name that is none, is a 404 page that quotes it escaped", async () => {
    for (const path of ["/docs/rules/HCP999", "/docs/rules/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "/docs/rules/..%2F..%2Fbuild.json", "/docs/rules/hcp001"]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-security-policy"), path).toBe(PAGE_CSP);
      const text = await res.text();
      expect(text, path).toContain('<a href="/docs/rules">All rules</a>');
      expect(text, path).not.toMatch(MARKUP);
    }
    expect(await (await fetch(`${base}/docs/rules/HCP999`)).text()).toContain("<h1>No rule HCP999</h1>");
  });
});

describe("the rule pages' renderer", () => {
  it("passes no raw HTML of the Markdown through, and links only this site or the web", () => {
    const hostile = [
      "# HCP900: hostile",
      "",
      "<script>alert(1)</script>",
      '<img src=x onerror="alert(1)">',
      "<style>body{display:none}</style>",
      "[click](javascript:alert(1)) · [next](HCP001.md) · [source](../../src/core/rules/x.ts) · [web](https://example.test/a)",
    ].join("\n");
    const html = renderRulePage(hostile, "HCP900");
    // The text stays, as text: no element of it (its "onerror=" is inside the escaped <img ...>).
    expect(html).not.toMatch(/<(script|style|img)\b/i);
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(html).toContain('<a href="/docs/rules/HCP001" rel="noreferrer noopener">next</a>');
    expect(html).toContain("<code>source</code>");
    expect(html).toContain('<a href="https://example.test/a" rel="noreferrer noopener">web</a>');
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain("<title>HCP900: hostile · hcp-bot</title>");
  });
});
