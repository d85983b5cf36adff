// The one way in for a GitHub delivery, on every host: the signature (a missing or malformed
// one refused before a byte of the body is read), the size cap (src/shared/limits.ts), the
// HMAC, the route (src/github/routes.ts: which handler's work, under which key, or nothing to
// do) and the durable job written with its claim, the job recording its route. The work runs
// later, from the job (src/github/deliveries.ts). Runtime-neutral and light (no node:, none of
// the app's modules): each host wraps it in a few lines (src/edge/webhook.ts for a fetch
// Request, src/server/webhook-guard.ts for a Node request) and answers what it returns.
import type { Log } from "../shared/log.ts";
import { MAX_WEBHOOK_BYTES } from "../shared/limits.ts";
import { readCapped, textSource, type ChunkSource } from "../shared/read-capped.ts";
import { deliveryClaim } from "../jobs/runner.ts";
import { routeBodyNamed } from "./routes.ts";
import { SIGNATURE_FORM, verifyWebhookSignature, type HmacSha256 } from "./signature.ts";

/** Writes a job with its claim and hands it on; false when the claim was taken (a redelivery). */
export type Accept = (job: { key: string; kind: string; payload: string }, claim: { key: string; ttlSeconds: number }) => Promise<boolean>;

/** A delivery as its request brings it: the headers GitHub sends, and the body (as it streams in, or as text). */
export interface IncomingDelivery {
  /** `x-github-delivery` */
  id: string | null;
  /** `x-github-event` */
  name: string | null;
  /** `x-hub-signature-256` */
  signature: string | null;
  body: ChunkSource | string;
  /** The body's length as its request declared it (content-length); 0 when it did not. */
  declaredBytes?: number;
}

/** Why a delivery was refused before its signature was found good (the Node server counts these). */
export type WebhookRefusal = "unsigned" | "too-large" | "forged" | "unreadable";

/** The answer to give: status and JSON body; `refused` when the delivery was not verified, `event` once it was. */
export interface IntakeAnswer {
  status: number;
  body: Record<string, unknown>;
  refused?: WebhookRefusal;
  event?: string;
}

export interface IntakeDeps {
  secret: string;
  accept: Accept;
  log: Log;
  maxBytes?: number;
  /** The host's HMAC-SHA256 (the Node server's node:crypto: WebCrypto there hands each HMAC to the thread pool); WebCrypto's otherwise. */
  hmacSha256?: HmacSha256;
}

/** Thrown by an Accept that cannot take new work now (a store that is down, a replica draining): the answer is its 503, for GitHub to deliver again. */
export class Unavailable extends Error {
  override name = "Unavailable";
  readonly status = 503;
}

/** A job's payload: the delivery as GitHub signed it, with its id, name and route. */
export interface StoredDelivery {
  id: string;
  name: string;
  /** The ROUTES entry (src/github/routes.ts) whose handler runs it. Absent in jobs written before routes were recorded. */
  route?: string;
  payload: { action?: string; installation?: { id: number } } & Record<string, unknown>;
}

const FORGED = { error: "missing, malformed or forged x-hub-signature-256" };
const refusal = (status: number, error: string, refused: WebhookRefusal): IntakeAnswer => ({ status, body: { error }, refused });

/** The body as text, or the refusal to answer. */
async function readBody(delivery: IncomingDelivery, max: number): Promise<string | IntakeAnswer> {
  const source = typeof delivery.body === "string" ? textSource(delivery.body) : delivery.body;
  let body: string | null;
  try {
    body = await readCapped(source, max, delivery.declaredBytes ?? 0);
  } catch {
    return refusal(400, "the body could not be read", "unreadable");
  }
  return body ?? refusal(413, `webhook body over ${max} bytes`, "too-large");
}

export async function acceptDelivery(delivery: IncomingDelivery, deps: IntakeDeps): Promise<IntakeAnswer> {
  const { signature, id, name } = delivery;
  if (!signature || !SIGNATURE_FORM.test(signature)) return { ...refusal(401, FORGED.error, "unsigned") };
  const body = await readBody(delivery, deps.maxBytes ?? MAX_WEBHOOK_BYTES);
  if (typeof body !== "string") return body;
  if (!(await verifyWebhookSignature(deps.secret, body, signature, deps.hmacSha256))) return refusal(401, FORGED.error, "forged");
  if (!id || !name || id.length > 200 || !/^[a-z_]{1,64}$/.test(name)) return { status: 400, body: { error: "x-github-delivery and x-github-event are required" } };
  const routing = routeBodyNamed(name, body);
  if (routing.kind === "malformed") return { status: 400, body: { error: routing.reason }, event: name };
  if (routing.kind === "ignored") return { status: 200, body: { ok: true, ignored: true }, event: name };
  // The job carries the body as GitHub signed it, and the route whose handler runs it.
  const payload = `{"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"route":${JSON.stringify(routing.route)},"payload":${body}}`;
  let accepted: boolean;
  try {
    accepted = await deps.accept({ key: routing.key, kind: "github", payload }, deliveryClaim(id));
  } catch (error) {
    if (!(error instanceof Unavailable)) throw error;
    return { status: 503, body: { error: error.message }, event: name };
  }
  if (!accepted) deps.log.info({ delivery: id }, "delivery already accepted; ignoring the redelivery");
  return { status: accepted ? 202 : 200, body: { ok: true, ...(accepted ? {} : { duplicate: true }) }, event: name };
}
