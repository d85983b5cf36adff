// A GitHub delivery on an edge host, up to its answer: the signature, the size cap, the route
// (src/github/routes.ts: the key of its work, or nothing to do) and the durable job written
// with its claim. None of this loads the app: the work runs after the answer, from the job.
import { routeBody } from "../github/routes.ts";
import { verifyWebhookSignature, SIGNATURE_FORM } from "../github/signature.ts";
import type { HostLog } from "../github/host.ts";
import { MAX_WEBHOOK_BYTES as MAX_GITHUB_WEBHOOK_BYTES } from "../shared/limits.ts";
import { discardBody, readCapped } from "../shared/read-capped.ts";
import { deliveryClaim } from "../jobs/runner.ts";

/** The edge's cap on a delivery: GitHub's 25 MB, as on Node (src/shared/limits.ts). */
export const MAX_WEBHOOK_BYTES = MAX_GITHUB_WEBHOOK_BYTES;

/** Writes a job with its claim and hands it on; false when the claim was taken (a redelivery). */
export type Accept = (job: { key: string; kind: string; payload: string }, claim: { key: string; ttlSeconds: number }) => Promise<boolean>;

export const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });

/** The body as text, or undefined past `max` bytes (what follows is dropped, src/shared/read-capped.ts says why). */
export async function readLimited(request: Request, max: number): Promise<string | undefined> {
  if (Number(request.headers.get("content-length") ?? "0") > max) {
    await discardBody(request.body, 2 * max);
    return undefined;
  }
  if (!request.body) return "";
  return (await readCapped(request.body, max)) ?? undefined;
}

const FORGED = { error: "missing, malformed or forged x-hub-signature-256" };

export async function acceptWebhook(request: Request, secret: string, accept: Accept, log: HostLog): Promise<Response> {
  const signature = request.headers.get("x-hub-signature-256");
  // No well-formed signature: refused before a byte of the body is read.
  if (!signature || !SIGNATURE_FORM.test(signature)) return json(401, FORGED);
  const body = await readLimited(request, MAX_WEBHOOK_BYTES);
  if (body === undefined) return json(413, { error: `webhook body over ${MAX_WEBHOOK_BYTES} bytes` });
  if (!(await verifyWebhookSignature(secret, body, signature))) return json(401, FORGED);
  const id = request.headers.get("x-github-delivery");
  const name = request.headers.get("x-github-event");
  if (!id || !name || id.length > 200 || !/^[a-z_]{1,64}$/.test(name)) return json(400, { error: "x-github-delivery and x-github-event are required" });
  const routing = routeBody(name, body);
  if (routing.kind === "malformed") return json(400, { error: routing.reason });
  if (routing.kind === "ignored") return json(200, { ok: true, ignored: true });
  // The job carries the body as GitHub signed it.
  const accepted = await accept({ key: routing.key, kind: "github", payload: `{"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"payload":${body}}` }, deliveryClaim(id));
  if (!accepted) log.info({ delivery: id }, "delivery already accepted; ignoring the redelivery");
  return json(accepted ? 202 : 200, { ok: true, ...(accepted ? {} : { duplicate: true }) });
}
