// Reads a body of untrusted size: the text, or null once it passes `max` bytes. Past the cap
// nothing more is kept, but up to another `max` bytes are read and dropped before the caller
// answers: a connection closed with part of a body unread is reset by the kernel, and a
// client that writes its whole body before reading (GitHub's does) then never sees the 413.
// Past that bound the stream is cancelled, so a body of any size costs at most 2 x max read.
export async function readCapped(stream: ReadableStream<Uint8Array>, max: number): Promise<string | null> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await discardRest(reader, max);
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/** Reads and drops a refused body's rest, up to `bound` bytes; then stops reading. */
export async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, bound: number): Promise<void> {
  let dropped = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    dropped += value.byteLength;
    if (dropped > bound) return void (await reader.cancel());
  }
}

/** A body refused by its declared length: what it sends is dropped (up to `bound`) before the answer. */
export async function discardBody(stream: ReadableStream<Uint8Array> | null, bound: number): Promise<void> {
  if (stream) await discardRest(stream.getReader(), bound);
}
