// The built files under dist/web (build.ts), served with their types and the playground's
// CSP. Paths are matched against the files the build wrote, never joined from the URL.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ensureWebBuild, type WebBuild } from "../build.ts";
import { PLAYGROUND_CSP, securityHeaders } from "./headers.ts";
import { upstreamIndexPath } from "../../node/upstream-index.ts";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

/** The playground's index of upstream recipes: the one this server's reviews read (HCP_BRIDGE_INDEX or the package's). */
const INDEX_PATH = "/playground/megatron-bridge-recipes.json";

/** URL path -> file of the build. */
const FILES: Record<string, string> = {
  "/playground": "playground/index.html",
  "/playground/": "playground/index.html",
  "/playground/page.js": "playground/page.js",
  "/playground/worker.js": "playground/worker.js",
  "/playground/web-tree-sitter.wasm": "playground/web-tree-sitter.wasm",
  "/playground/tree-sitter-python.wasm": "playground/tree-sitter-python.wasm",
  "/web/style.css": "web/style.css",
  "/web/noscript.css": "web/noscript.css",
  "/web/icon.svg": "web/icon.svg",
  "/favicon.ico": "web/icon.svg",
};

export interface StaticFiles {
  /** The response for a built file, or undefined when the path is not one. */
  serve(path: string): Promise<Response | undefined>;
  /** Builds (or checks) dist/web now instead of at the first request. */
  prepare(): Promise<WebBuild>;
}

export function createStaticFiles(options: { dir?: string; log?: { error(obj: object, msg?: string): void } } = {}): StaticFiles {
  let ready: Promise<WebBuild> | undefined;
  const prepare = () => {
    ready ??= ensureWebBuild(options.dir).catch((error: unknown) => {
      ready = undefined; // the next request tries again
      throw error;
    });
    return ready;
  };
  return {
    prepare,
    async serve(path) {
      if (path === INDEX_PATH) return serveIndex();
      const file = FILES[path];
      if (!file) return undefined;
      let build: WebBuild;
      try {
        build = await prepare();
      } catch (error) {
        options.log?.error({ err: error }, "the web pages could not be built");
        return new Response("The playground could not be built on this server; the log says why (npm run build:web).", {
          status: 503,
          headers: { ...securityHeaders(PLAYGROUND_CSP), "content-type": "text/plain; charset=utf-8" },
        });
      }
      const body = await readFile(join(build.dir, file));
      const type = TYPES[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream";
      // Scripts and WebAssembly change only with a new build: the page revalidates them by ETag.
      return new Response(body, {
        status: 200,
        headers: { ...securityHeaders(PLAYGROUND_CSP), "content-type": type, "cache-control": "no-cache", etag: `"${build.hash.slice(0, 16)}"` },
      });
    },
  };
}

/** The index file as it is now (no ETag: it changes without a new web build). */
async function serveIndex(): Promise<Response> {
  const headers = { ...securityHeaders(PLAYGROUND_CSP), "cache-control": "no-cache" };
  try {
    return new Response(await readFile(upstreamIndexPath()), { status: 200, headers: { ...headers, "content-type": TYPES[".json"]! } });
  } catch {
    return new Response("This server has no index of upstream recipes.", { status: 404, headers: { ...headers, "content-type": "text/plain; charset=utf-8" } });
  }
}
