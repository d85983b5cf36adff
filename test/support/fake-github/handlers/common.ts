// What every route handler gets and the GitHub-style errors it may throw.
import type { IncomingHttpHeaders } from "node:http";
import type { JsonObject } from "../json.ts";
import type { Renderer } from "../render.ts";
import { repoKey, type FakeState, type RepoState, type UserRef } from "../state.ts";

export interface AuthInfo {
  readonly kind: "jwt" | "installation" | "token" | "user";
  readonly installationId: number | null;
  /** The login behind a user access token (kind "user"). */
  readonly user?: string;
}

export interface FakeCore {
  readonly state: FakeState;
  readonly bot: UserRef;
  readonly appId: number;
  readonly webBase: string;
  /** one-shot download URLs (artifact zips, job logs), like GitHub's signed URLs */
  registerDownload(content: Buffer, contentType: string): string;
  readonly graphqlObjectLimit: number;
}

export interface HandlerContext {
  readonly core: FakeCore;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly body: JsonObject;
  readonly headers: IncomingHttpHeaders;
  readonly render: Renderer;
  readonly auth: AuthInfo;
  /** the request URL as the client sent it (for Link headers) */
  readonly requestUrl: URL;
  readonly docUrl: string;
}

export interface HandlerResult {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** a non-JSON body (raw file content, zip, logs); not validated against the spec */
  readonly raw?: { readonly contentType: string; readonly data: Buffer | string };
}

export type Handler = (ctx: HandlerContext) => HandlerResult;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: JsonObject,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(typeof body.message === "string" ? body.message : `HTTP ${status}`);
  }
}

export function notFound(ctx: HandlerContext): HttpError {
  return new HttpError(404, { message: "Not Found", documentation_url: ctx.docUrl, status: "404" });
}

/** 422 with the `validation-error` shape (errors are objects). */
export function invalid(ctx: HandlerContext, message: string, errors: JsonObject[] = []): HttpError {
  return new HttpError(422, { message, errors, documentation_url: ctx.docUrl, status: "422" });
}

/** 422 with the `validation-error-simple` shape (errors are strings), as reviews use. */
export function invalidSimple(ctx: HandlerContext, errors: string[]): HttpError {
  return new HttpError(422, { message: "Unprocessable Entity", errors, documentation_url: ctx.docUrl, status: "422" });
}

export function requireRepo(ctx: HandlerContext): RepoState {
  const owner = ctx.params.owner ?? "";
  const repo = ctx.params.repo ?? "";
  const found = ctx.core.state.repos.get(repoKey(owner, repo));
  // an installation token only sees the repositories of its installation
  if (!found || (ctx.auth.installationId !== null && found.installationId !== undefined && found.installationId !== ctx.auth.installationId)) {
    throw notFound(ctx);
  }
  if (ctx.auth.user !== undefined && !userCanRead(ctx.core.state, found, ctx.auth.user)) throw notFound(ctx);
  return found;
}

/**
 * A GitHub App's user token reaches what both the user and the App can: a repository of an
 * installation that is public or that the user has a role on (GitHub answers 404 otherwise).
 */
export function userCanRead(state: FakeState, repo: RepoState, login: string): boolean {
  if (repo.installationId === undefined) return false;
  const level = state.permissionOf(repo, login);
  return level !== undefined && level !== "none" ? true : !repo.private && level === undefined;
}

export function intParam(ctx: HandlerContext, name: string): number {
  const raw = ctx.params[name] ?? "";
  if (!/^\d+$/.test(raw)) throw notFound(ctx);
  return Number(raw);
}

export const MAX_BODY = 65536;

export function checkBodyLength(ctx: HandlerContext, body: string, resource: string): void {
  if (body.length > MAX_BODY) {
    throw invalid(ctx, "Validation Failed", [
      { resource, code: "custom", field: "body", message: `body is too long (maximum is ${MAX_BODY} characters)` },
    ]);
  }
}

export interface Page<T> {
  readonly items: T[];
  readonly headers: Record<string, string>;
}

/**
 * GitHub's page-number pagination: per_page defaults to 30 and is capped at 100;
 * a Link header carries first/prev/next/last when there is more than one page.
 */
export function paginate<T>(ctx: HandlerContext, all: readonly T[]): Page<T> {
  const perPageRaw = Number(ctx.query.get("per_page") ?? "30");
  const perPage = Math.min(100, Math.max(1, Number.isFinite(perPageRaw) ? Math.floor(perPageRaw) : 30));
  const pageRaw = Number(ctx.query.get("page") ?? "1");
  const page = Math.max(1, Number.isFinite(pageRaw) ? Math.floor(pageRaw) : 1);
  const last = Math.max(1, Math.ceil(all.length / perPage));
  const items = all.slice((page - 1) * perPage, page * perPage);
  const link = (p: number, rel: string): string => {
    const u = new URL(ctx.requestUrl.href);
    u.searchParams.set("per_page", String(perPage));
    u.searchParams.set("page", String(p));
    return `<${u.href}>; rel="${rel}"`;
  };
  const rels: string[] = [];
  if (page > 1) rels.push(link(page - 1, "prev"));
  if (page < last) rels.push(link(page + 1, "next"), link(last, "last"));
  if (page > 1) rels.push(link(1, "first"));
  return { items, headers: rels.length > 0 ? { link: rels.join(", ") } : {} };
}
