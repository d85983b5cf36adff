// The fake GitHub API server: loopback HTTP, routed and refereed by GitHub's
// OpenAPI description, answering from FakeState (seeded through FakeSeeds). See README.md.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes, randomUUID } from "node:crypto";
import { authenticate } from "./auth.ts";
import { executeGraphQL } from "./graphql.ts";
import { isObject, type JsonObject } from "./json.ts";
import { OAuthFlow } from "./oauth.ts";
import { Renderer } from "./render.ts";
import { FakeSeeds } from "./seed.ts";
import { loadGitHubSpec, type GitHubSpec, type Operation } from "./spec.ts";
import { HttpError, type AuthInfo, type FakeCore, type Handler, type HandlerResult } from "./handlers/common.ts";
import { repoHandlers } from "./handlers/repos.ts";
import { pullHandlers } from "./handlers/pulls.ts";
import { checkHandlers } from "./handlers/checks.ts";
import { issueHandlers } from "./handlers/issues.ts";
import { actionHandlers } from "./handlers/actions.ts";
import type { FakeGitHub, FakeGitHubOptions, Injection, RecordedCall, Violation } from "./types.ts";

export type {
  AddPullFile, AddPullRequestOptions, AddRepoOptions, FakeGitHub, FakeGitHubOptions, Injection, RecordedCall, Violation, ViolationKind,
} from "./types.ts";

const HANDLERS: Readonly<Record<string, Handler>> = {
  ...repoHandlers, ...pullHandlers, ...checkHandlers, ...issueHandlers, ...actionHandlers,
};

const DOCS = "https://docs.github.com/rest";

interface ActiveInjection {
  readonly rule: Injection;
  remaining: number;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}


interface RateBucket {
  used: number;
  readonly reset: number;
}

class FakeGitHubServer extends FakeSeeds implements FakeGitHub, FakeCore {
  readonly calls: RecordedCall[] = [];
  readonly violations: Violation[] = [];
  readonly appId: number;
  readonly appSlug: string;
  readonly graphqlObjectLimit: number;
  url = "";
  startupMs = 0;
  private readonly injections: ActiveInjection[] = [];
  private readonly downloads = new Map<string, { content: Buffer; contentType: string }>();
  private readonly rate = new Map<string, RateBucket>();
  private readonly server: Server;
  private readonly oauth = new OAuthFlow((login) => this.addUserToken(login));

  constructor(private readonly spec: GitHubSpec, private readonly options: FakeGitHubOptions) {
    const appSlug = options.appSlug ?? "hcp-bot";
    super({ login: `${appSlug}[bot]`, id: 41898282, type: "Bot" });
    this.appSlug = appSlug;
    this.appId = options.appId ?? 1;
    this.graphqlObjectLimit = options.graphqlObjectLimit ?? 500;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: `fake-github crashed: ${e instanceof Error ? e.stack : String(e)}` }));
      });
    });
  }

  get apiUrl(): string {
    return `${this.url}/api/v3`;
  }

  get webBase(): string {
    return this.url;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.options.port ?? 0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.closeAllConnections();
      this.server.close((e) => (e ? reject(e) : resolve()));
    });
  }

  // ---- failure injection -------------------------------------------------

  inject(rule: Injection): void {
    this.injections.push({ rule, remaining: rule.times ?? 1 });
  }

  pendingInjections(): readonly Injection[] {
    return this.injections.filter((i) => i.remaining > 0).map((i) => i.rule);
  }

  /** The first matching rule with uses left, consumed in the order they were added. */
  private takeInjection(method: string, path: string): Injection | undefined {
    const hit = this.injections.find((i) => i.remaining > 0 && (i.rule.method ?? method).toUpperCase() === method && i.rule.path.test(path));
    if (!hit) return undefined;
    hit.remaining--;
    return hit.rule;
  }

  registerDownload(content: Buffer, contentType: string): string {
    const id = randomBytes(12).toString("hex");
    this.downloads.set(id, { content, contentType });
    return `${this.url}/_fake/download/${id}`;
  }

  addOAuthApp(o: { clientId: string; clientSecret: string; callbackUrl?: string }): void {
    this.oauth.addOAuthApp(o);
  }

  private authSettings() {
    return { state: this.state, appId: this.appId, ...(this.options.appPublicKey ? { appPublicKey: this.options.appPublicKey } : {}), ...(this.options.strictAuth !== undefined ? { strictAuth: this.options.strictAuth } : {}) };
  }

  // ---- request handling --------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const requestUrl = new URL(req.url ?? "/", this.url);
    const method = (req.method ?? "GET").toUpperCase();
    const prefixed = requestUrl.pathname === "/api/v3" || requestUrl.pathname.startsWith("/api/v3/");
    const path = prefixed ? requestUrl.pathname.slice("/api/v3".length) || "/" : requestUrl.pathname;
    const api = prefixed ? this.apiUrl : this.url;
    const query = Object.fromEntries(requestUrl.searchParams.entries());
    const parsedBody = this.parseJson(raw);
    const record = (status: number, operationId: string | undefined, injected = false): void => {
      this.calls.push({ method, path, query, body: parsedBody.value, status, timestamp: Date.now(), injected, ...(operationId ? { operationId } : {}) });
    };

    if (path.startsWith("/_fake/")) return this.serveFakeAsset(path, res, record);
    if (!prefixed && path.startsWith("/login/oauth/")) return this.oauth.handle(method, path, requestUrl, raw, req, res, record);

    const injected = this.takeInjection(method, path);
    if (injected && !injected.afterProcessing) {
      record(injected.status, undefined, true);
      if (injected.delayMs) await new Promise((resolve) => setTimeout(resolve, injected.delayMs).unref());
      if (injected.until) await injected.until.catch(() => undefined);
      if (res.destroyed || req.socket.destroyed) return; // the client went away meanwhile
      return this.send(res, injected.status, injected.body ?? { message: `Injected ${injected.status}`, documentation_url: DOCS }, injected.headers ?? {}, "core");
    }

    if (method === "POST" && (path === "/graphql" || requestUrl.pathname === "/api/graphql")) {
      return this.handleGraphQL(req, res, parsedBody, record);
    }

    const match = this.spec.match(method, path);
    if (!match) {
      this.violations.push({ kind: "unknown-route", method, path, message: `no operation in the OpenAPI description for ${method} ${path}` });
      record(404, undefined);
      return this.send(res, 404, { message: "Not Found", documentation_url: DOCS }, {}, "core");
    }
    const { op, params } = match;
    const docUrl = `${DOCS}#${op.operationId}`;

    const auth = authenticate(req, op, this.authSettings());
    if (auth instanceof HttpError) {
      record(auth.status, op.operationId);
      return this.send(res, auth.status, auth.body, auth.headers, "core");
    }
    const limited = this.consumeRate(req, "core");
    if (limited) {
      record(403, op.operationId);
      return this.send(res, 403, { message: "API rate limit exceeded for installation.", documentation_url: DOCS }, limited, "core");
    }
    if (!parsedBody.ok) {
      record(400, op.operationId);
      return this.send(res, 400, { message: "Problems parsing JSON", documentation_url: docUrl }, {}, "core");
    }
    const bodyProblem = this.checkRequestBody(op, method, path, parsedBody.value, docUrl);
    if (bodyProblem) {
      record(422, op.operationId);
      return this.send(res, 422, bodyProblem, {}, "core");
    }
    const handler = HANDLERS[op.operationId];
    if (!handler) {
      this.violations.push({ kind: "not-implemented", method, path, operationId: op.operationId, message: `the fake does not implement ${op.operationId}` });
      record(404, op.operationId);
      return this.send(res, 404, { message: "Not Found", documentation_url: docUrl }, {}, "core");
    }
    const render = new Renderer(this.spec, this.state, api, this.url, { id: this.appId, slug: this.appSlug, owner: this.bot });
    let result: HandlerResult;
    try {
      result = handler({
        core: this, params, query: requestUrl.searchParams, body: isObject(parsedBody.value) ? parsedBody.value : {},
        headers: req.headers, render, auth, requestUrl: new URL(req.url ?? "/", this.url), docUrl,
      });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      result = { status: e.status, body: e.body, headers: e.headers };
    }
    if (injected) {
      // The work is done; the answer is lost on the way (a proxy's 502 after GitHub processed it).
      record(injected.status, op.operationId, true);
      // Done, and the answer hangs (a process can die before it arrives).
      if (injected.delayMs) await new Promise((resolve) => setTimeout(resolve, injected.delayMs).unref());
      if (res.destroyed || req.socket.destroyed) return;
      return this.send(res, injected.status, injected.body ?? { message: `Injected ${injected.status}`, documentation_url: DOCS }, injected.headers ?? {}, "core");
    }
    this.checkResponse(op, method, path, result);
    record(result.status, op.operationId);
    if (result.raw) {
      res.writeHead(result.status, { ...this.standardHeaders(req, "core"), "content-type": result.raw.contentType });
      res.end(result.raw.data);
      return;
    }
    return this.send(res, result.status, result.body, result.headers ?? {}, "core", req);
  }

  private parseJson(raw: Buffer): { ok: boolean; value: unknown } {
    if (raw.length === 0) return { ok: true, value: undefined };
    try {
      return { ok: true, value: JSON.parse(raw.toString("utf8")) as unknown };
    } catch {
      return { ok: false, value: raw.toString("utf8") };
    }
  }

  /** GitHub's 422 for a body that breaks the operation's schema; also a violation. */
  private checkRequestBody(op: Operation, method: string, path: string, body: unknown, docUrl: string): JsonObject | undefined {
    if (body === undefined) {
      if (!this.spec.requestBodyRequired(op)) return undefined;
      this.violations.push({ kind: "request-body", method, path, operationId: op.operationId, message: "request body is required" });
      return { message: "Invalid request.\n\nFor 'links/0/schema', nil is not an object.", documentation_url: docUrl, status: "422" };
    }
    const outcome = this.spec.validateRequestBody(op, body);
    if (outcome.ok) return undefined;
    this.violations.push({ kind: "request-body", method, path, operationId: op.operationId, message: "request body does not match the operation's schema", errors: outcome.errors });
    const errors = outcome.errors.map((e) => ({
      resource: op.operationId, code: e.keyword === "required" ? "missing_field" : "invalid",
      field: e.keyword === "required" ? String(e.params.missingProperty) : e.instancePath.replace(/^\//, "").replaceAll("/", "."),
      message: `${e.instancePath || "body"} ${e.message ?? "is invalid"}`,
    }));
    return { message: "Invalid request.", errors, documentation_url: docUrl, status: "422" };
  }

  /** Keep the fake honest: its own answers must match the documented response. */
  private checkResponse(op: Operation, method: string, path: string, result: HandlerResult): void {
    if (result.raw || this.options.validateResponses === false) return;
    const base = { method, path, operationId: op.operationId, status: result.status };
    if (!this.spec.isDocumentedStatus(op, result.status)) {
      if (result.status < 400) {
        this.violations.push({ ...base, kind: "response-status", message: `the fake answered ${result.status}, which ${op.operationId} does not document` });
        return;
      }
      // GitHub documents few error statuses; any error must still look like basic-error
      const outcome = this.spec.validateComponent("basic-error", result.body);
      if (!outcome.ok) this.violations.push({ ...base, kind: "response-body", message: "error body is not a basic-error", errors: outcome.errors });
      return;
    }
    const outcome = this.spec.validateResponse(op, result.status, result.body);
    if (outcome && !outcome.ok) {
      this.violations.push({ ...base, kind: "response-body", message: `the fake's ${result.status} body does not match the documented schema`, errors: outcome.errors.slice(0, 20) });
    }
  }

  /** Primary rate limit per credential; returns headers for a 403 when exhausted. */
  private consumeRate(req: IncomingMessage, resource: string): Record<string, string> | undefined {
    const bucket = this.bucket(req, resource);
    bucket.used++;
    return bucket.used > (this.options.rateLimit ?? 5000) ? { "x-ratelimit-remaining": "0" } : undefined;
  }

  private bucket(req: IncomingMessage, resource: string): RateBucket {
    const key = `${resource} ${req.headers.authorization ?? "anonymous"}`;
    let bucket = this.rate.get(key);
    if (!bucket) {
      bucket = { used: 0, reset: Math.floor(Date.now() / 1000) + 3600 };
      this.rate.set(key, bucket);
    }
    return bucket;
  }

  private standardHeaders(req: IncomingMessage | undefined, resource: string): Record<string, string> {
    const limit = this.options.rateLimit ?? 5000;
    const bucket = req ? this.bucket(req, resource) : { used: 0, reset: Math.floor(Date.now() / 1000) + 3600 };
    return {
      "x-github-request-id": randomUUID().toUpperCase().replaceAll("-", ":").slice(0, 27),
      "x-github-api-version-selected": "2022-11-28",
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(Math.max(0, limit - bucket.used)),
      "x-ratelimit-used": String(bucket.used),
      "x-ratelimit-reset": String(bucket.reset),
      "x-ratelimit-resource": resource,
    };
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>>, resource: string, req?: IncomingMessage): void {
    const all: Record<string, string> = { ...this.standardHeaders(req ?? res.req, resource), ...headers };
    if (status === 204 || status === 304 || (status >= 300 && status < 400 && body === undefined) || body === undefined) {
      res.writeHead(status, all);
      res.end();
      return;
    }
    res.writeHead(status, { ...all, "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify(body));
  }

  private handleGraphQL(
    req: IncomingMessage, res: ServerResponse, body: { ok: boolean; value: unknown },
    record: (status: number, operationId: string | undefined) => void,
  ): void {
    if (!req.headers.authorization) {
      record(401, "graphql");
      return this.send(res, 401, { message: "This endpoint requires you to be authenticated.", documentation_url: "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql" }, {}, "graphql");
    }
    const auth = authenticate(req, { method: "POST", template: "/graphql", operationId: "graphql", raw: {} }, this.authSettings());
    if (auth instanceof HttpError) {
      record(auth.status, "graphql");
      return this.send(res, auth.status, auth.body, auth.headers, "graphql");
    }
    const result = executeGraphQL({
      state: this.state, objectLimit: this.graphqlObjectLimit, treeOid: (c, d) => this.state.treeOid(c, d),
      findRepo: (owner, name) => {
        const repo = this.state.repo(owner, name);
        const hidden = repo && auth.installationId !== null && repo.installationId !== undefined && repo.installationId !== auth.installationId;
        return hidden ? undefined : repo;
      },
    }, body.ok ? body.value : undefined);
    this.consumeRate(req, "graphql");
    record(200, "graphql");
    return this.send(res, 200, result, {}, "graphql", req);
  }

  // ---- the OAuth web flow (github.com/login/oauth/...) -------------------


  private serveFakeAsset(path: string, res: ServerResponse, record: (status: number, operationId: string | undefined) => void): void {
    const download = /^\/_fake\/download\/([0-9a-f]+)$/.exec(path);
    if (download) {
      const item = this.downloads.get(download[1] ?? "");
      record(item ? 200 : 404, "fake/download");
      if (!item) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": item.contentType, "content-length": String(item.content.length) });
      res.end(item.content);
      return;
    }
    // /_fake/raw/{owner}/{repo}/{ref}/{path...}: the contents API's download_url
    const rawMatch = /^\/_fake\/raw\/([^/]+)\/([^/]+)\/([^/]+)\/(.+)$/.exec(path);
    const repo = rawMatch ? this.state.repo(rawMatch[1] ?? "", rawMatch[2] ?? "") : undefined;
    const sha = repo && rawMatch ? this.state.resolveRef(repo, decodeURIComponent(rawMatch[3] ?? "")) : undefined;
    const content = sha && rawMatch ? this.state.commits.get(sha)?.get(decodeURIComponent(rawMatch[4] ?? "")) : undefined;
    record(content === undefined ? 404 : 200, "fake/raw");
    if (content === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    res.end(typeof content === "string" ? content : Buffer.from(content));
  }
}

/** Start a fake GitHub on 127.0.0.1. The spec is parsed once per process. */
export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const started = performance.now();
  const server = new FakeGitHubServer(loadGitHubSpec(), options);
  await server.listen();
  server.startupMs = performance.now() - started;
  return server;
}