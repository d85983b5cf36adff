// Start-up settings, repository config and the retry policy, each against real inputs
// (a real key file, real YAML, a real HTTP server that fails on purpose).
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRepoConfig } from "../../src/core/config/repo-config.ts";
import { DEFAULT_RETRY_POLICY, EDGE_RETRY_POLICY, nextWaitMs, rateLimitOf, retryPlugin, withWaits } from "../../src/github/octokit.ts";
import { readServerSettings, SettingsError } from "../../src/server/env.ts";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

describe("server settings from the environment", () => {
  it("is in setup mode with no credentials, with Probot's defaults", () => {
    const s = readServerSettings({});
    // The setup flow writes the App's credentials: this machine only, unless HOST says otherwise.
    expect(s).toMatchObject({ mode: "setup", port: 3000, host: "127.0.0.1", baseUrl: "https://api.github.com", webhookPath: "/api/github/webhooks" });
    expect(readServerSettings({ HOST: "0.0.0.0" }).host).toBe("0.0.0.0");
    expect(readServerSettings({ APP_ID: "1", PRIVATE_KEY: privateKey, WEBHOOK_SECRET: "s" }).host).toBe("0.0.0.0");
  });

  it("reads a full app configuration, GHE host included, and a key from a file", () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-env-"));
    writeFileSync(join(dir, "key.pem"), privateKey);
    const s = readServerSettings({ APP_ID: "42", PRIVATE_KEY_PATH: join(dir, "key.pem"), WEBHOOK_SECRET: "s", PORT: "0", GHE_HOST: "127.0.0.1:8080", GHE_PROTOCOL: "http", LOG_LEVEL: "warn" });
    expect(s).toMatchObject({ mode: "app", appId: 42, port: 0, baseUrl: "http://127.0.0.1:8080/api/v3", logLevel: "warn" });
    expect(s.privateKey).toBe(privateKey);
  });

  it("keeps the smoke-run history off unless asked, and then needs the App's OAuth client", () => {
    expect(readServerSettings({}).web).toEqual({ githubWebUrl: "https://github.com", runs: { access: "off" } });
    expect(() => readServerSettings({ HCP_RUNS_ACCESS: "github", GITHUB_CLIENT_ID: "Iv1.x" })).toThrow(/^HCP_RUNS_ACCESS=github needs GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET/);
    expect(() => readServerSettings({ HCP_RUNS_ACCESS: "public" })).toThrow(/^HCP_RUNS_ACCESS must be off \(the default\) or github/);
    expect(() => readServerSettings({ HCP_RUNS_ACCESS: "github", GITHUB_CLIENT_ID: "a", GITHUB_CLIENT_SECRET: "b", HCP_SESSION_SECRET: "short" })).toThrow(/^HCP_SESSION_SECRET must be at least 32 characters$/);
    const s = readServerSettings({ HCP_RUNS_ACCESS: "github", GITHUB_CLIENT_ID: "Iv1.x", GITHUB_CLIENT_SECRET: "sec", HCP_PUBLIC_URL: "https://bot.example.com/", GHE_HOST: "ghe.example.com" });
    expect(s.web).toEqual({
      githubWebUrl: "https://ghe.example.com",
      runs: { access: "github", clientId: "Iv1.x", clientSecret: "sec", sessionSecret: "client-secret:sec", publicUrl: "https://bot.example.com" },
    });
  });

  it("keeps each host's GitHub retry horizon unless HCP_GITHUB_WAIT_HORIZON_SECONDS or HCP_GITHUB_SECONDARY_WAIT_SECONDS change it", () => {
    const unset = readServerSettings({}).githubWaits;
    expect(withWaits(DEFAULT_RETRY_POLICY, unset)).toEqual(DEFAULT_RETRY_POLICY);
    expect(withWaits(EDGE_RETRY_POLICY, unset)).toMatchObject({ horizonMs: 600_000, clientHorizonMs: 600_000, secondaryBaseMs: 60_000 });
    const set = readServerSettings({ HCP_GITHUB_WAIT_HORIZON_SECONDS: "3", HCP_GITHUB_SECONDARY_WAIT_SECONDS: "1" }).githubWaits;
    expect(withWaits(EDGE_RETRY_POLICY, set)).toEqual({ ...EDGE_RETRY_POLICY, horizonMs: 3000, clientHorizonMs: 3000, secondaryBaseMs: 1000 });
    // Node bounds each request, not a client's total (a job there has no runtime budget to keep).
    expect(withWaits(DEFAULT_RETRY_POLICY, set).clientHorizonMs).toBeUndefined();
  });

  it("accepts a PEM with escaped newlines, as secret stores hand it over", () => {
    const s = readServerSettings({ APP_ID: "1", PRIVATE_KEY: privateKey.replace(/\n/g, "\\n"), WEBHOOK_SECRET: "s" });
    expect(s.privateKey).toBe(privateKey);
  });

  it.each([
    [{ PORT: "http" }, /^PORT must be a number between 0 and 65535$/],
    [{ PORT: "70000" }, /^PORT must be a number/],
    [{ APP_ID: "abc" }, /^APP_ID must be the numeric App ID/],
    [{ APP_ID: "1", WEBHOOK_SECRET: "s" }, /^PRIVATE_KEY or PRIVATE_KEY_PATH is missing/],
    [{ APP_ID: "1", PRIVATE_KEY: "not a key", WEBHOOK_SECRET: "s" }, /^PRIVATE_KEY must be a PEM private key/],
    [{ APP_ID: "1", PRIVATE_KEY: privateKey }, /^WEBHOOK_SECRET is missing/],
    [{ WEBHOOK_SECRET: "s" }, /^APP_ID is missing/],
    [{ PRIVATE_KEY_PATH: "/no/such/key.pem", APP_ID: "1", WEBHOOK_SECRET: "s" }, /^PRIVATE_KEY_PATH \/no\/such\/key.pem cannot be read: ENOENT/],
    [{ GHE_HOST: "https://ghe.example.com/" }, /^GHE_HOST must be a host name/],
    [{ GHE_PROTOCOL: "ftp" }, /^GHE_PROTOCOL /],
    [{ LOG_LEVEL: "loud" }, /^LOG_LEVEL /],
    [{ NODE_ENV: "production" }, /required when NODE_ENV=production/],
    [{ HCP_GITHUB_WAIT_HORIZON_SECONDS: "0" }, /^HCP_GITHUB_WAIT_HORIZON_SECONDS must be a whole number of seconds/],
    [{ HCP_GITHUB_SECONDARY_WAIT_SECONDS: "1.5" }, /^HCP_GITHUB_SECONDARY_WAIT_SECONDS must be a whole number of seconds/],
  ])("stops with one clear line on %j", (env, message) => {
    expect(() => readServerSettings(env)).toThrow(SettingsError);
    expect(() => readServerSettings(env)).toThrow(message);
  });
});

describe(".github/hcp-bot.yml", () => {
  it("defaults when absent", () => {
    const r = parseRepoConfig(undefined);
    expect(r.ok && r.source).toBe("default");
    expect(r.ok && r.config.review).toEqual({ mode: "comment", drafts: "check-only", max_inline_comments: 30 });
  });

  it("reads paths, rules and review settings", () => {
    const r = parseRepoConfig("paths: ['recipes/**/*.py']\nrules:\n  ignore: [HCP018]\n  severity: {HCP005: error}\nreview:\n  mode: request-changes\n");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.paths).toEqual(["recipes/**/*.py"]);
    expect(r.config.rules).toEqual({ ignore: ["HCP018"], severity: { HCP005: "error" } });
    expect(r.config.review.mode).toBe("request-changes");
  });

  it.each([
    ["rules: [", /not valid YAML at line 1/],
    ["rules:\n  ignore: [HCP1]\n", /rules.ignore.0: .*rule id/],
    ["review:\n  mode: shout\n", /review.mode/],
    ["colour: blue\n", /Unrecognized key.*colour/],
    ["review:\n  max_inline_comments: 500\n", /review.max_inline_comments/],
  ])("quotes the exact problem in %j", (text, problem) => {
    const r = parseRepoConfig(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toMatch(problem);
  });
});

describe("retry policy against a real server", () => {
  let server: Server;
  let url = "";
  const script: Array<{ status: number; headers?: Record<string, string>; body?: object }> = [];
  let hits = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      const next = script.shift() ?? { status: 200, body: { ok: true } };
      res.writeHead(next.status, { "content-type": "application/json", ...next.headers }).end(JSON.stringify(next.body ?? { message: "x" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const a = server.address();
    url = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = () => {
    const Retrying = Octokit.plugin(retryPlugin({ ...DEFAULT_RETRY_POLICY, serverErrorRetries: 2, rateLimitRetries: 1, baseDelayMs: 5, horizonMs: 2000 }) as never);
    return new Retrying({ baseUrl: url, auth: "t" });
  };

  it("bounds an installation's client in all when the policy says so (the edge's job), but never the App's own long-lived client", async () => {
    const waits: number[] = [];
    const clock = { now: () => Date.now(), sleep: async (ms: number) => void waits.push(ms) };
    const policy = { ...DEFAULT_RETRY_POLICY, horizonMs: 3000, clientHorizonMs: 3000 };
    const Bounded = Octokit.plugin(retryPlugin(policy, clock) as never);
    const limited = { status: 429, headers: { "retry-after": "2" }, body: { message: "" } };
    // Options shaped as @octokit/app and Probot build an installation's client (auth.installationId).
    const passThrough = () => Object.assign(async () => ({ type: "unauthenticated" }), { hook: (request: (r: unknown, p: unknown) => unknown, route: unknown, params: unknown) => request(route, params) });
    const installation = new Bounded({ baseUrl: url, authStrategy: passThrough as never, auth: { installationId: 7 } });
    script.push(limited);
    expect((await installation.request("GET /ok")).status).toBe(200);
    script.push(limited);
    // 2 s waited already, 2 more would pass the client's 3 s: one try, and the job retries later.
    await expect(installation.request("GET /ok")).rejects.toMatchObject({ name: "GitHubUnavailable", reason: "retry-after", waitedMs: 2000 });
    expect(waits).toEqual([2000]);
    const app = new Bounded({ baseUrl: url, auth: "jwt" });
    for (let i = 0; i < 2; i++) {
      script.push(limited);
      expect((await app.request("GET /ok")).status).toBe(200);
    }
    expect(waits).toEqual([2000, 2000, 2000]);
  });

  it("retries a 500 and succeeds", async () => {
    hits = 0;
    script.push({ status: 500 });
    const res = await client().request("GET /ok");
    expect(res.status).toBe(200);
    expect(hits).toBe(2);
  });

  it("never repeats a creating POST after a 5xx (GitHub may have done it); repeats a GET, a PATCH and a GraphQL query", async () => {
    for (const route of ["POST /repos/o/r/issues/1/comments", "POST /repos/o/r/actions/workflows/w/dispatches", "POST /repos/o/r/check-runs"]) {
      hits = 0;
      script.push({ status: 502 });
      await expect(client().request(route, {})).rejects.toMatchObject({ status: 502 });
      expect(hits, route).toBe(1);
    }
    for (const route of ["GET /ok", "PATCH /repos/o/r/check-runs/1", "POST /graphql"]) {
      hits = 0;
      script.push({ status: 502 });
      expect((await client().request(route, {})).status, route).toBe(200);
      expect(hits, route).toBe(2);
    }
  });

  it("honours retry-after on a secondary rate limit", async () => {
    hits = 0;
    script.push({ status: 403, headers: { "retry-after": "1" }, body: { message: "You have exceeded a secondary rate limit" } });
    const t0 = Date.now();
    await client().request("GET /ok");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(hits).toBe(2);
  });

  it("gives up after its budget and does not retry a 422", async () => {
    hits = 0;
    script.push({ status: 502 }, { status: 502 }, { status: 502 });
    await expect(client().request("GET /ok")).rejects.toMatchObject({ status: 502, name: "GitHubUnavailable", reason: "server-error", tries: 3 });
    expect(hits).toBe(3);
    hits = 0;
    script.push({ status: 422, body: { message: "Validation Failed" } });
    await expect(client().request("GET /ok")).rejects.toMatchObject({ status: 422 });
    expect(hits).toBe(1);
  });

  it("reads the wait from retry-after, the reset time, or the secondary-limit message", () => {
    expect(rateLimitOf({ status: 429, response: { headers: { "retry-after": "3" } } }, 0)).toEqual({ reason: "retry-after", askedMs: 3000 });
    expect(rateLimitOf({ status: 403, response: { headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "110" } } }, 100_000)).toEqual({ reason: "primary-limit", askedMs: 11_000 });
    expect(rateLimitOf({ status: 403, message: "You have exceeded a secondary rate limit" }, 0)).toEqual({ reason: "secondary-limit", askedMs: undefined });
    expect(rateLimitOf({ status: 429 }, 0)).toEqual({ reason: "secondary-limit", askedMs: undefined });
    expect(rateLimitOf({ status: 403, message: "Resource not accessible by integration" }, 0)).toBeUndefined();
    expect(rateLimitOf({ status: 500 }, 0)).toBeUndefined();
  });

  it("backs off a secondary limit from a minute, doubling; a server error from a second, capped at a minute", () => {
    const secondary = { reason: "secondary-limit" as const, askedMs: undefined };
    expect([0, 1, 2, 3, 4].map((limit) => nextWaitMs(DEFAULT_RETRY_POLICY, secondary, { limit, server: 0 }))).toEqual([60_000, 120_000, 240_000, 480_000, 960_000]);
    expect(nextWaitMs(DEFAULT_RETRY_POLICY, secondary, { limit: DEFAULT_RETRY_POLICY.rateLimitRetries, server: 0 })).toBeUndefined();
    expect(nextWaitMs(DEFAULT_RETRY_POLICY, { reason: "primary-limit", askedMs: 50 * 60_000 }, { limit: 0, server: 0 })).toBe(50 * 60_000);
    expect([0, 1, 5, 6, 11].map((server) => nextWaitMs(DEFAULT_RETRY_POLICY, undefined, { limit: 0, server }))).toEqual([1000, 2000, 32_000, 60_000, 60_000]);
    expect(nextWaitMs(DEFAULT_RETRY_POLICY, undefined, { limit: 0, server: 12 })).toBeUndefined();
  });
});
