// The runs pages' access rules, request by request (no browser): off by default, sign-in
// state bound to the browser, sealed session cookies that cannot be forged or replayed as
// something else, sign-out only from the site's own form, a revoked token signs out, the
// repository check is cached briefly, and pages of 2 walk the whole history.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryStore, type NewSmokeRequest } from "../../src/store/index.ts";
import { createRepoAccess } from "../../src/web/server/github-user.ts";
import { createRunsRoutes, type RunsOptions } from "../../src/web/server/runs.ts";
import { Sealer } from "../../src/web/server/session.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";

const CLIENT = { clientId: "Iv1.unit", clientSecret: "unit-secret" };
const SESSION_SECRET = "s".repeat(40);
let gh: FakeGitHub;

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 5 });
  gh.addInstallation({ id: 3, account: "acme" });
  gh.addRepo({ owner: "acme", repo: "open", installationId: 3 });
  gh.addRepo({ owner: "acme", repo: "closed", installationId: 3, private: true });
  gh.setPermission("member", "read", "acme/closed");
  gh.addOAuthApp({ ...CLIENT, callbackUrl: "http://bot.test/auth/callback" });
});

afterAll(async () => {
  expect(gh.violations).toEqual([]);
  await gh.close();
});

function request(n: number, o: Partial<NewSmokeRequest> = {}): NewSmokeRequest {
  return { repo: "acme/open", pr: n, sha: "a".repeat(40), source: "github-comment", githubLogin: "member", recipe: "r_config", cp: 4, sizes: [2, 2], gpus: 4, iters: 2, overrides: [], expectHcp: true, ...o };
}

function routes(o: Partial<RunsOptions> = {}) {
  const store = new MemoryStore();
  const handle = createRunsRoutes({
    access: { access: "github", ...CLIENT, sessionSecret: SESSION_SECRET, publicUrl: "http://bot.test" },
    store,
    github: { webUrl: gh.url, apiUrl: gh.apiUrl },
    pageSize: 2,
    ...o,
  });
  const get = (path: string, headers: Record<string, string> = {}) => handle(new Request(`http://bot.test${path}`, { headers }), new URL(`http://bot.test${path}`));
  return { store, handle, get };
}

async function sessionCookie(login: string, token: string, csrf = "c".repeat(20)): Promise<string> {
  return `hcp_session=${await new Sealer(SESSION_SECRET).seal("session", { login, token, csrf, exp: Date.now() + 60_000 })}`;
}

describe("the runs pages", () => {
  it("are off unless HCP_RUNS_ACCESS=github, and say so", async () => {
    const handle = createRunsRoutes({ access: { access: "off" }, store: new MemoryStore(), github: { webUrl: gh.url, apiUrl: gh.apiUrl } });
    for (const path of ["/runs", "/runs/x", "/auth/login"]) {
      const res = (await handle(new Request(`http://h${path}`), new URL(`http://h${path}`)))!;
      expect(res.status).toBe(404);
      expect(await res.text()).toContain("HCP_RUNS_ACCESS=github");
    }
  });

  it("start sign-in at the configured GitHub with a state cookie, and refuse a callback whose state is not this browser's", async () => {
    const { get } = routes();
    const login = (await get("/auth/login?return=/runs/abc"))!;
    expect(login.status).toBe(302);
    const target = new URL(login.headers.get("location")!);
    expect(`${target.origin}${target.pathname}`).toBe(`${gh.url}/login/oauth/authorize`);
    expect(target.searchParams.get("client_id")).toBe(CLIENT.clientId);
    expect(target.searchParams.get("redirect_uri")).toBe("http://bot.test/auth/callback");
    const cookie = login.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/^hcp_oauth=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600$/);
    const state = target.searchParams.get("state")!;
    const stateCookie = cookie.split(";")[0]!;
    // The fake GitHub's authorize form, posted as the browser would.
    const authorized = await fetch(`${gh.url}/login/oauth/authorize`, { method: "POST", redirect: "manual", body: new URLSearchParams({ client_id: CLIENT.clientId, redirect_uri: "http://bot.test/auth/callback", state, login: "member" }) });
    const back = new URL(authorized.headers.get("location")!);
    expect(back.searchParams.get("state")).toBe(state);
    const code = back.searchParams.get("code")!;
    expect((await get(`/auth/callback?code=${code}&state=${state}`))!.status).toBe(400); // no state cookie: another browser
    expect((await get(`/auth/callback?code=${code}&state=${"x".repeat(32)}`, { cookie: stateCookie }))!.status).toBe(400);
    const ok = (await get(`/auth/callback?code=${code}&state=${state}`, { cookie: stateCookie }))!;
    expect(ok.status).toBe(302);
    expect(ok.headers.get("location")).toBe("/runs/abc");
    const session = ok.headers.getSetCookie().find((c) => c.startsWith("hcp_session="))!;
    expect(session).toMatch(/; HttpOnly; SameSite=Lax; Max-Age=28800$/);
    const token = [...gh.state.tokens.values()].find((t) => t.user === "member")!.token;
    expect(session).not.toContain(token);
    // A code is good once.
    expect((await get(`/auth/callback?code=${code}&state=${state}`, { cookie: stateCookie }))!.status).toBe(502);
    // Only /runs paths are return targets.
    const evil = (await get("/auth/login?return=//evil.example/x"))!;
    const evilState = new URL(evil.headers.get("location")!).searchParams.get("state")!;
    const opened = await new Sealer(SESSION_SECRET).open("oauth-state", evil.headers.getSetCookie()[0]!.split(";")[0]!.split("=")[1], (await import("../../src/web/server/session.ts")).OAuthStateSchema);
    expect(opened).toMatchObject({ state: evilState, returnTo: "/runs" });
  });

  it("refuse a return target with CR/LF, U+2028 or other unsendable characters up front (400), never a 500 at the callback", async () => {
    const { get } = routes();
    for (const bad of ["/runs?x=1\r\nSet-Cookie: a=b", "/runs?x=\n", "/runs?x=\u2028", "/runs?x=\u0000", "/runs?x=a b"]) {
      const res = (await get(`/auth/login?return=${encodeURIComponent(bad)}`))!;
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(await res.text()).toContain("printable characters");
    }
    // A good one still signs in and comes back there, through the fake GitHub.
    const login = (await get(`/auth/login?return=${encodeURIComponent("/runs?repo=acme/open&page=2")}`))!;
    const state = new URL(login.headers.get("location")!).searchParams.get("state")!;
    const authorized = await fetch(`${gh.url}/login/oauth/authorize`, { method: "POST", redirect: "manual", body: new URLSearchParams({ client_id: CLIENT.clientId, redirect_uri: "http://bot.test/auth/callback", state, login: "member" }) });
    const code = new URL(authorized.headers.get("location")!).searchParams.get("code")!;
    const back = (await get(`/auth/callback?code=${code}&state=${state}`, { cookie: login.headers.getSetCookie()[0]!.split(";")[0]! }))!;
    expect(back.status).toBe(302);
    expect(back.headers.get("location")).toBe("/runs?repo=acme/open&page=2");
  });

  it("refuse forged, tampered and state-as-session cookies", async () => {
    const { get } = routes();
    const token = gh.addUserToken("member");
    const good = await sessionCookie("member", token);
    expect((await get("/runs", { cookie: good }))!.status).toBe(200);
    const value = good.split("=")[1]!;
    const tampered = value.slice(0, -2) + (value.endsWith("A") ? "BB" : "AA");
    expect((await get("/runs", { cookie: `hcp_session=${tampered}` }))!.status).toBe(401);
    const otherKey = `hcp_session=${await new Sealer("t".repeat(40)).seal("session", { login: "member", token, csrf: "c".repeat(20), exp: Date.now() + 60_000 })}`;
    expect((await get("/runs", { cookie: otherKey }))!.status).toBe(401);
    const asState = `hcp_session=${await new Sealer(SESSION_SECRET).seal("oauth-state", { login: "member", token, csrf: "c".repeat(20), exp: Date.now() + 60_000 })}`;
    expect((await get("/runs", { cookie: asState }))!.status).toBe(401);
    const expired = `hcp_session=${await new Sealer(SESSION_SECRET).seal("session", { login: "member", token, csrf: "c".repeat(20), exp: Date.now() - 1 })}`;
    expect((await get("/runs", { cookie: expired }))!.status).toBe(401);
  });

  it("sign out only through the site's own form with the session's CSRF token", async () => {
    const { handle } = routes();
    const cookie = await sessionCookie("member", gh.addUserToken("member"), "k".repeat(20));
    const post = (body: string, headers: Record<string, string>) =>
      handle(new Request("http://bot.test/auth/logout", { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers } }), new URL("http://bot.test/auth/logout"));
    expect((await post(`csrf=${"k".repeat(20)}`, { origin: "http://evil.example" }))!.status).toBe(403);
    expect((await post(`csrf=${"x".repeat(20)}`, { origin: "http://bot.test" }))!.status).toBe(403);
    expect((await post("", { origin: "http://bot.test" }))!.status).toBe(403);
    const ok = (await post(`csrf=${"k".repeat(20)}`, { origin: "http://bot.test" }))!;
    expect(ok.status).toBe(303);
    expect(ok.headers.getSetCookie()[0]).toMatch(/^hcp_session=; .*Max-Age=0$/);
  });

  it("show a user only the repositories their token can read, and sign out a revoked token", async () => {
    const { store, get } = routes();
    const open = await store.createSmokeRequest(request(1));
    const closed = await store.createSmokeRequest(request(2, { repo: "acme/closed" }));
    const stranger = await sessionCookie("stranger", gh.addUserToken("stranger"));
    const page = await (await get("/runs", { cookie: stranger }))!.text();
    expect(page).toContain(open.id);
    expect(page).not.toContain(closed.id);
    expect(page).not.toContain("acme/closed");
    expect((await get(`/runs/${closed.id}`, { cookie: stranger }))!.status).toBe(404);
    const member = await sessionCookie("member", gh.addUserToken("member"));
    expect(await (await get("/runs", { cookie: member }))!.text()).toContain(closed.id);
    expect((await get(`/runs/${closed.id}`, { cookie: member }))!.status).toBe(200);
    // A token GitHub no longer accepts: the cookie is cleared and sign-in is asked for.
    const dead = await sessionCookie("member", "ghu_revoked");
    const res = (await get("/runs", { cookie: dead }))!;
    expect(res.status).toBe(401);
    expect(res.headers.getSetCookie()[0]).toMatch(/^hcp_session=; .*Max-Age=0$/);
  });

  it("walk the history a page at a time, with filters kept, newest first", async () => {
    const { store, get } = routes();
    const made = [];
    for (let i = 1; i <= 5; i++) made.push((await store.createSmokeRequest(request(i, { githubLogin: i % 2 ? "member" : "other" }))).id);
    const cookie = await sessionCookie("member", gh.addUserToken("member"));
    const seen: string[] = [];
    let path = "/runs";
    for (let pages = 0; pages < 5 && path; pages++) {
      const text = await (await get(path, { cookie }))!.text();
      seen.push(...[...text.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1]!));
      path = /<a rel="next" href="([^"]+)"/.exec(text)?.[1]?.replaceAll("&amp;", "&") ?? "";
    }
    expect(new Set(seen)).toEqual(new Set(made));
    expect(seen).toHaveLength(5);
    const filtered = await (await get("/runs?requester=member", { cookie }))!.text();
    expect(/<a rel="next" href="([^"]+)"/.exec(filtered)?.[1]).toMatch(/requester=member/);
    expect((await (await get("/runs?state=bogus", { cookie }))!.text())).toContain("state &#34;bogus&#34; is not valid and was ignored");
  });
});

describe("createRepoAccess", () => {
  it("asks GitHub once per token and repository within the cache time, and again after it", async () => {
    let t = 0;
    const access = createRepoAccess({ webUrl: gh.url, apiUrl: gh.apiUrl }, { ttlMs: 1000, now: () => t });
    const token = gh.addUserToken("member");
    const calls = () => gh.calls.filter((c) => c.operationId === "repos/get").length;
    const before = calls();
    expect(await access.readable(token, ["acme/open", "acme/closed", "acme/missing"])).toEqual({ repos: ["acme/open", "acme/closed"], unknown: [] });
    await access.readable(token, ["acme/open", "acme/closed"]);
    expect(calls() - before).toBe(3);
    t = 1500;
    await access.readable(token, ["acme/open"]);
    expect(calls() - before).toBe(4);
  });
});
