// The built files and the web handler's edges: only the build's own files are served, each
// with its type and the CSP; unchanged files revalidate by ETag; forms other than sign-in
// and sign-out are refused; a failed build answers 503 and is retried.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensureWebBuild, WEB_DIST } from "../../src/web/build.ts";
import { createWebHandler } from "../../src/web/server/index.ts";
import { createStaticFiles } from "../../src/web/server/static.ts";
import { PAGE_CSP } from "../../src/web/server/headers.ts";

const handler = createWebHandler({ files: createStaticFiles(), runs: { access: { access: "off" }, store: undefined, github: { webUrl: "http://x", apiUrl: "http://x/api/v3" } } });
const get = (path: string, init: RequestInit = {}) => handler(new Request(`http://bot.test${path}`, init));

describe("the web pages' static files", () => {
  it("are built once and then found current", async () => {
    await ensureWebBuild();
    const again = await ensureWebBuild();
    expect(again).toMatchObject({ dir: WEB_DIST, built: false });
  });

  it("a rebuild replaces the files in place: a reader meanwhile always finds them, and files the build no longer has go", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-web-rebuild-"));
    await ensureWebBuild(dir);
    writeFileSync(join(dir, "build.json"), JSON.stringify({ hash: "stale" })); // an input changed
    writeFileSync(join(dir, "web", "old.css"), "gone after the rebuild");
    const watched = ["playground/index.html", "playground/page.js", "web/style.css", "build.json"].map((f) => join(dir, f));
    let missing = 0;
    let looks = 0;
    let done = false;
    const rebuild = ensureWebBuild(dir).finally(() => (done = true));
    while (!done) {
      for (const f of watched) if (!existsSync(f)) missing++;
      looks++;
      await new Promise((r) => setImmediate(r));
    }
    expect(await rebuild).toMatchObject({ dir, built: true });
    expect(looks).toBeGreaterThan(10);
    expect(missing).toBe(0);
    expect(existsSync(join(dir, "web", "old.css"))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, "build.json"), "utf8")).hash).not.toBe("stale");
    rmSync(dir, { recursive: true, force: true });
  });

  it("serve only the build's files, typed, under the playground CSP, revalidated by ETag", async () => {
    const page = (await get("/playground"))!;
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'; script-src 'self' 'wasm-unsafe-eval'/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const etag = page.headers.get("etag")!;
    expect((await get("/playground", { headers: { "if-none-match": etag } }))!.status).toBe(304);
    expect((await get("/playground/worker.js"))!.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    for (const path of ["/playground/../build.json", "/playground/build.json", "/web/../playground/index.html", "/playground/%2e%2e/build.json"]) {
      const res = await get(path);
      expect(res === undefined || res.status === 404, path).toBe(true);
    }
    expect((await get("/healthz"))).toBeUndefined(); // not a web path: the next handler's
  });

  it("refuse other methods on pages", async () => {
    const res = (await get("/playground", { method: "POST", body: "x" }))!;
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
  });

  it("answer 503 with the reason logged when the build fails, and try again on the next request", async () => {
    const errors: string[] = [];
    // A file where the build's parent folder should be: the build cannot be written.
    const blocker = join(tmpdir(), `hcp-web-file-${process.pid}`);
    writeFileSync(blocker, "not a folder");
    const files = createStaticFiles({ dir: join(blocker, "web"), log: { error: (o) => errors.push(String((o as { err: Error }).err.message)) } });
    const res = (await files.serve("/playground"))!;
    expect(res.status).toBe(503);
    expect(errors).toHaveLength(1);
    expect((await files.serve("/playground"))!.status).toBe(503);
    expect(errors).toHaveLength(2);
  });
});

describe("the landing page at /", () => {
  const github = { webUrl: "http://x", apiUrl: "http://x/api/v3" };
  const at = (landing: boolean, access: Parameters<typeof createWebHandler>[0]["runs"]["access"]) =>
    createWebHandler({ files: createStaticFiles(), runs: { access, store: undefined, github }, landing })(new Request("http://bot.test/"));

  it("links the playground, and the run history only when it is on, under the strict page CSP", async () => {
    const off = (await at(true, { access: "off" }))!;
    expect(off.status).toBe(200);
    expect(off.headers.get("content-security-policy")).toBe(PAGE_CSP);
    const text = await off.text();
    expect(text).toContain('<a href="/playground">Playground</a>');
    expect(text).toContain("npx hcp-bot lint FILE");
    expect(text).not.toContain('<a href="/runs">Smoke runs</a>:');
    const on = (await at(true, { access: "github", clientId: "id", clientSecret: "secret", sessionSecret: "s".repeat(32) }))!;
    expect(await on.text()).toContain('<a href="/runs">Smoke runs</a>:');
  });

  it("is not served in setup mode, where / is Probot's", async () => {
    expect(await at(false, { access: "off" })).toBeUndefined();
  });
});
