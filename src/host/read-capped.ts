// Reads a body of untrusted size: the text, or null once it passes `max` bytes (reading stops
// there, so an oversized body never sits in memory whole).
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
      await reader.cancel();
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
