// The one reader of a body of untrusted size, for every host: the text, or null once it passes
// `max` bytes. Past the cap nothing more is kept, but up to another `max` bytes are read and
// dropped before the caller answers: a connection closed with part of a body unread is reset
// by the kernel, and a client that writes its whole body before reading (GitHub's does) then
// never sees the 413. Past that bound the source is cancelled, so a body of any size costs at
// most 2 x max read. A body whose declared length is over the cap is refused without keeping
// a byte of it (up to 2 x max is dropped, as much as a body refused while streaming reads in all).
//
// Hosts adapt their stream to a ChunkSource in a few lines: a fetch body's reader is one as it
// is (the edge), src/node/body.ts adapts a Node request (the server's webhooks, Slack, forms).

/** A body as chunks: what `ReadableStreamDefaultReader` does, or a host's adapter over its own stream. */
export interface ChunkSource {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  /** Stops reading: what is left is not read (the host cuts the connection after its answer). */
  cancel(): Promise<void> | void;
}

/** The text of `source`, or null past `max` bytes (by `declared`, the length its request declared, or while reading). */
export async function readCapped(source: ChunkSource, max: number, declared = 0): Promise<string | null> {
  if (declared > max) {
    await discardRest(source, 2 * max);
    return null;
  }
  // Chunks are kept as they came and decoded once at the end: a refused body's bytes are
  // dropped at once, never first copied into a string.
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await source.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      chunks.length = 0;
      await discardRest(source, max);
      return null;
    }
    chunks.push(value);
  }
  return decodeChunks(chunks, total);
}

function decodeChunks(chunks: Uint8Array[], total: number): string {
  if (chunks.length === 1) return new TextDecoder().decode(chunks[0]);
  const whole = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(whole);
}

/** Reads and drops a refused body's rest, up to `bound` bytes; then stops reading. */
async function discardRest(source: ChunkSource, bound: number): Promise<void> {
  let dropped = 0;
  for (;;) {
    const { done, value } = await source.read();
    if (done) return;
    dropped += value.byteLength;
    if (dropped > bound) return void (await source.cancel());
  }
}

/** A text as a ChunkSource of one chunk (a body a host already holds, and tests). */
export function textSource(text: string): ChunkSource {
  let chunk: Uint8Array | undefined = new TextEncoder().encode(text);
  return {
    read: async () => {
      const value = chunk;
      chunk = undefined;
      return value ? { done: false, value } : { done: true };
    },
    cancel: () => {},
  };
}

/** A fetch body (a Request's) as a ChunkSource; an absent body is an empty one. */
export function streamSource(stream: ReadableStream<Uint8Array> | null): ChunkSource {
  if (!stream) return textSource("");
  const reader = stream.getReader();
  return { read: () => reader.read() as ReturnType<ChunkSource["read"]>, cancel: () => reader.cancel() };
}
