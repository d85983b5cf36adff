// A Node request's body for the one capped reader (src/shared/read-capped.ts): the adapter,
// and the reader for the server's small bodies (Slack, the setup and web forms).
import type { IncomingMessage } from "node:http";
import { readCapped, type ChunkSource } from "../shared/read-capped.ts";

export class BodyTooLarge extends Error {
  override name = "BodyTooLarge";
}

/** A request's body as chunks; `ended` once all of it was read, `cancelled` once reading stopped short. */
export interface RequestChunks extends ChunkSource {
  readonly ended: boolean;
  readonly cancelled: boolean;
}

/**
 * The request's body, read in paused mode (`read()` on "readable"), not with `for await`:
 * leaving an async iterator early destroys the socket before the answer is out. Cancelling
 * only stops reading; the host then answers with `connection: close` and cuts the socket.
 */
export function requestChunks(req: IncomingMessage): RequestChunks {
  let ended = false;
  let cancelled = false;
  let failed: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onEnd = () => {
    ended = true;
    notify();
  };
  const onError = (error: Error) => {
    failed = error;
    notify();
  };
  const onClose = () => {
    if (!ended) failed ??= new Error("the request closed before its body ended");
    notify();
  };
  req.on("readable", notify).on("end", onEnd).on("error", onError).on("close", onClose);
  const stop = () => void req.off("readable", notify).off("end", onEnd).off("error", onError).off("close", onClose);
  return {
    async read() {
      for (;;) {
        if (failed) throw failed;
        const chunk = req.read() as Buffer | null;
        if (chunk !== null) return { done: false, value: chunk };
        if (ended || req.readableEnded) {
          stop();
          return { done: true };
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    cancel() {
      cancelled = true;
      stop();
    },
    get ended() {
      return ended || req.readableEnded;
    },
    get cancelled() {
      return cancelled;
    },
  };
}

/**
 * The body as text, or BodyTooLarge past `maxBytes` (up to `maxBytes` more is read and
 * dropped first, src/shared/read-capped.ts says why; past that the request is cut).
 */
export async function readBodyCapped(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks = requestChunks(req);
  const text = await readCapped(chunks, maxBytes, Number(req.headers["content-length"] ?? "0"));
  if (chunks.cancelled) req.destroy();
  if (text === null) throw new BodyTooLarge(`the body is over ${maxBytes} bytes`);
  return text;
}
