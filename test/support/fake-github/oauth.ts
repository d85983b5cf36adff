// The OAuth web flow of github.com (/login/oauth/...): a sign-in form, a one-time code,
// and the code traded for a user token.
import type { IncomingMessage, ServerResponse } from "node:http";
import { isObject } from "./json.ts";
import { randomToken } from "./state.ts";

type Record_ = (status: number, operationId: string | undefined) => void;

export class OAuthFlow {
  private readonly apps = new Map<string, { clientSecret: string; callbackUrl?: string }>();
  private readonly codes = new Map<string, { clientId: string; login: string; redirectUri: string; expiresAt: number }>();

  addOAuthApp(o: { clientId: string; clientSecret: string; callbackUrl?: string }): void {
    this.apps.set(o.clientId, { clientSecret: o.clientSecret, ...(o.callbackUrl ? { callbackUrl: o.callbackUrl } : {}) });
  }

  constructor(private readonly addUserToken: (login: string) => string) {}

  /**
   * GET /login/oauth/authorize shows a sign-in form (the "browser" types a login, as a user
   * signs in on github.com); its POST redirects to the App's callback with a one-time code.
   * POST /login/oauth/access_token trades the code (with the client secret) for a user token.
   */
  handle(
    method: string, path: string, url: URL, raw: Buffer, req: IncomingMessage, res: ServerResponse,
    record: Record_,
  ): void {
    const form = method === "POST" ? this.formOrJson(raw, req) : url.searchParams;
    const clientId = form.get("client_id") ?? "";
    const app = this.apps.get(clientId);
    const page = (status: number, body: string) => {
      record(status, `oauth${path.slice("/login/oauth".length).replaceAll("/", "-")}`);
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(body);
    };
    const esc = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    if (path === "/login/oauth/authorize") {
      const redirectUri = form.get("redirect_uri") ?? app?.callbackUrl ?? "";
      if (!app) return page(404, "<h1>Not Found</h1><p>No OAuth app with this client_id.</p>");
      if (app.callbackUrl && !redirectUri.startsWith(app.callbackUrl)) return page(400, "<h1>The redirect_uri is not associated with this application.</h1>");
      if (method === "GET") {
        const hidden = ["client_id", "redirect_uri", "state"].map((n) => `<input type="hidden" name="${n}" value="${esc(form.get(n) ?? "")}">`).join("");
        return page(200, `<!doctype html><title>Sign in to GitHub</title><form method="post" action="/login/oauth/authorize">${hidden}<label>Username <input name="login" id="login_field"></label><button type="submit" name="authorize" value="1">Authorize</button></form>`);
      }
      const login = form.get("login") ?? "";
      if (!/^[A-Za-z0-9-]{1,39}$/.test(login)) return page(422, "<h1>Incorrect username or password.</h1>");
      const code = randomToken("code_").slice(0, 25);
      this.codes.set(code, { clientId, login, redirectUri, expiresAt: Date.now() + 600_000 });
      const target = new URL(redirectUri);
      target.searchParams.set("code", code);
      if (form.get("state")) target.searchParams.set("state", form.get("state")!);
      record(302, "oauth-authorize");
      res.writeHead(302, { location: target.href }).end();
      return;
    }
    if (path === "/login/oauth/access_token" && method === "POST") {
      const code = this.codes.get(form.get("code") ?? "");
      this.codes.delete(form.get("code") ?? "");
      const json = (body: object) => {
        record(200, "oauth-access-token");
        res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
      };
      // GitHub answers 200 with an error object here, not an HTTP error.
      if (!app || app.clientSecret !== form.get("client_secret")) return json({ error: "incorrect_client_credentials", error_description: "The client_id and/or client_secret passed are incorrect." });
      if (!code || code.clientId !== clientId || code.expiresAt < Date.now() || (form.get("redirect_uri") && form.get("redirect_uri") !== code.redirectUri)) {
        return json({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
      }
      return json({ access_token: this.addUserToken(code.login), token_type: "bearer", scope: "" });
    }
    return page(404, "<h1>Not Found</h1>");
  }

  private formOrJson(raw: Buffer, req: IncomingMessage): URLSearchParams {
    const text = raw.toString("utf8");
    if (String(req.headers["content-type"] ?? "").includes("application/json")) {
      try {
        const body: unknown = JSON.parse(text);
        return new URLSearchParams(isObject(body) ? Object.entries(body).map(([k, v]) => [k, String(v)]) : []);
      } catch {
        return new URLSearchParams();
      }
    }
    return new URLSearchParams(text);
  }
}
