// The web pages on the edge builds: the same handler as the Node server's (src/web/server),
// so the same paths, headers and CSPs: the playground and its files, the rule pages, and `/`,
// the landing page (an edge deployment is always the App). The files come from the bundle
// (edge:web-files, see web-files.d.ts); the run history needs GitHub sign-in and the Node
// server, so it is off here. src/edge/bot.ts imports this module on the first page request.
import { builtFileFor, builtFileResponse } from "../web/server/files.ts";
import { PLAYGROUND_CSP, securityHeaders } from "../web/server/headers.ts";
import { createWebHandler } from "../web/server/index.ts";

export interface EdgeWebFiles {
  hash: string;
  read(name: string): Promise<Uint8Array | ArrayBuffer | undefined>;
}

/** The playground asks for the server's index of upstream recipes; an edge bundle carries none (src/edge/work.ts). */
const INDEX_PATH = "/playground/megatron-bridge-recipes.json";

export function createEdgeWeb(files: EdgeWebFiles): (request: Request) => Promise<Response> {
  const handler = createWebHandler({
    files: {
      async serve(path) {
        if (path === INDEX_PATH) {
          return new Response("This edge deployment has no index of upstream recipes.", { status: 404, headers: { ...securityHeaders(PLAYGROUND_CSP), "content-type": "text/plain; charset=utf-8", "cache-control": "no-cache" } });
        }
        const entry = builtFileFor(path);
        if (!entry) return undefined;
        return builtFileResponse(entry, entry.file ? await files.read(entry.file) : undefined, files.hash);
      },
    },
    runs: { access: { access: "off" }, store: undefined, github: { webUrl: "https://github.com", apiUrl: "https://api.github.com" } },
    landing: true,
  });
  return async (request) => (await handler(request)) ?? new Response("Not found.", { status: 404, headers: { ...securityHeaders(PLAYGROUND_CSP), "content-type": "text/plain; charset=utf-8" } });
}
