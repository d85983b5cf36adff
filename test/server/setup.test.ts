// Setup mode's own pages and doors (src/server/setup.ts), through the real binary in a child
// process on loopback: the page says what to do with this deployment's webhook URL (never
// app.yml's example.invalid placeholder), what a request brings is escaped, and the manifest
// flow's callback writes .env only for a registration started on the page with the setup code
// printed on the console. GitHub's manifest conversion is a small HTTP server on loopback.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appKeys } from "../support/bot-harness.ts";
import { setupConsole } from "../support/setup-mode.ts";

const root = join(import.meta.dirname, "..", "..");
const bin = join(root, "bin", "hcp-bot.js");
const PUBLIC = "https://hcp.example.com";

interface Serve {
  child: ChildProcess;
  cwd: string;
  port: number;
  code: string;
  url: string;
}

/** `hcp-bot serve` without credentials, in a folder of its own holding app.yml and package.json. */
async function serve(extra: Record<string, string>): Promise<Serve> {
  const cwd = mkdtempSync(join(tmpdir(), "hcp-setup-pages-"));
  for (const file of ["app.yml", "package.json"]) copyFileSync(join(root, file), join(cwd, file));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "warn", PORT: "0", HCP_DATA_DIR: cwd, ...extra };
  const child = spawn(process.execPath, [bin, "serve"], { cwd, env });
  const { port, code } = await setupConsole(child);
  return { child, cwd, port, code, url: `http://127.0.0.1:${port}` };
}

/** A GET or form POST with a Host header of the test's choosing (fetch sets its own). */
function raw(port: number, path: string, options: { host?: string; method?: string; form?: Record<string, string> } = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: options.method ?? (body ? "POST" : "GET"), headers: { host: options.host ?? `127.0.0.1:${port}`, ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** An attribute's value as the browser reads it (the pages escape with numeric references). */
const unescape = (text: string) => text.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));

function hiddenManifest(page: string): Record<string, unknown> {
  const m = /<input type="hidden" name="manifest" value="([^"]*)">/.exec(page);
  expect(m, "the manifest form").not.toBeNull();
  return JSON.parse(unescape(m![1]!)) as Record<string, unknown>;
}

describe("setup mode with HCP_PUBLIC_URL, registering from the manifest", () => {
  let github: Server;
  let githubPort = 0;
  const conversions: string[] = [];
  let bot: Serve;

  beforeAll(async () => {
    github = createServer((req, res) => {
      const m = /^\/api\/v3\/app-manifests\/([^/]+)\/conversions$/.exec(req.url ?? "");
      if (req.method !== "POST" || !m) return void res.writeHead(404).end();
      conversions.push(m[1]!);
      res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: 4242, slug: "hcp-bot-acme", html_url: `http://127.0.0.1:${githubPort}/apps/hcp-bot-acme`, pem: appKeys.privateKey, webhook_secret: "from-github", client_id: "Iv1.abc", client_secret: "client-secret" }));
    });
    await new Promise<void>((resolve) => github.listen(0, "127.0.0.1", resolve));
    githubPort = (github.address() as { port: number }).port;
    bot = await serve({ HCP_PUBLIC_URL: PUBLIC, GHE_HOST: `127.0.0.1:${githubPort}`, GHE_PROTOCOL: "http" });
  });

  afterAll(() => {
    bot?.child.kill("SIGTERM");
    github?.close();
  });

  it("says what to do, with the webhook URL of HCP_PUBLIC_URL on the page and on the import page", async () => {
    const home = await raw(bot.port, "/");
    expect(home.status).toBe(302);
    expect(home.headers.location).toBe("/probot");
    const page = (await raw(bot.port, "/probot")).body;
    expect(page).toContain(`${PUBLIC}/api/github/webhooks`);
    expect(page).toContain("setup code");
    expect(page).not.toContain("example.invalid");
    expect(page).not.toMatch(/probot\/static|Welcome to Probot/);
    const importPage = (await raw(bot.port, "/probot/import")).body;
    expect(importPage).toContain(`<code>${PUBLIC}/api/github/webhooks</code>`);
  });

  it("refuses the manifest callback without the state its page handed to GitHub, and the page without the setup code", async () => {
    expect((await raw(bot.port, "/probot/setup?code=forged")).status).toBe(403);
    expect((await raw(bot.port, "/probot/setup?code=forged&state=00000000-0000-4000-8000-000000000000")).status).toBe(403);
    expect((await raw(bot.port, "/probot/register", { form: { setup_code: "" } })).status).toBe(403);
    expect((await raw(bot.port, "/probot/register", { form: { setup_code: "WXYZ-WXYZ-WXYZ" } })).status).toBe(403);
    expect(conversions).toEqual([]);
    expect(existsSync(join(bot.cwd, ".env"))).toBe(false);
  });

  it("with the setup code, hands GitHub this deployment's manifest and a one-time state; the callback with it writes .env 0600", async () => {
    const page = await raw(bot.port, "/probot/register", { form: { setup_code: bot.code.toLowerCase() } });
    expect(page.status).toBe(200);
    const action = /<form method="post" action="([^"]*)">/.exec(page.body);
    expect(action).not.toBeNull();
    const target = new URL(unescape(action![1]!));
    expect(`${target.origin}${target.pathname}`).toBe(`http://127.0.0.1:${githubPort}/settings/apps/new`);
    const state = target.searchParams.get("state")!;
    const manifest = hiddenManifest(page.body);
    expect(manifest).toMatchObject({ name: "hcp-bot", hook_attributes: { url: `${PUBLIC}/api/github/webhooks` }, callback_urls: [`${PUBLIC}/auth/callback`], redirect_url: `http://127.0.0.1:${bot.port}/probot/setup` });
    expect(JSON.stringify(manifest)).not.toContain("example.invalid");
    expect(manifest.default_permissions).toMatchObject({ checks: "write" });

    // GitHub sends the browser back with its code and the state unchanged.
    const back = await raw(bot.port, `/probot/setup?code=manifest-code-1&state=${state}`);
    expect(back.status).toBe(302);
    expect(back.headers.location).toBe(`http://127.0.0.1:${githubPort}/apps/hcp-bot-acme/installations/new`);
    expect(conversions).toEqual(["manifest-code-1"]);
    const env = join(bot.cwd, ".env");
    expect(statSync(env).mode & 0o777).toBe(0o600);
    const text = readFileSync(env, "utf8");
    expect(text).toMatch(/^APP_ID=4242$/m);
    expect(text).toMatch(/^WEBHOOK_SECRET=from-github$/m);
    expect(text).toMatch(/^GITHUB_CLIENT_ID=Iv1\.abc$/m);
    // Once: neither the state nor the setup code works again.
    expect((await raw(bot.port, `/probot/setup?code=manifest-code-2&state=${state}`)).status).toBe(410);
    expect((await raw(bot.port, "/probot/register", { form: { setup_code: bot.code } })).status).toBe(403);
    expect(conversions).toEqual(["manifest-code-1"]);
  });
});

describe("setup mode behind a smee channel", () => {
  let bot: Serve;
  beforeAll(async () => {
    bot = await serve({ WEBHOOK_PROXY_URL: "https://smee.io/hcp-test-channel" });
  });
  afterAll(() => bot?.child.kill("SIGTERM"));

  it("registers the smee channel as the webhook URL", async () => {
    expect((await raw(bot.port, "/probot")).body).toContain("<code>https://smee.io/hcp-test-channel</code>");
    const manifest = hiddenManifest((await raw(bot.port, "/probot/register", { form: { setup_code: bot.code } })).body);
    expect(manifest.hook_attributes).toEqual({ url: "https://smee.io/hcp-test-channel" });
    expect(manifest).not.toHaveProperty("callback_urls"); // app.yml's placeholder is not registered
  });

  it("escapes what a request brings (its Host header) on every page", async () => {
    const host = `evil"><script>alert(1)</script>`;
    const pages = [await raw(bot.port, "/probot", { host }), await raw(bot.port, "/probot/import", { host }), await raw(bot.port, "/probot/register", { host, form: { setup_code: bot.code } })];
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.body).not.toContain("<script>");
    }
    // The register page carries it, escaped, as the manifest's way back; the browser reads it unchanged.
    expect(hiddenManifest(pages[2]!.body).redirect_url).toBe(`http://${host}/probot/setup`);
  });
});
