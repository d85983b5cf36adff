// The signed-in user's side of GitHub: the OAuth web flow of the GitHub App (authorize,
// code for token, who the token belongs to) and whether that user can read a repository.
// Endpoints follow the configured host (github.com, or GHE_PROTOCOL://GHE_HOST), so an
// Enterprise Server, a proxy or the fake GitHub of the tests can play them.
import * as z from "zod";

export interface GitHubEndpoints {
  /** https://github.com or the Enterprise host: /login/oauth/... lives here. */
  webUrl: string;
  /** https://api.github.com or https://HOST/api/v3. */
  apiUrl: string;
  fetch?: typeof fetch;
}

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

export function authorizeUrl(e: GitHubEndpoints, client: OAuthClient, redirectUri: string, state: string): string {
  const url = new URL(`${e.webUrl}/login/oauth/authorize`);
  url.searchParams.set("client_id", client.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("state", state);
  url.searchParams.set("allow_signup", "false");
  return url.href;
}

const TokenAnswer = z.union([
  z.object({ access_token: z.string().min(1), token_type: z.string().optional() }),
  z.object({ error: z.string(), error_description: z.string().optional() }),
]);

/** The user's token for an authorization code, or why there is none (in words). */
export async function exchangeCode(e: GitHubEndpoints, client: OAuthClient, code: string, redirectUri: string): Promise<{ ok: true; token: string } | { ok: false; reason: string }> {
  const doFetch = e.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(`${e.webUrl}/login/oauth/access_token`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.clientId, client_secret: client.clientSecret, code, redirect_uri: redirectUri }),
    });
  } catch (error) {
    return { ok: false, reason: `GitHub could not be reached (${error instanceof Error ? error.message : String(error)})` };
  }
  const parsed = TokenAnswer.safeParse(await res.json().catch(() => undefined));
  if (!res.ok || !parsed.success) return { ok: false, reason: `GitHub answered the code exchange with HTTP ${res.status}` };
  if ("error" in parsed.data) return { ok: false, reason: parsed.data.error_description ?? parsed.data.error };
  return { ok: true, token: parsed.data.access_token };
}

function apiHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", "user-agent": "hcp-bot-web" };
}

export async function userLogin(e: GitHubEndpoints, token: string): Promise<string | undefined> {
  const res = await (e.fetch ?? fetch)(`${e.apiUrl}/user`, { headers: apiHeaders(token) }).catch(() => undefined);
  if (!res?.ok) return undefined;
  const body = z.object({ login: z.string().min(1) }).safeParse(await res.json().catch(() => undefined));
  return body.success ? body.data.login : undefined;
}

/** The token no longer works (revoked, expired): the user must sign in again. */
export class SessionExpired extends Error {}

export type Readable = "yes" | "no" | "unknown";

export interface RepoAccess {
  /** Which of `repos` the token's user can read; GitHub not answering counts as no. */
  readable(token: string, repos: readonly string[]): Promise<{ repos: string[]; unknown: string[] }>;
}

/** Read access per (token, repository) through GET /repos/{owner}/{repo}, cached for `ttlMs`. */
export function createRepoAccess(e: GitHubEndpoints, options: { ttlMs?: number; now?: () => number; maxEntries?: number } = {}): RepoAccess {
  const ttl = options.ttlMs ?? 60_000;
  const now = options.now ?? Date.now;
  const max = options.maxEntries ?? 10_000;
  const cache = new Map<string, { at: number; answer: Promise<Readable> }>();

  async function tokenKey(token: string): Promise<string> {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
    return [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function check(token: string, repo: string): Promise<Readable> {
    const [owner, name] = repo.split("/") as [string, string];
    const res = await (e.fetch ?? fetch)(`${e.apiUrl}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`, { headers: apiHeaders(token) }).catch(() => undefined);
    if (!res) return "unknown";
    await res.body?.cancel();
    if (res.status === 401) throw new SessionExpired("GitHub no longer accepts this sign-in");
    if (res.ok) return "yes";
    return res.status === 404 || res.status === 403 ? "no" : "unknown";
  }

  return {
    async readable(token, repos) {
      const key = await tokenKey(token);
      if (cache.size > max) cache.clear();
      const answers = await Promise.all(
        repos.map(async (repo) => {
          const k = `${key} ${repo}`;
          let hit = cache.get(k);
          if (!hit || now() - hit.at >= ttl) {
            hit = { at: now(), answer: check(token, repo) };
            cache.set(k, hit);
            // A failed check is not remembered.
            hit.answer.then((a) => a === "unknown" && cache.delete(k), () => cache.delete(k));
          }
          return [repo, await hit.answer] as const;
        }),
      );
      return { repos: answers.filter(([, a]) => a === "yes").map(([r]) => r), unknown: answers.filter(([, a]) => a === "unknown").map(([r]) => r) };
    },
  };
}
