// Byte buffer + WebAssembly anchor scanner for the verdict parser's fast path.
//
// The parser appends raw log bytes here; the partial last line stays in WebAssembly memory
// between appends, so a block of complete lines is always contiguous and can be scanned in
// place (anchor-scan.wat) before any of it is decoded. Runtimes that forbid compiling
// WebAssembly at run time (Cloudflare Workers) or lack SIMD get `null` from
// WasmAnchorScanner.create and the parser keeps its regex path.
import { ANCHOR_SCAN_WASM_BASE64 } from "./anchor-scan.wasm.ts";

interface AnchorScanExports {
  memory: WebAssembly.Memory;
  isAscii(from: number, end: number): number;
  scan(from: number, end: number, newlines: number, tables: number, anchors: number, hits: number, max: number, scratch: number): number;
  scannedNewlines: WebAssembly.Global;
}

const PAGE = 65_536;
// Memory layout (see anchor-scan.wat for what each area holds).
const TABLES = 0;
const ANCHOR_BYTES = 512;
const SCRATCH = 1024;
const INPUT = 2048;
/** Bytes readable past the input's end: the scan's vector loads look up to 18 bytes ahead. */
const INPUT_PADDING = 64;
/** A line holding an anchor takes at least this many bytes (3-byte anchor + "\n"). */
const MIN_HIT_LINE_BYTES = 4;
const HIT_INTS = 4;
const BUCKETS = 8;
const MAX_ANCHORS = 32;

/**
 * Anchors that share a Teddy bucket. A bucket accepts every mix of its members' prefix
 * nibbles, so the grouping decides how many false candidates get verified (and costs up to
 * 40 % of the verdict's time). This one is what `node --import tsx scripts/anchor-buckets.ts`
 * finds on the benchmark corpus: 75k candidate positions in 12 MB, against 228k with anchor k
 * in bucket k % 8. An anchor missing here goes to bucket k % 8: still correct, maybe slower.
 */
export const BUCKET_GROUPS: readonly (readonly string[])[] = [
  ["context"],
  ["HCP-PROBE", "HyperCommGrid", "by watchdog", "cp_comm_type"],
  ["rror"],
  ["CONTEXT_PARALLEL_GROUP", "Traceback", "training is done"],
  ["NaN"],
  ["TIMEOUT(ms)", "Watchdog caught"],
  ["iteration"],
  ["thread terminated", "onfigurat"],
];

export function bucketOf(anchor: string, index: number, groups: readonly (readonly string[])[] = BUCKET_GROUPS): number {
  const group = groups.findIndex((g) => g.includes(anchor));
  return group >= 0 && group < BUCKETS ? group : index % BUCKETS;
}

let compiled: WebAssembly.Module | null | undefined;

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function anchorScanModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = typeof WebAssembly === "object" ? new WebAssembly.Module(decodeBase64(ANCHOR_SCAN_WASM_BASE64)) : null;
    } catch {
      compiled = null; // no SIMD, or code generation from bytes is disallowed
    }
  }
  return compiled;
}

/**
 * Hands in the scanner precompiled, for runtimes that cannot compile WebAssembly from bytes
 * (Cloudflare Workers imports the .wasm as a module instead); they then get the fast path too.
 */
export function useAnchorScanModule(module: WebAssembly.Module): void {
  compiled = module;
}

/** Whether this runtime scans with WebAssembly (else the parser takes its regex path). */
export function anchorScanAvailable(): boolean {
  return anchorScanModule() !== null;
}

/** Lines found by one scan; positions are relative to the buffer start. */
export interface AnchorHits {
  readonly count: number;
  /** Newlines in the scanned block: its line count. */
  readonly newlines: number;
  /** 4 ints per hit: line start, index of its "\n", anchor index, newlines before the line. */
  readonly data: Int32Array;
}

export class WasmAnchorScanner {
  private length = 0;
  private readonly memoryBytes: Uint8Array;
  private readonly hitInts: Int32Array;
  private readonly hitsAt: number;
  private readonly maxHits: number;

  private constructor(
    private readonly wasm: AnchorScanExports,
    private readonly anchorCount: number,
    /** Most bytes the buffer holds at once (kept tail + one append). */
    readonly capacity: number,
  ) {
    this.maxHits = Math.ceil(capacity / MIN_HIT_LINE_BYTES) + 1;
    this.hitsAt = align(INPUT + capacity + INPUT_PADDING, 16);
    const needed = this.hitsAt + this.maxHits * HIT_INTS * 4;
    const have = wasm.memory.buffer.byteLength;
    if (needed > have) wasm.memory.grow(Math.ceil((needed - have) / PAGE));
    this.memoryBytes = new Uint8Array(wasm.memory.buffer);
    this.hitInts = new Int32Array(wasm.memory.buffer, this.hitsAt, this.maxHits * HIT_INTS);
  }

  static create(anchors: readonly string[], capacity: number, groups = BUCKET_GROUPS): WasmAnchorScanner | null {
    const module = anchorScanModule();
    if (!module) return null;
    let scanner: WasmAnchorScanner;
    try {
      const wasm = new WebAssembly.Instance(module, {}).exports as unknown as AnchorScanExports;
      scanner = new WasmAnchorScanner(wasm, anchors.length, capacity);
    } catch (error) {
      if (error instanceof RangeError || error instanceof WebAssembly.RuntimeError || error instanceof WebAssembly.LinkError) return null; // no memory for one more instance: the regex path still works
      throw error;
    }
    scanner.writeTables(anchors, groups);
    return scanner;
  }

  /** Nibble tables and anchor records (layout in anchor-scan.wat); buckets from BUCKET_GROUPS. */
  private writeTables(anchors: readonly string[], groups: readonly (readonly string[])[]): void {
    if (anchors.length > MAX_ANCHORS) throw new Error(`at most ${MAX_ANCHORS} anchors`);
    const mem = this.memoryBytes;
    const view = new DataView(mem.buffer);
    let at = ANCHOR_BYTES;
    anchors.forEach((anchor, k) => {
      const bytes = new TextEncoder().encode(anchor);
      if (bytes.length < 3 || bytes.length !== anchor.length) throw new Error(`anchor ${JSON.stringify(anchor)}: needs 3+ ASCII characters`);
      const bucket = 1 << bucketOf(anchor, k, groups);
      for (let offset = 0; offset < 3; offset++) {
        const byte = bytes[offset]!;
        mem[TABLES + 32 * offset + (byte & 15)]! |= bucket;
        mem[TABLES + 32 * offset + 16 + (byte >> 4)]! |= bucket;
      }
      const record = TABLES + 96 + 12 * k;
      view.setInt32(record, at, true);
      view.setInt32(record + 4, bytes.length, true);
      view.setInt32(record + 8, bucket, true);
      mem.set(bytes, at);
      at += bytes.length;
    });
    if (at > SCRATCH) throw new Error("anchors too long");
  }

  /** Bytes buffered (the kept tail plus what was appended since). */
  get size(): number {
    return this.length;
  }

  /** Appends bytes; the caller keeps the buffer under `capacity` (tail + one slice). */
  append(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.capacity) throw new Error(`anchor scanner: ${this.length + bytes.length} bytes exceed its capacity of ${this.capacity}`);
    this.memoryBytes.set(bytes, INPUT + this.length);
    this.length += bytes.length;
  }

  /**
   * Room for up to `bytes` more bytes after the buffered ones, to be written in place and then
   * made part of the buffer by commit (valid until the next append, commit or discard).
   */
  spare(bytes: number): Uint8Array {
    const room = Math.min(bytes, this.capacity - this.length);
    if (room <= 0) throw new Error(`anchor scanner: no room past ${this.length} bytes (capacity ${this.capacity})`);
    return this.memoryBytes.subarray(INPUT + this.length, INPUT + this.length + room);
  }

  /** Makes the `bytes` written into spare() part of the buffer. */
  commit(bytes: number): void {
    if (bytes < 0 || this.length + bytes > this.capacity) throw new Error(`anchor scanner: cannot commit ${bytes} bytes past ${this.length} (capacity ${this.capacity})`);
    this.length += bytes;
  }

  /** A view of buffered bytes [from, to); valid until the next append or discard. */
  view(from = 0, to = this.length): Uint8Array {
    return this.memoryBytes.subarray(INPUT + from, INPUT + to);
  }

  lastNewline(): number {
    return this.length === 0 ? -1 : this.view().lastIndexOf(10);
  }

  firstNewline(): number {
    return this.view().indexOf(10);
  }

  isAscii(from: number, to: number): boolean {
    return this.wasm.isAscii(INPUT + from, INPUT + to) === 1;
  }

  /** Scans [0, end), which must hold complete lines. The hits stay valid until the next scan. */
  scan(end: number): AnchorHits {
    const count = this.wasm.scan(INPUT, INPUT + end, 0, TABLES, this.anchorCount, this.hitsAt, this.maxHits, SCRATCH);
    if (count >= this.maxHits) throw new Error("anchor scanner: hits area overflowed");
    return { count, newlines: this.wasm.scannedNewlines.value as number, data: this.hitInts };
  }

  /** Drops [0, upTo) and moves the rest to the front. */
  discard(upTo: number): void {
    if (upTo >= this.length) this.length = 0;
    else {
      this.memoryBytes.copyWithin(INPUT, INPUT + upTo, INPUT + this.length);
      this.length -= upTo;
    }
  }
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}
