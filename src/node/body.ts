// Reads a request body into a string, refusing it past a size limit (a body is held in
// memory whole, so the limit is what keeps a huge one from costing the server).
import type { IncomingMessage } from "node:http";

export class BodyTooLarge extends Error {
  override name = "BodyTooLarge";
}

/**
 * The body as text, or BodyTooLarge past `maxBytes`. What follows the cap is read and
 * dropped, up to `maxBytes` more (src/shared/read-capped.ts says why: a connection closed
 * with a body unread resets, and the client never reads the 413); past that it is cut.
 */
export async function readBodyCapped(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 2 * maxBytes) break;
    if (size <= maxBytes) chunks.push(chunk as Buffer);
  }
  if (size > maxBytes) throw new BodyTooLarge(`the body is over ${maxBytes} bytes`);
  return Buffer.concat(chunks).toString("utf8");
}
