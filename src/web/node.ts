// The web pages on the Node server: one more handler in Probot's chain (same port as the
// webhooks). Requests become fetch Requests for the runtime-neutral handler and its
// Response is written back; paths the handler does not know fall through to the next.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLarge, readBodyCapped } from "../node/body.ts";

export type FetchHandler = (request: Request) => Promise<Response | undefined>;

/** Bodies of the few forms these pages post (sign-out) are small. */
const MAX_FORM_BYTES = 16 * 1024;

function toRequest(req: IncomingMessage, body: string | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  // The origin comes from the Host header unless HCP_PUBLIC_URL is set; it only names the
  // OAuth callback, which GitHub checks against the App's registered callback URLs.
  const host = /^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(req.headers.host ?? "") ? req.headers.host! : "localhost";
  const proto = req.headers["x-forwarded-proto"] === "https" ? "https" : "http";
  const url = new URL(req.url ?? "/", `${proto}://${host}`);
  return new Request(url, { method: req.method ?? "GET", headers, ...(body ? { body } : {}) });
}

async function write(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  const body = head || response.body === null ? undefined : new Uint8Array(await response.arrayBuffer());
  res.writeHead(response.status, headers).end(body);
}

/** `paths` says which requests are the web handler's (the rest go to the next handler untouched). */
export function nodeWebHandler(handler: FetchHandler, owns: (path: string) => boolean) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (!owns(path)) return false;
    const method = req.method ?? "GET";
    let body: string | undefined;
    if (method !== "GET" && method !== "HEAD") {
      try {
        body = await readBodyCapped(req, MAX_FORM_BYTES);
      } catch (error) {
        if (!(error instanceof BodyTooLarge)) throw error;
        res.writeHead(413, { "content-type": "text/plain; charset=utf-8" }).end("Request body too large.");
        return true;
      }
    }
    const response = await handler(toRequest(req, body));
    if (!response) return false;
    await write(res, response, method === "HEAD");
    return true;
  };
}
