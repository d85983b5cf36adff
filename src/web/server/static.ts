// The built files under dist/web (build.ts), served with their types and CSPs (files.ts says
// which path is which file) from this machine's disk.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ensureWebBuild, type WebBuild } from "../build.ts";
import { builtFileFor, builtFileResponse, TYPES } from "./files.ts";
import { PLAYGROUND_CSP, securityHeaders } from "./headers.ts";
import { upstreamIndexPath } from "../../node/upstream-index.ts";

/** The playground's index of upstream recipes: the one this server's reviews read (HCP_BRIDGE_INDEX or the package's). */
const INDEX_PATH = "/playground/megatron-bridge-recipes.json";

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
      const entry = builtFileFor(path);
      if (!entry) return undefined;
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
      const body = entry.file ? await readFile(join(build.dir, entry.file)).catch(() => undefined) : undefined;
      return builtFileResponse(entry, body, build.hash);
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
