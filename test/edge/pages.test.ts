// The web pages on the built edge bundles, on workerd (Miniflare, wrangler.toml's rules) and
// on Deno: `/` (the landing page), /playground and every file it loads (found by reading the
// page, its script and its worker as the browser does), and the rule pages, each with the
// same status, headers, CSP and bytes as the Node server's handler answers for the same path.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_CSP, PLAYGROUND_CSP } from "../../src/web/server/headers.ts";
import { createWebHandler } from "../../src/web/server/index.ts";
import { createStaticFiles } from "../../src/web/server/static.ts";
import { appKeys } from "../support/bot-harness.ts";
import { startEdge, type EdgeProcess, type RuntimeName } from "./runtimes.ts";

/** The Node server's handler, as `hcp-bot serve` mounts it in app mode with the run history off. */
const node = createWebHandler({ files: createStaticFiles(), runs: { access: { access: "off" }, store: undefined, github: { webUrl: "http://x", apiUrl: "http://x/api/v3" } }, landing: true });

/** Headers that differ by host for reasons of their own (the clock, the transport). */
const HOST_HEADERS = new Set(["date", "content-length", "transfer-encoding", "connection", "keep-alive", "vary", "content-encoding"]);
const headersOf = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !HOST_HEADERS.has(name)).sort());

const TYPE: Record<string, string> = { js: "text/javascript; charset=utf-8", wasm: "application/wasm", css: "text/css; charset=utf-8", svg: "image/svg+xml", html: "text/html; charset=utf-8" };

/** The files a page loads: its own-origin src/href that are files (a script, a style sheet, an icon), not pages. */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css|svg|wasm))"/g)].map((m) => m[1]!);
}

describe.each(["workerd", "deno"] as RuntimeName[])("the web pages on %s", (runtime) => {
  let bot: EdgeProcess;
  beforeAll(async () => {
    bot = await startEdge(runtime, {
      APP_ID: "78",
      PRIVATE_KEY: appKeys.privateKey,
      WEBHOOK_SECRET: "edge-pages-secret",
      HCP_DATA_DIR: mkdtempSync(join(tmpdir(), `hcp-edge-pages-${runtime}-`)),
      LOG_LEVEL: "error",
    });
  });
  afterAll(async () => {
    await bot?.stop();
  });

  /** The edge's answer and the Node handler's for one path: same status, headers and bytes. */
  async function sameAsNode(path: string): Promise<{ res: Response; body: Uint8Array }> {
    const res = await fetch(`${bot.url}${path}`);
    const body = new Uint8Array(await res.arrayBuffer());
    const expected = (await node(new Request(`http://bot.test${path}`)))!;
    expect(res.status, `${path} on ${runtime}`).toBe(expected.status);
    expect(headersOf(res), `${path} on ${runtime}`).toEqual(headersOf(expected));
    const want = new Uint8Array(await expected.arrayBuffer());
    expect(body.length, path).toBe(want.length);
    expect(Buffer.from(body).equals(Buffer.from(want)), `${path}: the same bytes`).toBe(true);
    return { res, body };
  }

  it("serves /playground and every file it loads, typed, under the playground CSP", async () => {
    const { res, body } = await sameAsNode("/playground");
    expect(res.headers.get("content-type")).toBe(TYPE.html);
    expect(res.headers.get("content-security-policy")).toBe(PLAYGROUND_CSP);
    const html = new TextDecoder().decode(body);
    const assets = assetsOf(html);
    expect(assets).toEqual(expect.arrayContaining(["/playground/page.js", "/web/style.css", "/web/noscript.css", "/web/icon.svg"]));
    // The page script starts its worker, and the worker loads the two WebAssembly files, by relative URLs.
    const page = new TextDecoder().decode((await sameAsNode("/playground/page.js")).body);
    const worker = new URL(/"(\.\/worker\.js)"/.exec(page)![1]!, `${bot.url}/playground/page.js`).pathname;
    const workerText = new TextDecoder().decode((await sameAsNode(worker)).body);
    const wasm = [...new Set([...workerText.matchAll(/"([\w-]+\.wasm)"/g)].map((m) => new URL(m[1]!, `${bot.url}${worker}`).pathname))];
    expect(wasm.sort()).toEqual(["/playground/tree-sitter-python.wasm", "/playground/web-tree-sitter.wasm"]);
    for (const path of [...assets, worker, ...wasm]) {
      const { res: file, body: bytes } = await sameAsNode(path);
      expect(file.status, path).toBe(200);
      expect(file.headers.get("content-type"), path).toBe(TYPE[path.slice(path.lastIndexOf(".") + 1)]);
      expect(file.headers.get("content-security-policy"), path).toBe(PLAYGROUND_CSP);
      expect(bytes.length, path).toBeGreaterThan(100);
    }
    // WebAssembly that compiles: the bytes, not a module object's description.
    for (const path of wasm) expect(WebAssembly.validate(new Uint8Array(await (await fetch(`${bot.url}${path}`)).arrayBuffer())), path).toBe(true);
  });

  it("answers / with the landing page, and the rule pages, under the page CSP", async () => {
    const landing = await sameAsNode("/");
    expect(landing.res.headers.get("content-security-policy")).toBe(PAGE_CSP);
    const text = new TextDecoder().decode(landing.body);
    expect(text).toContain('<a href="/playground">Playground</a>');
    expect(text).toContain('<a href="/docs/rules">Rules</a>');
    const index = new TextDecoder().decode((await sameAsNode("/docs/rules")).body);
    const rules = [...new Set([...index.matchAll(/<a href="(\/docs\/rules\/[A-Z]+\d{3})"/g)].map((m) => m[1]!))];
    expect(rules.length).toBeGreaterThan(20);
    for (const path of rules) {
      const { res } = await sameAsNode(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-security-policy"), path).toBe(PAGE_CSP);
    }
    expect(new TextDecoder().decode((await sameAsNode("/docs/rules/HCP001")).body)).toContain("<h1>HCP001: a2a-p2p-without-sizes</h1>");
  });

  it("answers an unknown rule, a path outside the build and the runs pages as Node does", async () => {
    expect((await sameAsNode("/docs/rules/HCP999")).res.status).toBe(404);
    expect((await sameAsNode("/runs")).res.status).toBe(404);
    for (const path of ["/playground/build.json", "/playground/../build.json", "/web/../edge-web/web/style.css", "/edge-web/web/style.css", "/docs/rules/../../edge.js"]) {
      const res = await fetch(`${bot.url}${path}`);
      await res.body?.cancel();
      expect(res.status, path).toBe(404);
    }
    // The bot's own routes are untouched.
    expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
  });
});
