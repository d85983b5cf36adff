// A GitHub delivery on an edge host, up to its answer: a fetch Request handed to the one
// intake (src/github/intake.ts: signature, cap, route, the job written with its claim). None
// of this loads the app: the work runs after the answer, from the job.
import { acceptDelivery, type Accept } from "../github/intake.ts";
import type { Log } from "../shared/log.ts";
import { MAX_WEBHOOK_BYTES as MAX_GITHUB_WEBHOOK_BYTES } from "../shared/limits.ts";
import { readCapped, streamSource } from "../shared/read-capped.ts";

export type { Accept };

/** The edge's cap on a delivery: GitHub's 25 MB, as on Node (src/shared/limits.ts). */
export const MAX_WEBHOOK_BYTES = MAX_GITHUB_WEBHOOK_BYTES;

export const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });

/** The body as text, or undefined past `max` bytes (what follows is dropped, src/shared/read-capped.ts says why). */
export async function readLimited(request: Request, max: number): Promise<string | undefined> {
  return (await readCapped(streamSource(request.body), max, Number(request.headers.get("content-length") ?? "0"))) ?? undefined;
}

export async function acceptWebhook(request: Request, secret: string, accept: Accept, log: Log): Promise<Response> {
  const header = (name: string) => request.headers.get(name);
  const answer = await acceptDelivery(
    // The body is read only once the signature header is found well-formed.
    { id: header("x-github-delivery"), name: header("x-github-event"), signature: header("x-hub-signature-256"), body: streamSource(request.body), declaredBytes: Number(header("content-length") ?? "0") },
    { secret, accept, log, maxBytes: MAX_WEBHOOK_BYTES },
  );
  return json(answer.status, answer.body);
}
