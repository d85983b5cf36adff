// The web pages, as one fetch-style handler: the playground and the rule pages (static files,
// no server work) and the smoke-run history behind GitHub sign-in. Runtime-neutral apart from the static
// files and the store the host hands in.
import { htmlResponse } from "./headers.ts";
import { landingPage } from "./landing.ts";
import { createRunsRoutes, type RunsOptions } from "./runs.ts";
import type { StaticFiles } from "./static.ts";

export interface WebHandlerOptions {
  files: Pick<StaticFiles, "serve">;
  runs: RunsOptions;
  /** App mode: `/` is the landing page (in setup mode it is Probot's, which registers the App). */
  landing?: boolean;
}

export { isWebPath } from "./paths.ts";

export function createWebHandler(options: WebHandlerOptions): (request: Request) => Promise<Response | undefined> {
  const runs = createRunsRoutes(options.runs);
  return async (request) => {
    const url = new URL(request.url);
    if (request.method !== "GET" && request.method !== "HEAD" && !url.pathname.startsWith("/auth/")) {
      return htmlResponse(405, "<!doctype html><title>Method not allowed</title><p>Method not allowed.</p>", undefined, { allow: "GET, HEAD" });
    }
    if (url.pathname === "/" && options.landing) return landingPage({ runsOn: options.runs.access.access !== "off" });
    const file = await options.files.serve(url.pathname);
    if (file) {
      const etag = file.headers.get("etag");
      if (etag && request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers: file.headers });
      return file;
    }
    return runs(request, url);
  };
}
