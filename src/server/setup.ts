// Setup mode (`hcp-bot serve` without GitHub App credentials): the bot's own pages in place
// of Probot's stock ones, and the two doors that write the App's credentials to .env: the
// manifest flow's callback (GitHub registered the App and hands back a code) and the import
// of an App registered by hand. Whoever passes either door chooses the App the bot runs as,
// so both need the one-time setup code the server printed on its console (only the person
// who started it has seen it): the import takes it with the form, and the manifest flow takes
// it before the visit to GitHub and carries a one-time `state` of its own through GitHub
// (GitHub hands `state` back to the callback unchanged). Once a door has written .env the
// code is spent; too many wrong codes retire it (a restart prints a new one).
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import * as z from "zod";
import type { Log } from "../shared/log.ts";
import { html, type Html } from "../web/server/html.ts";
import { BodyTooLarge, readBodyCapped } from "../node/body.ts";

export interface SetupOptions {
  /** GitHub's web host (https://github.com, or GHE_PROTOCOL://GHE_HOST): where the App is registered. */
  githubWebUrl: string;
  /** GitHub's REST base URL: where the manifest flow's code becomes credentials. */
  baseUrl: string;
  webhookPath: string;
  /** HCP_PUBLIC_URL: where GitHub reaches this server. */
  publicUrl?: string;
  /** WEBHOOK_PROXY_URL: a smee.io channel that forwards GitHub's webhooks here. */
  webhookProxyUrl?: string;
  /** Where app.yml (the App's manifest) is read from. */
  cwd: string;
  /** Writes the new credentials (src/node/env-file.ts: .env, 0600). */
  writeEnv(values: Record<string, string>): void;
  log: Log;
}

export interface SetupDoors {
  /** The one-time setup code, for the console (never logged). */
  code: string;
  /** Probot's Server handler: true when it answered the request. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

/** Wrong setup codes before the code is retired. */
export const MAX_WRONG_CODES = 10;
/** How long a `state` handed to GitHub stays good (registering an App takes a person a few minutes). */
const STATE_MS = 60 * 60_000;
const MAX_FORM_BYTES = 64 * 1024;
/** Letters and digits a person cannot misread (no 0/O, 1/I/L). */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** Twelve characters of CODE_ALPHABET (about 59 bits), as XXXX-XXXX-XXXX. */
export function newSetupCode(): string {
  const bytes = randomBytes(12);
  const chars = [...bytes].map((b) => CODE_ALPHABET[b % CODE_ALPHABET.length]!).join("");
  return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
}

/** What a person may type for a code: case, spaces and dashes do not matter. */
const normalizeCode = (text: string) => text.toUpperCase().replace(/[\s-]/g, "");

const ImportForm = z.object({
  setup_code: z.string().max(100).optional(),
  appId: z.union([z.string(), z.number()]).transform(String).pipe(z.string().regex(/^[1-9]\d{0,11}$/, "the App ID is a number")),
  webhook_secret: z.string().min(1).max(256).regex(/^[\x21-\x7e]+$/, "the webhook secret is printable characters without spaces"),
  pem: z
    .string()
    .max(16 * 1024)
    .transform((s) => s.replace(/\r\n/g, "\n").trim())
    .pipe(z.string().regex(/^-----BEGIN (RSA )?PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n-----END (RSA )?PRIVATE KEY-----$/, "the private key is the .pem file GitHub gave you")),
});

/** GitHub's answer to a manifest code's conversion (the fields used). */
const Conversion = z.object({
  id: z.number().int().positive(),
  html_url: z.url(),
  pem: z.string().includes("PRIVATE KEY-----"),
  webhook_secret: z.string().min(1).nullable(),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
});

/** app.yml as an object; an App without a manifest file gets GitHub's defaults. */
function readManifest(cwd: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(join(cwd, "app.yml"), "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return {};
    throw error;
  }
  const parsed: unknown = parseYaml(text);
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

/** Where GitHub should send webhooks, and how sure that is. */
export function webhookTarget(o: Pick<SetupOptions, "publicUrl" | "webhookProxyUrl" | "webhookPath">, localBase: string): { url: string; reachable: boolean; source: string } {
  if (o.publicUrl) return { url: `${o.publicUrl}${o.webhookPath}`, reachable: true, source: "HCP_PUBLIC_URL" };
  if (o.webhookProxyUrl) return { url: o.webhookProxyUrl, reachable: true, source: "WEBHOOK_PROXY_URL (a smee.io channel that forwards to this server)" };
  return { url: `${localBase}${o.webhookPath}`, reachable: false, source: "this page's address" };
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): true {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "x-frame-options": "DENY", "referrer-policy": "no-referrer", ...headers }).end(body);
  return true;
}

function shell(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title} · hcp-bot setup</title>
  <style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code,pre{background:#f4f4f4;padding:.1rem .3rem}pre{padding:.6rem;overflow:auto}label{display:block;margin-top:.8rem}input,textarea{width:100%;font:inherit}.warn{border-left:4px solid #d97706;padding-left:.8rem}</style>
</head>
<body>
<h1>${title}</h1>
${body}
</body>
</html>
`.text;
}

/** What the pages need of the options. */
type Page = Pick<SetupOptions, "publicUrl" | "webhookProxyUrl" | "webhookPath" | "githubWebUrl">;

/** This server as the browser reached it (the public URL when that is the host asked for). */
function localBase(o: Page, req: IncomingMessage): string {
  const host = req.headers.host ?? "127.0.0.1";
  if (o.publicUrl && new URL(o.publicUrl).host === host) return o.publicUrl;
  return `http://${host}`;
}


/** app.yml, with the URLs of this deployment in place of its placeholders. */
function manifestFor(o: Page, manifest: Record<string, unknown>, req: IncomingMessage): Record<string, unknown> {
  const base = localBase(o, req);
  const hook = webhookTarget(o, base);
  const { callback_urls: _placeholder, ...rest } = manifest;
  return {
    ...rest,
    url: typeof rest.url === "string" ? rest.url : base,
    hook_attributes: { ...(typeof rest.hook_attributes === "object" ? rest.hook_attributes : {}), url: hook.url },
    redirect_url: `${base}/probot/setup`,
    // The sign-in of the smoke-run history comes back to /auth/callback on the public URL.
    ...(o.publicUrl ? { callback_urls: [`${o.publicUrl}/auth/callback`] } : {}),
  };
}

function webhookSection(o: Page, req: IncomingMessage): Html {
  const hook = webhookTarget(o, localBase(o, req));
  return html`<h2>1. Where GitHub sends webhooks</h2>
<p>The App is registered with the webhook URL <code>${hook.url}</code> (from ${hook.source}).</p>
${hook.reachable ? "" : html`<p class="warn">GitHub cannot reach this address from the internet. Set <code>HCP_PUBLIC_URL</code> to the server's public https URL, or <code>WEBHOOK_PROXY_URL</code> to a smee.io channel, then restart <code>hcp-bot serve</code> before you register; or change the App's webhook URL on GitHub afterwards.</p>`}`;
}

function home(o: Page, manifest: Record<string, unknown>, req: IncomingMessage): string {
  const shown = manifestFor(o, manifest, req);
  return shell(
    "Register hcp-bot as a GitHub App",
    html`<p>hcp-bot has no GitHub App credentials yet. This page registers the App from <code>app.yml</code> (or takes the credentials of one you registered by hand) and writes them to <code>.env</code>, readable by you only. Then restart <code>hcp-bot serve</code> and install the App on your repositories.</p>
${webhookSection(o, req)}
<h2>2. The setup code</h2>
<p>Type the one-time setup code <code>hcp-bot serve</code> printed on its console when it started. Nobody without it can set the App's credentials.</p>
<form method="post" action="/probot/register">
<label for="setup_code">Setup code</label><input id="setup_code" name="setup_code" autocomplete="off" required>
<button type="submit">Register the App on GitHub</button>
</form>
<p>Registered an App by hand already? <a href="/probot/import">Use its credentials instead</a>.</p>
<p>Not ready to install yet? <a href="/playground">Try the rules in the playground</a>: paste a recipe, an override file or a launch line and see what the bot would say (it runs in your browser; nothing is uploaded).</p>
<h2>What the App asks for</h2>
<p>The events and permissions in <code>app.yml</code>; GitHub shows them again before you create the App.</p>
<pre>${JSON.stringify({ default_events: shown.default_events, default_permissions: shown.default_permissions }, null, 2)}</pre>`,
  );
}

function importPage(o: Page, req: IncomingMessage, problem?: string): string {
  return shell(
    "Use an App you registered by hand",
    html`${problem ? html`<p class="warn">${problem}</p>` : ""}
${webhookSection(o, req)}
<p>On the App's settings page (<a href="${o.githubWebUrl}/settings/apps" rel="noreferrer">${o.githubWebUrl}/settings/apps</a>) set the webhook URL to the one above and a webhook secret, and generate a private key.</p>
<h2>2. The credentials</h2>
<form method="post" action="/probot/import">
<label for="setup_code">Setup code (printed on the console by hcp-bot serve)</label><input id="setup_code" name="setup_code" autocomplete="off" required>
<label for="appId">App ID</label><input id="appId" name="appId" inputmode="numeric" required>
<label for="webhook_secret">Webhook secret</label><input id="webhook_secret" name="webhook_secret" type="password" required>
<label for="pem">Private key (the .pem file's text)</label><textarea id="pem" name="pem" rows="8" required></textarea>
<button type="submit">Write .env</button>
</form>`,
  );
}

function done(what: string): string {
  return shell("Done", html`<p>${what} The credentials are in <code>.env</code> (readable by you only). Restart <code>hcp-bot serve</code>: it then runs as the App.</p>`);
}

async function readForm(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBodyCapped(req, MAX_FORM_BYTES);
  if ((req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(text));
  const parsed: unknown = JSON.parse(text); // Probot's own import page sends JSON
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

/**
 * The one-time setup code: it answers until it is spent (the credentials are written) or
 * MAX_WRONG_CODES wrong ones retire it; the comparison takes the same time for every guess.
 */
function setupCodeGate(code: string): { refusal(given: string | undefined): string | undefined; spend(): void; readonly spent: boolean } {
  const expected = Buffer.from(normalizeCode(code));
  let wrong = 0;
  let spent = false;
  return {
    get spent() {
      return spent;
    },
    spend() {
      spent = true;
    },
    /** Why the code given is refused, or undefined when it is the code. */
    refusal(given) {
      if (spent) return "Setup is done: the App's credentials are in .env. Restart hcp-bot serve to run as that App.";
      if (wrong >= MAX_WRONG_CODES) return "Too many wrong setup codes: the code is retired. Restart hcp-bot serve for a new one.";
      const typed = Buffer.from(normalizeCode(given ?? ""));
      if (typed.length === expected.length && timingSafeEqual(typed, expected)) return undefined;
      wrong++;
      return "That is not the setup code. It is the XXXX-XXXX-XXXX code hcp-bot serve printed on its console when it started.";
    },
  };
}

/** `state` values handed to GitHub: each good once, for STATE_MS. */
function oneTimeStates(): { issue(): string; take(state: string | null): boolean } {
  const states = new Map<string, number>();
  return {
    issue() {
      const state = randomUUID();
      states.set(state, Date.now() + STATE_MS);
      return state;
    },
    /** A `state` this server handed to GitHub, good once and not expired. */
    take(state) {
      if (!state) return false;
      const until = states.get(state);
      states.delete(state);
      return until !== undefined && until > Date.now();
    },
  };
}

/** The page that posts the manifest to GitHub's App registration. */
function continuePage(action: string, manifest: Record<string, unknown>): string {
  return shell(
    "Continue on GitHub",
    html`<p>GitHub shows the App's name, events and permissions, creates it, and sends you back here; the credentials are then written to <code>.env</code>.</p>
<form method="post" action="${action}"><input type="hidden" name="manifest" value="${JSON.stringify(manifest)}"><button type="submit">Create the App on GitHub</button></form>`,
  );
}

export function createSetupDoors(o: SetupOptions): SetupDoors {
  const code = newSetupCode();
  const gate = setupCodeGate(code);
  const refusal = (given: string | undefined) => gate.refusal(given);
  const states = oneTimeStates();
  const manifest = readManifest(o.cwd);
  o.log.info({}, "hcp-bot is in setup mode: no GitHub App credentials yet, so no webhook is received");
  o.log.info({}, "open the setup page to register the App (or import one); it asks for the one-time setup code printed on the console, then writes .env; restart hcp-bot serve afterwards");

  async function importCredentials(req: IncomingMessage, res: ServerResponse): Promise<true> {
    let form: Record<string, unknown>;
    try {
      form = await readForm(req);
    } catch (error) {
      return send(res, error instanceof BodyTooLarge ? 413 : 400, importPage(o, req, "The form could not be read."));
    }
    const refused = refusal(typeof form.setup_code === "string" ? form.setup_code : undefined);
    if (refused) {
      o.log.warn({ door: "import" }, "setup: credentials refused (no or wrong setup code)");
      return send(res, 403, importPage(o, req, refused));
    }
    const parsed = ImportForm.safeParse(form);
    if (!parsed.success) return send(res, 400, importPage(o, req, `Not written: ${parsed.error.issues[0]!.message}.`));
    o.writeEnv({ APP_ID: parsed.data.appId, PRIVATE_KEY: `"${parsed.data.pem}"`, WEBHOOK_SECRET: parsed.data.webhook_secret });
    gate.spend();
    o.log.info({ appId: parsed.data.appId }, "setup: imported App credentials written to .env; restart to run as the App");
    return send(res, 200, done(`App ${parsed.data.appId} is set up.`));
  }

  async function register(req: IncomingMessage, res: ServerResponse): Promise<true> {
    let form: Record<string, unknown>;
    try {
      form = await readForm(req);
    } catch (error) {
      return send(res, error instanceof BodyTooLarge ? 413 : 400, shell("Not registered", html`<p>The form could not be read.</p>`));
    }
    const refused = refusal(typeof form.setup_code === "string" ? form.setup_code : undefined);
    if (refused) return send(res, 403, shell("Not registered", html`<p class="warn">${refused}</p><p><a href="/probot">Back</a></p>`));
    return send(res, 200, continuePage(`${o.githubWebUrl}/settings/apps/new?state=${states.issue()}`, manifestFor(o, manifest, req)));
  }

  async function callback(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<true> {
    if (gate.spent) return send(res, 410, shell("Setup is done", html`<p>${refusal(undefined)!}</p>`));
    if (!states.take(query.get("state"))) {
      o.log.warn({ door: "manifest" }, "setup: a manifest callback without a state this server handed out was refused");
      return send(res, 403, shell("Not registered", html`<p class="warn">This address is GitHub's way back after registering the App from this server's page. It needs the one-time state that page handed to GitHub: start again from <a href="/probot">the setup page</a> with the setup code.</p>`));
    }
    const manifestCode = query.get("code");
    if (!manifestCode || !/^[A-Za-z0-9_-]{1,200}$/.test(manifestCode)) return send(res, 400, shell("Not registered", html`<p>GitHub's code is missing.</p>`));
    const answer = await fetch(`${o.baseUrl}/app-manifests/${manifestCode}/conversions`, { method: "POST", headers: { accept: "application/vnd.github+json", "user-agent": "hcp-bot-setup" } });
    const parsed = Conversion.safeParse(answer.ok ? await answer.json().catch(() => undefined) : undefined);
    if (!parsed.success) {
      o.log.warn({ status: answer.status }, "setup: GitHub did not convert the manifest code");
      return send(res, 502, shell("Not registered", html`<p>GitHub did not hand over the App's credentials (HTTP ${answer.status}). Start again from <a href="/probot">the setup page</a>.</p>`));
    }
    const app = parsed.data;
    o.writeEnv({
      APP_ID: String(app.id),
      PRIVATE_KEY: `"${app.pem}"`,
      ...(app.webhook_secret ? { WEBHOOK_SECRET: app.webhook_secret } : {}),
      GITHUB_CLIENT_ID: app.client_id,
      GITHUB_CLIENT_SECRET: app.client_secret,
    });
    gate.spend();
    o.log.info({ appId: app.id }, "setup: the new App's credentials were written to .env; restart to run as the App");
    return send(res, 302, done(`App ${app.id} is registered.`), { location: `${app.html_url}/installations/new` });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = new URL(req.url ?? "/", "http://setup.invalid");
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case "GET /":
        return send(res, 302, "", { location: "/probot" });
      case "GET /probot":
        return send(res, 200, home(o, manifest, req));
      case "POST /probot/register":
        return register(req, res);
      case "GET /probot/setup":
        return callback(req, res, url.searchParams);
      case "GET /probot/import":
        return send(res, 200, importPage(o, req));
      case "POST /probot/import":
        return importCredentials(req, res);
      default:
        return false;
    }
  }

  return { code, handle };
}
