// Reads the Actions artifact zip the smoke workflow uploads (log + verdict.json). Pure:
// entries are inflated with the Web DecompressionStream, which Node, Deno and Workers
// all have, so the decompressed log streams into the verdict parser without being held.

export interface ZipEntry {
  name: string;
  /** 0 = stored, 8 = deflate. */
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

export class ZipError extends Error {}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;

function findEndOfCentralDirectory(view: DataView): number {
  // The record is 22 bytes plus a comment of up to 65535 bytes, at the very end.
  const min = Math.max(0, view.byteLength - 22 - 0xffff);
  for (let i = view.byteLength - 22; i >= min; i--) {
    if (view.getUint32(i, true) === EOCD_SIGNATURE) return i;
  }
  throw new ZipError("not a zip archive (no end-of-central-directory record)");
}

export function listZipEntries(bytes: Uint8Array): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.byteLength < 22) throw new ZipError("not a zip archive (too short)");
  const eocd = findEndOfCentralDirectory(view);
  const count = view.getUint16(eocd + 10, true);
  let p = view.getUint32(eocd + 16, true);
  if (p === 0xffffffff) throw new ZipError("zip64 archives are not supported");
  const decoder = new TextDecoder();
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (p + 46 > view.byteLength || view.getUint32(p, true) !== CENTRAL_SIGNATURE) throw new ZipError("corrupt zip central directory");
    const nameLength = view.getUint16(p + 28, true);
    const extraLength = view.getUint16(p + 30, true);
    const commentLength = view.getUint16(p + 32, true);
    entries.push({
      method: view.getUint16(p + 10, true),
      compressedSize: view.getUint32(p + 20, true),
      size: view.getUint32(p + 24, true),
      localHeaderOffset: view.getUint32(p + 42, true),
      name: decoder.decode(bytes.subarray(p + 46, p + 46 + nameLength)),
    });
    p += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The entry's compressed bytes, checked against its local header. */
function compressedData(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeaderOffset;
  if (at + 30 > view.byteLength || view.getUint32(at, true) !== LOCAL_SIGNATURE) throw new ZipError(`corrupt local header for ${entry.name}`);
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  const end = start + entry.compressedSize;
  if (end > bytes.byteLength) throw new ZipError(`${entry.name} runs past the end of the archive`);
  return bytes.subarray(start, end);
}

/** Slices of `data` as a stream, so the consumer sees a stream, not one huge chunk. */
function slices(data: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < data.byteLength; i += 1 << 20) controller.enqueue(data.subarray(i, Math.min(i + (1 << 20), data.byteLength)));
      controller.close();
    },
  });
}

function inflateStream(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return stream.pipeThrough(new DecompressionStream("deflate-raw") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
}

function checkMethod(entry: ZipEntry): void {
  if (entry.method !== 0 && entry.method !== 8) throw new ZipError(`${entry.name} uses compression method ${entry.method}; only stored and deflate are supported`);
}

/** The entry's decompressed bytes as a stream. */
export function openZipEntry(bytes: Uint8Array, entry: ZipEntry): ReadableStream<Uint8Array> {
  const data = compressedData(bytes, entry);
  checkMethod(entry);
  return entry.method === 0 ? slices(data) : inflateStream(slices(data));
}

/**
 * Inflates raw deflate data as it is read, chunk by chunk, stopping when the reader does. A
 * host may bring its own (Node's zlib, with larger chunks, is about four times as fast as
 * DecompressionStream there); webInflateRaw is the one every host has.
 */
export type InflateRaw = (compressed: Uint8Array) => AsyncIterable<Uint8Array>;

export const webInflateRaw: InflateRaw = (compressed) => chunksOf(inflateStream(slices(compressed)));

async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Stops the inflation when the consumer stops early (a cap): nothing more is inflated.
    void reader.cancel().catch(() => {});
  }
}

/** The entry's decompressed bytes, chunk by chunk; `inflateRaw` inflates a deflated one. */
export async function* zipEntryChunks(bytes: Uint8Array, entry: ZipEntry, inflateRaw: InflateRaw = webInflateRaw): AsyncGenerator<Uint8Array> {
  const data = compressedData(bytes, entry);
  checkMethod(entry);
  if (entry.method === 0) {
    for (let i = 0; i < data.byteLength; i += 1 << 20) yield data.subarray(i, Math.min(i + (1 << 20), data.byteLength));
    return;
  }
  yield* inflateRaw(data);
}
