// Reads a request body into a string, refusing it past a size limit (a body is held in
// memory whole, so the limit is what keeps a huge one from costing the server).
import type { IncomingMessage } from "node:http";

export class BodyTooLarge extends Error {
  override name = "BodyTooLarge";
}

export async function readBodyCapped(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new BodyTooLarge(`the body is over ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
