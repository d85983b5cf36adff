// GitHub's deliveries on Node: POSTs to the webhook path are taken from Probot's request
// listeners and handed to the one intake (src/github/intake.ts: signature, cap, route, the
// job written with its claim), with the request's body as it streams (src/node/body.ts).
// Probot keeps its server for everything else (the setup flow, the other handlers); its own
// verify and receive are never on the webhook path.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { IncomingDelivery, IntakeAnswer, WebhookRefusal } from "../github/intake.ts";
import type { Log } from "../shared/log.ts";
import { requestChunks } from "../node/body.ts";

export type { WebhookRefusal };

export interface WebhookGuardOptions {
  path: string;
  /** The intake with this server's secret and job store (acceptDelivery, src/github/intake.ts). */
  intake: (delivery: IncomingDelivery) => Promise<IntakeAnswer>;
  log: Log;
  /** Hears each refusal (metrics); a delivery that passes is counted where it is handled. */
  onRefused?: (reason: WebhookRefusal) => void;
  /** Hears how a verified delivery was answered: its event and the status. */
  onAnswered?: (event: string, status: number) => void;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const header = (req: IncomingMessage, name: string): string | null => {
  const value = req.headers[name];
  return typeof value === "string" ? value : null;
};

async function answerDelivery(req: IncomingMessage, res: ServerResponse, o: WebhookGuardOptions): Promise<void> {
  const body = requestChunks(req);
  const answer = await o.intake({ id: header(req, "x-github-delivery"), name: header(req, "x-github-event"), signature: header(req, "x-hub-signature-256"), body, declaredBytes: Number(req.headers["content-length"] ?? "0") });
  // Probot answered each delivery it took 200, which this server's operators and GitHub's
  // delivery log have always seen here; the edge says 202 for a job written.
  const status = answer.status === 202 ? 200 : answer.status;
  // Connection: close when a body was left unread (unsigned, or past the 413's bound) or refused as forged.
  const close = !body.ended || status === 401;
  res.writeHead(status, { "content-type": "application/json", ...(close ? { connection: "close" } : {}) }).end(JSON.stringify(answer.body));
  if (body.cancelled) res.once("finish", () => req.destroy());
  if (answer.refused) o.onRefused?.(answer.refused);
  // Verified, so GitHub named the event; still bounded, as a metrics label must be.
  else if (answer.event) o.onAnswered?.(/^[a-z_]{1,64}$/.test(answer.event) ? answer.event : "other", status);
}

/**
 * Puts the intake in front of every `request` listener `http` has now (Probot's server);
 * call it right after the server starts, before it answers anything.
 */
export function guardWebhooks(http: Server, options: WebhookGuardOptions): void {
  const downstream = http.listeners("request") as Listener[];
  http.removeAllListeners("request");
  const pass: Listener = (req, res) => {
    for (const listener of downstream) listener(req, res);
  };
  http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== options.path) return pass(req, res);
    answerDelivery(req, res, options).catch((error: unknown) => {
      options.log.error({ err: error }, "a webhook delivery could not be answered");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json", connection: "close" }).end(JSON.stringify({ error: "internal error" }));
    });
  });
}
