// The smoke-run history (/runs, /runs/ID) and its GitHub sign-in (/auth/...). Off unless
// HCP_RUNS_ACCESS=github. A signed-in user sees the requests of the repositories their own
// GitHub token can read (asked of GitHub, cached briefly); a request in any other
// repository is "not found", exactly like one that does not exist.
import type { RunsAccess } from "../../github/settings.ts";
import { SMOKE_STATUSES, type SmokeListQuery, type SmokeStatus, type Store } from "../../store/types.ts";
import { authorizeUrl, createRepoAccess, exchangeCode, SessionExpired, userLogin, type GitHubEndpoints, type RepoAccess } from "./github-user.ts";
import { htmlResponse } from "./headers.ts";
import { html, page, type Html } from "./html.ts";
import { RUNS_TABLE_HEAD, runDetail, runRow } from "./runs-view.ts";
import {
  clearCookie,
  cookieName,
  OAuthStateSchema,
  randomToken,
  readCookie,
  sameSecret,
  Sealer,
  SESSION_TTL_MS,
  SessionSchema,
  STATE_TTL_MS,
  setCookie,
  type Session,
} from "./session.ts";

export interface RunsOptions {
  access: RunsAccess;
  /** Undefined in setup mode (no GitHub App yet, so no runs). */
  store: Store | undefined;
  github: GitHubEndpoints;
  repoAccess?: RepoAccess;
  pageSize?: number;
  now?: () => number;
}

const REPO = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;
const LOGIN = /^[A-Za-z0-9-]{1,39}(\[bot\])?$/;
const CURSOR = /^(\d{1,15})\.([A-Za-z0-9_-]{1,100})$/;
// The query is printable ASCII only: a CR, LF, U+2028 or any other character a Location
// header cannot carry would pass a looser check and make the callback's redirect throw (a 500).
const RETURN_TO = /^\/runs(\/[A-Za-z0-9_-]+)?(\?[\x21-\x22\x24-\x7e]*)?$/;
/** What a return target may never hold, whatever else it is: control, non-ASCII or space characters. */
const UNSENDABLE = /[^\x21-\x7e]/;

function redirect(location: string, cookies: string[] = [], status = 302): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status, headers });
}

function notice(title: string, body: Html, status = 200, user?: Session): Response {
  return htmlResponse(status, page({ title, current: "runs", ...(user ? { user: { login: user.login, csrf: user.csrf } } : {}) }, html`<h1>${title}</h1>${body}`));
}

export function createRunsRoutes(o: RunsOptions): (request: Request, url: URL) => Promise<Response | undefined> {
  const now = o.now ?? Date.now;
  const pageSize = o.pageSize ?? 25;
  const access = o.access;
  if (access.access === "off") {
    return async (_request, url) =>
      url.pathname === "/runs" || url.pathname.startsWith("/runs/") || url.pathname.startsWith("/auth/")
        ? notice("Smoke-run history is off", html`<p>This server does not show its smoke runs. An administrator turns the history on with <code>HCP_RUNS_ACCESS=github</code> (sign-in with GitHub; see the README).</p><p><a href="/playground">The playground</a> works without signing in.</p>`, 404)
        : undefined;
  }
  const sealer = new Sealer(access.sessionSecret, now);
  const repoAccess = o.repoAccess ?? createRepoAccess(o.github);
  const client = { clientId: access.clientId, clientSecret: access.clientSecret };

  const originOf = (url: URL) => access.publicUrl ?? url.origin;
  const secureFor = (url: URL) => originOf(url).startsWith("https:");
  const names = (url: URL) => ({ session: cookieName("hcp_session", secureFor(url)), state: cookieName("hcp_oauth", secureFor(url)) });

  async function sessionOf(request: Request, url: URL): Promise<Session | undefined> {
    return sealer.open("session", readCookie(request, names(url).session), SessionSchema);
  }

  function signInPage(url: URL): Response {
    const back = RETURN_TO.test(url.pathname + url.search) ? url.pathname + url.search : "/runs";
    return notice(
      "Sign in to see the smoke runs",
      html`<p>The smoke-run history shows every <code>/hcp smoke</code> request of the repositories you can read on GitHub.</p><p><a class="signin" href="/auth/login?return=${encodeURIComponent(back)}">Sign in with GitHub</a></p>`,
      401,
    );
  }

  async function login(url: URL): Promise<Response> {
    const wanted = url.searchParams.get("return") ?? "/runs";
    if (UNSENDABLE.test(wanted)) return notice("Sign-in refused", html`<p>The page to come back to must be a /runs address of printable characters.</p><p><a class="signin" href="/auth/login">Sign in</a></p>`, 400);
    const returnTo = RETURN_TO.test(wanted) ? wanted : "/runs";
    const state = randomToken();
    const cookie = await sealer.seal("oauth-state", { state, returnTo, exp: now() + STATE_TTL_MS });
    const target = authorizeUrl(o.github, client, `${originOf(url)}/auth/callback`, state);
    return redirect(target, [setCookie(names(url).state, cookie, { secure: secureFor(url), maxAgeSeconds: STATE_TTL_MS / 1000 })]);
  }

  async function callback(request: Request, url: URL): Promise<Response> {
    const n = names(url);
    const saved = await sealer.open("oauth-state", readCookie(request, n.state), OAuthStateSchema);
    const state = url.searchParams.get("state") ?? "";
    const code = url.searchParams.get("code") ?? "";
    const again = html`<p><a class="signin" href="/auth/login">Sign in again</a></p>`;
    // The state ties the answer to the browser that started the sign-in (login CSRF).
    if (!saved || !sameSecret(saved.state, state) || !/^[\w-]{1,200}$/.test(code)) return notice("Sign-in failed", html`<p>The sign-in could not be matched to this browser (it expired or was not started here).</p>${again}`, 400);
    const token = await exchangeCode(o.github, client, code, `${originOf(url)}/auth/callback`);
    if (!token.ok) return notice("Sign-in failed", html`<p>GitHub did not hand out a token: ${token.reason}.</p>${again}`, 502);
    const user = await userLogin(o.github, token.token);
    if (!user) return notice("Sign-in failed", html`<p>GitHub did not say who signed in.</p>${again}`, 502);
    const session = await sealer.seal("session", { login: user, token: token.token, csrf: randomToken(), exp: now() + SESSION_TTL_MS });
    const secure = secureFor(url);
    return redirect(RETURN_TO.test(saved.returnTo) ? saved.returnTo : "/runs", [setCookie(n.session, session, { secure, maxAgeSeconds: SESSION_TTL_MS / 1000 }), clearCookie(n.state, { secure })]);
  }

  async function logout(request: Request, url: URL): Promise<Response> {
    if (request.method !== "POST") return notice("Sign out", html`<p>Use the Sign out button.</p>`, 405);
    const origin = request.headers.get("origin");
    const session = await sessionOf(request, url);
    const form = new URLSearchParams(await request.text());
    // Both a same-origin form and the session's own token: a page elsewhere cannot sign anyone out.
    if ((origin !== null && origin !== originOf(url)) || !session || !sameSecret(form.get("csrf") ?? "", session.csrf)) {
      return notice("Sign-out refused", html`<p>The request did not come from this site's own form.</p>`, 403);
    }
    return redirect("/runs", [clearCookie(names(url).session, { secure: secureFor(url) })], 303);
  }

  /** The repositories with requests that this user can read; a dead token signs the user out. */
  async function visibleRepos(session: Session): Promise<{ repos: string[]; unknown: string[] }> {
    return repoAccess.readable(session.token, await o.store!.listSmokeRepos());
  }

  function expired(url: URL): Response {
    const r = signInPage(url);
    r.headers.append("set-cookie", clearCookie(names(url).session, { secure: secureFor(url) }));
    return r;
  }

  async function list(url: URL, session: Session): Promise<Response> {
    const { repos, unknown } = await visibleRepos(session);
    const p = url.searchParams;
    const problems: string[] = [];
    const pick = (name: string, ok: (v: string) => boolean) => {
      const v = p.get(name) ?? "";
      if (v === "") return undefined;
      if (ok(v)) return v;
      problems.push(`${name} "${v}" is not valid and was ignored`);
      return undefined;
    };
    const repo = pick("repo", (v) => REPO.test(v));
    const status = pick("state", (v) => (SMOKE_STATUSES as readonly string[]).includes(v)) as SmokeStatus | undefined;
    const requester = pick("requester", (v) => LOGIN.test(v));
    const cursor = CURSOR.exec(p.get("before") ?? "");
    const query: SmokeListQuery = {
      repos: repo ? repos.filter((r) => r === repo) : repos,
      limit: pageSize + 1,
      ...(status ? { status } : {}),
      ...(requester ? { githubLogin: requester } : {}),
      ...(cursor ? { before: { createdAt: new Date(Number(cursor[1])), id: cursor[2]! } } : {}),
    };
    const rows = await o.store!.listSmokeRequests(query);
    const shown = rows.slice(0, pageSize);
    const next = rows.length > pageSize ? shown.at(-1) : undefined;
    const keep = (extra: Record<string, string>) => {
      const q = new URLSearchParams();
      if (repo) q.set("repo", repo);
      if (status) q.set("state", status);
      if (requester) q.set("requester", requester);
      for (const [k, v] of Object.entries(extra)) q.set(k, v);
      const s = q.toString();
      return `/runs${s ? `?${s}` : ""}`;
    };
    const body = html`<h1>Smoke runs</h1>
<p>Every <code>/hcp smoke</code> request in the ${repos.length} repositor${repos.length === 1 ? "y" : "ies"} you can read, newest first.</p>
${unknown.length ? html`<p class="notice">GitHub did not answer for ${unknown.length} repositor${unknown.length === 1 ? "y" : "ies"}; their runs are hidden until it does.</p>` : ""}
${problems.map((m) => html`<p class="notice">${m}</p>`)}
<form class="filters" method="get" action="/runs">
<label>Repository <select name="repo"><option value="">all</option>${repos.map((r) => html`<option${r === repo ? html` selected` : ""}>${r}</option>`)}</select></label>
<label>State <select name="state"><option value="">any</option>${SMOKE_STATUSES.map((s) => html`<option${s === status ? html` selected` : ""}>${s}</option>`)}</select></label>
<label>Requester <input name="requester" value="${requester ?? ""}" placeholder="login" size="14"></label>
<button type="submit">Filter</button> <a href="/runs">Clear</a>
</form>
${shown.length ? html`<div class="table-wrap"><table class="runs"><thead>${RUNS_TABLE_HEAD}</thead><tbody>${shown.map((r) => runRow(r, o.github.webUrl))}</tbody></table></div>` : html`<p class="empty" id="no-runs">No smoke runs match.</p>`}
<nav class="pager">${cursor ? html`<a href="${keep({})}">Newest</a>` : ""}${next ? html`<a rel="next" href="${keep({ before: `${next.createdAt.getTime()}.${next.id}` })}">Older runs</a>` : ""}</nav>`;
    return htmlResponse(200, page({ title: "Smoke runs", current: "runs", user: { login: session.login, csrf: session.csrf } }, body));
  }

  async function detail(id: string, session: Session): Promise<Response> {
    const request = /^[A-Za-z0-9_-]{1,100}$/.test(id) ? await o.store!.getSmokeRequest(id) : undefined;
    const readable = request ? (await repoAccess.readable(session.token, [request.repo])).repos.includes(request.repo) : false;
    // Missing and not readable look the same: the page does not confirm a private repository's runs exist.
    if (!request || !readable) return notice("Smoke run not found", html`<p>There is no smoke run ${id} that you can see. <a href="/runs">All runs</a></p>`, 404, session);
    const audit = await o.store!.auditLog({ requestId: request.id, limit: 200 });
    return htmlResponse(200, page({ title: `Smoke run ${request.id}`, current: "runs", user: { login: session.login, csrf: session.csrf } }, runDetail(request, audit, o.github.webUrl)));
  }

  return async (request, url) => {
    const path = url.pathname;
    if (path === "/auth/login") return login(url);
    if (path === "/auth/callback") return callback(request, url);
    if (path === "/auth/logout") return logout(request, url);
    if (path !== "/runs" && !path.startsWith("/runs/")) return undefined;
    if (!o.store) return notice("No smoke runs yet", html`<p>The GitHub App is not set up on this server yet, so there is no history. Open <a href="/">the setup page</a>.</p>`, 503);
    const session = await sessionOf(request, url);
    if (!session) return signInPage(url);
    try {
      return path === "/runs" || path === "/runs/" ? await list(url, session) : await detail(decodeURIComponent(path.slice("/runs/".length)), session);
    } catch (error) {
      if (error instanceof SessionExpired) return expired(url);
      throw error;
    }
  };
}
