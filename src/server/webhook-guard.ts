// The front of the webhook path on Node, before Probot's middleware: a delivery without a
// well-formed signature is refused before its body is read; a body over the cap is refused
// (413) by its content-length, or as soon as the stream passes the cap; the HMAC is computed
// while the body streams, and only a body whose signature matches, and that is the JSON its
// event carries (src/github/routes.ts), reaches Probot (as the text it already read, so
// nothing is read twice). Probot's middleware verifies it again.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { routeBody, routesEvent } from "../github/routes.ts";
import { MAX_WEBHOOK_BYTES } from "../shared/limits.ts";

export type WebhookRefusal = "unsigned" | "too-large" | "forged" | "unreadable";

export interface WebhookGuardOptions {
  path: string;
  secret: string;
  maxBytes?: number;
  /** Hears each refusal (metrics); a delivery that passes is counted where it is handled. */
  onRefused?: (reason: WebhookRefusal) => void;
  /** Hears how a verified delivery was answered: its event and the status. */
  onAnswered?: (event: string, status: number) => void;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

function refuse(res: ServerResponse, status: number, error: string, close = true): void {
  // Connection: close: what is left of a refused body is not read off the socket (a 413 drains first).
  res.writeHead(status, { "content-type": "application/json", ...(close ? { connection: "close" } : {}) }).end(JSON.stringify({ error }));
}

/**
 * Answers a body refused for its size once the rest of it is read and dropped, up to `max`
 * bytes more: a connection closed with unread data resets, and a client that writes its
 * whole body before reading (GitHub's does) never sees the 413. Past the bound the answer
 * goes out and the connection is cut.
 */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse, maxBytes: number, max: number): void {
  const error = `webhook body over ${maxBytes} bytes`;
  let dropped = 0;
  const answer = (cut: boolean) => {
    req.off("data", onData).off("end", onEnd);
    if (res.headersSent) return;
    refuse(res, 413, error, cut);
    if (cut) res.once("finish", () => req.destroy());
  };
  const onData = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > max) answer(true);
  };
  const onEnd = () => answer(false);
  req.on("data", onData).on("end", onEnd);
  req.resume();
}

/** The verified body as text, or the refusal already answered. */
async function readVerified(req: IncomingMessage, res: ServerResponse, o: { secret: string; maxBytes: number }): Promise<{ body: string } | WebhookRefusal> {
  const signature = SIGNATURE.exec(String(req.headers["x-hub-signature-256"] ?? ""))?.[1];
  if (!signature) {
    refuse(res, 401, "missing or malformed x-hub-signature-256");
    return "unsigned";
  }
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > o.maxBytes) {
    refuseTooLarge(req, res, o.maxBytes, 2 * o.maxBytes); // as much as a body refused while streaming is read in all
    return "too-large";
  }
  const hmac = createHmac("sha256", o.secret);
  const chunks: Buffer[] = [];
  let size = 0;
  // Events, not `for await`: leaving an async iterator early destroys the socket before the 413 is out.
  const ended = await new Promise<"end" | WebhookRefusal>((resolve) => {
    const stop = (outcome: "end" | WebhookRefusal) => {
      req.off("data", onData).off("end", onEnd).off("error", onError);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > o.maxBytes) {
        req.pause();
        chunks.length = 0;
        return stop("too-large");
      }
      hmac.update(chunk);
      chunks.push(chunk);
    };
    const onEnd = () => stop("end");
    const onError = () => stop("unreadable");
    req.on("data", onData).on("end", onEnd).on("error", onError);
  });
  if (ended === "too-large") refuseTooLarge(req, res, o.maxBytes, o.maxBytes);
  if (ended === "unreadable" && !res.headersSent) refuse(res, 400, "the body could not be read");
  if (ended !== "end") return ended;
  const expected = hmac.digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) {
    refuse(res, 401, "the signature does not match the body");
    return "forged";
  }
  return { body: Buffer.concat(chunks, size).toString("utf8") };
}

/**
 * Puts the guard in front of every `request` listener `http` has now (Probot's server);
 * call it right after the server starts, before it answers anything.
 */
export function guardWebhooks(http: Server, options: WebhookGuardOptions): void {
  const o = { path: options.path, secret: options.secret, maxBytes: options.maxBytes ?? MAX_WEBHOOK_BYTES };
  const downstream = http.listeners("request") as Listener[];
  http.removeAllListeners("request");
  const pass: Listener = (req, res) => {
    for (const listener of downstream) listener(req, res);
  };
  http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== o.path) return pass(req, res);
    void readVerified(req, res, o).then((read) => {
      if (typeof read === "string") return options.onRefused?.(read);
      // @octokit/webhooks' middleware takes a string `body` as the raw payload.
      (req as IncomingMessage & { body?: string }).body = read.body;
      const event = String(req.headers["x-github-event"] ?? "");
      // Verified, so GitHub named the event; still bounded, as a metrics label must be.
      if (options.onAnswered) res.once("finish", () => options.onAnswered!(/^[a-z_]{1,64}$/.test(event) ? event : "other", res.statusCode));
      // Signed, but not JSON or not what its event carries: a 400 saying so, as on the edge,
      // not a 500 from a handler. Only events the app acts on are parsed here (Probot parses
      // again; a large push it ignores is not worth a second parse).
      const routing = routesEvent(event) ? routeBody(event, read.body) : undefined;
      if (routing?.kind === "malformed") return refuse(res, 400, routing.reason, false);
      pass(req, res);
    });
  });
}
