// The streaming half of the verdict parser: takes a torchrun log chunk by chunk (bytes or
// strings, split anywhere) in constant memory and hands a LineSink the lines that matter.
//
// Hot path: a log is mostly lines that matter to nobody (NCCL/c10d INFO, warnings, per-step
// chatter). A block of complete lines is searched for literal anchors (anchors.ts); only lines
// containing an anchor are cut out and handed on. Every line is handed on only while the sink
// has a multi-line structure open (a traceback, torchrun's failure box, a config dump).
//
// Two ways to find the anchored lines, with identical results:
// - bytes (the CLI, the bot): kept in WebAssembly memory and searched there with SIMD
//   (scan/anchor-scan.wat) before decoding; about 3x faster than the regex.
// - strings, non-ASCII blocks, or runtimes without WebAssembly: one global regex.
import { ANCHOR_GLOBAL, ANCHORS } from "./anchors.ts";
import { MAX_LINE } from "./lines.ts";
import { WasmAnchorScanner, type AnchorHits } from "./scan/wasm-scanner.ts";

/** Size of the byte slices the decoder and the scan work on (see push). */
const SLICE_BYTES = 65_536;
/**
 * The most bytes a partial line of at most MAX_LINE characters takes (3 bytes per UTF-16 unit
 * at most) plus a UTF-8 sequence cut at its end: what the byte path may have to keep.
 */
const MAX_LINE_BYTES = 3 * MAX_LINE + 3;
const EMPTY_BYTES = new Uint8Array(0);

export interface LineSink {
  needEveryLine(): boolean;
  /** `anchor`: the line's first anchor, "" when it is handed on without the scan. */
  line(raw: string, line: number, anchor?: string): void;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** UTF-8 length of `s`; a lone surrogate counts 3 bytes (TextEncoder writes U+FFFD for it). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (isHighSurrogate(c) && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Length of the prefix of `b` that ends on a UTF-8 sequence boundary (looks at most 3 bytes back). */
export function completeUtf8Length(b: Uint8Array): number {
  const len = b.length;
  for (let back = 1; back <= 3 && back <= len; back++) {
    const byte = b[len - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? len - back : len;
  }
  return len;
}

function countNewlines(t: string, from: number, to: number): number {
  let n = 0;
  let i = t.indexOf("\n", from);
  while (i >= 0 && i < to) {
    n++;
    i = t.indexOf("\n", i + 1);
  }
  return n;
}

/** An anchored line of a block: filled in place by a finder (no allocation per line). */
interface FoundLine {
  start: number;
  /** Index of the line's "\n". */
  end: number;
  /** The line's first anchor. */
  anchor: string;
  /** Newlines between the block start and the line. */
  linesBefore: number;
}

/** Finds a block's anchored lines, in order. */
interface AnchorFinder {
  /** The first anchored line starting at or after `from` (a line start): false when none is left. */
  next(from: number, found: FoundLine): boolean;
  /** The block's line count, asked once all lines are handled. */
  blockLines(): number;
}

/** The regex finder (strings, non-ASCII blocks, runtimes without WebAssembly). */
function regexFinder(block: string): AnchorFinder {
  const anchor = ANCHOR_GLOBAL;
  // Newlines are counted as the search moves on, never twice.
  let countedTo = 0;
  let counted = 0;
  const countTo = (to: number) => {
    counted += countNewlines(block, countedTo, to);
    countedTo = to;
    return counted;
  };
  return {
    next(from, found) {
      anchor.lastIndex = from;
      const m = anchor.exec(block);
      if (!m) return false;
      found.start = m.index === 0 ? 0 : block.lastIndexOf("\n", m.index - 1) + 1;
      found.end = block.indexOf("\n", m.index);
      found.anchor = m[0];
      found.linesBefore = countTo(found.start);
      return true;
    },
    blockLines: () => countTo(block.length),
  };
}

/** The lines the WebAssembly scanner found in the block's bytes (ASCII: byte offsets are string offsets). */
function hitsFinder(hits: AnchorHits): AnchorFinder {
  const data = hits.data;
  let h = 0;
  return {
    next(from, found) {
      while (h < hits.count && data[h * 4]! < from) h++;
      if (h === hits.count) return false;
      found.start = data[h * 4]!;
      found.end = data[h * 4 + 1]!;
      found.anchor = ANCHORS[data[h * 4 + 2]!]!;
      found.linesBefore = data[h * 4 + 3]!;
      h++;
      return true;
    },
    blockLines: () => hits.newlines,
  };
}

export class LogStream {
  private readonly decoder = new TextDecoder("utf-8");
  /** Bytes of a UTF-8 sequence cut by the chunk boundary (at most 3), joined to the next chunk. */
  private pendingBytes: Uint8Array | null = null;
  // Bytes go to the WebAssembly scanner's buffer (byte path) when it is available and the
  // stream started with bytes; otherwise they are decoded into `carry`.
  private scanner: WasmAnchorScanner | null = null;
  private pathChosen = false;
  private wasmScanned = false;
  private endsWithHighSurrogate = false;
  private carry = "";
  private skippingLongLine = false;
  private linesDone = 0;
  private bytes = 0;
  // The block being scanned and where the current line starts in it, so a traceback can look
  // at the line before it ("Exception ignored in: …") without every line being examined.
  private curBlock = "";
  private curLineStart = 0;
  private lastLineOfPrevBlock = "";
  /** What fill reads into when there is no scanner buffer (regex path). */
  private readBuffer: Uint8Array | null = null;
  private readonly found: FoundLine = { start: 0, end: 0, anchor: "", linesBefore: 0 };
  private sink: LineSink | null = null;

  constructor(private readonly anchorScan: "auto" | "regex") {}

  /** Set once, before the first push (the sink needs previousLine, so it is made after the stream). */
  connect(sink: LineSink): void {
    this.sink = sink;
  }

  get scanEngine(): "wasm" | "regex" {
    return this.wasmScanned ? "wasm" : "regex";
  }

  get stats(): { bytes: number; lines: number } {
    return { bytes: this.bytes, lines: this.linesDone };
  }

  /** Characters held for the partial last line. */
  get carried(): number {
    return this.carry.length + (this.scanner?.size ?? 0);
  }

  /** The physical line before the one being handed on. */
  previousLine(): string {
    if (this.curLineStart === 0) return this.lastLineOfPrevBlock;
    const start = this.curBlock.lastIndexOf("\n", this.curLineStart - 2) + 1;
    return this.curBlock.slice(start, this.curLineStart - 1);
  }

  push(chunk: string | Uint8Array): void {
    if (!this.pathChosen) this.choosePath(chunk);
    if (typeof chunk === "string") {
      this.leaveBytePath(false);
      if (this.pendingBytes) {
        this.feedText(this.decoder.decode(this.pendingBytes));
        this.pendingBytes = null;
      }
      this.bytes += utf8Length(chunk);
      // A surrogate pair cut between two chunks is one 4-byte character, not two lone halves.
      if (this.endsWithHighSurrogate && isLowSurrogate(chunk.charCodeAt(0))) this.bytes -= 2;
      this.endsWithHighSurrogate = chunk.length > 0 ? isHighSurrogate(chunk.charCodeAt(chunk.length - 1)) : this.endsWithHighSurrogate;
      this.feedText(chunk);
    } else if (this.scanner) {
      this.bytes += chunk.byteLength;
      for (let at = 0; at < chunk.length; at += SLICE_BYTES) this.feedBytes(chunk.subarray(at, at + SLICE_BYTES), this.scanner);
    } else {
      this.bytes += chunk.byteLength;
      // Large chunks are fed in slices: decoding, flattening the carried line and regex
      // scanning are all markedly faster on strings of tens of KB than on MB-sized ones.
      for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
        this.feedText(this.decodeBytes(at === 0 && chunk.length <= SLICE_BYTES ? chunk : chunk.subarray(at, at + SLICE_BYTES)));
      }
    }
  }

  /**
   * Lets `read` write the next bytes of the log straight into the buffer they are scanned in
   * (on the byte path, WebAssembly memory: no copy between the read and the scan); the same as
   * push of those bytes. `read` writes at most `into.length` bytes and returns how many (0: the
   * end of the log); fill returns that count.
   */
  fill(read: (into: Uint8Array) => number): number {
    if (!this.pathChosen) this.choosePath(EMPTY_BYTES);
    const scanner = this.scanner;
    if (!scanner) {
      const into = (this.readBuffer ??= new Uint8Array(SLICE_BYTES));
      const n = read(into);
      if (n > 0) this.push(into.subarray(0, n));
      return n;
    }
    const n = read(scanner.spare(SLICE_BYTES));
    if (n > 0) {
      this.bytes += n;
      scanner.commit(n);
      this.scanBuffered(scanner);
    }
    return n;
  }

  /** Hands on what is left (a last line without "\n"); returns the line count. */
  finish(): number {
    this.leaveBytePath(true);
    if (this.pendingBytes) {
      this.feedText(this.decoder.decode(this.pendingBytes)); // a sequence cut by the end of the log: U+FFFD
      this.pendingBytes = null;
    }
    if (this.carry.length > 0 && !this.skippingLongLine) {
      let last = this.carry;
      this.carry = "";
      if (last.endsWith("\r")) last = last.replace(/\r+$/, "");
      this.sink!.line(last, this.linesDone + 1);
      this.linesDone++;
    } else if (this.skippingLongLine) this.linesDone++;
    this.carry = "";
    return this.linesDone;
  }

  /** Hands on the line at `pos` of the current block; returns where the next line starts. */
  private nextLine(block: string, pos: number): number {
    const nl = block.indexOf("\n", pos);
    this.curLineStart = pos;
    this.sink!.line(block.slice(pos, nl), this.linesDone + 1);
    this.linesDone++;
    return nl + 1;
  }

  /**
   * Hands on the lines of `block` (complete lines, ends with "\n") that `finder` reports as
   * holding an anchor, and every line while the sink needs them all (anchored lines inside
   * those are then skipped by the finder's `from`).
   */
  private scanBlock(block: string, finder: AnchorFinder): void {
    const sink = this.sink!;
    const found = this.found;
    this.curBlock = block;
    const base = this.linesDone;
    const len = block.length;
    let pos = 0;
    while (pos < len) {
      if (sink.needEveryLine()) {
        pos = this.nextLine(block, pos);
        continue;
      }
      if (!finder.next(pos, found)) break;
      this.linesDone = base + found.linesBefore;
      this.curLineStart = found.start;
      sink.line(block.slice(found.start, found.end), this.linesDone + 1, found.anchor);
      this.linesDone++;
      pos = found.end + 1;
    }
    this.linesDone = base + finder.blockLines();
  }

  private finishBlock(block: string): void {
    this.lastLineOfPrevBlock = block.slice(block.lastIndexOf("\n", block.length - 2) + 1, -1);
    this.curBlock = "";
    this.curLineStart = 0;
  }

  /** Byte path: buffer the bytes, then scan and hand on the complete lines among them. */
  private feedBytes(chunk: Uint8Array, buffer: WasmAnchorScanner): void {
    buffer.append(chunk);
    this.scanBuffered(buffer);
  }

  /** Scans and hands on the complete lines among the buffered bytes (after an append). */
  private scanBuffered(buffer: WasmAnchorScanner): void {
    if (this.skippingLongLine) {
      const nl = buffer.firstNewline();
      if (nl < 0) {
        buffer.discard(buffer.size);
        return;
      }
      buffer.discard(nl + 1);
      this.skippingLongLine = false;
      this.linesDone++;
    }
    const lastNl = buffer.lastNewline();
    if (lastNl >= 0) {
      const end = lastNl + 1;
      const block = this.decoder.decode(buffer.view(0, end));
      if (buffer.isAscii(0, end)) {
        this.scanBlock(block, hitsFinder(buffer.scan(end)));
        this.wasmScanned = true;
      } else this.scanBlock(block, regexFinder(block));
      this.finishBlock(block);
      buffer.discard(end);
    }
    if (buffer.size > MAX_LINE) {
      // Maybe a line longer than MAX_LINE characters: as feedText, hand on its head and drop
      // the rest up to its newline.
      const tail = buffer.view();
      const head = this.decoder.decode(tail.subarray(0, completeUtf8Length(tail)));
      if (head.length > MAX_LINE) {
        this.sink!.line(head, this.linesDone + 1);
        buffer.discard(buffer.size);
        this.skippingLongLine = true;
      }
    }
  }

  /** Hands the byte path's partial line to the string path (a string was pushed after bytes). */
  private leaveBytePath(atEnd: boolean): void {
    if (!this.scanner) return;
    const tail = this.scanner.view();
    const cut = atEnd ? tail.length : completeUtf8Length(tail);
    this.carry = this.decoder.decode(tail.subarray(0, cut));
    this.pendingBytes = cut < tail.length ? tail.slice(cut) : null;
    this.scanner = null;
  }

  private feedText(text: string): void {
    if (text.length === 0) return;
    if (this.skippingLongLine) {
      const nl = text.indexOf("\n");
      if (nl < 0) return;
      text = text.slice(nl + 1);
      this.skippingLongLine = false;
      this.linesDone++;
    }
    const buf = this.carry.length > 0 ? this.carry + text : text;
    const lastNl = buf.lastIndexOf("\n");
    if (lastNl < 0) {
      this.carry = buf;
    } else {
      const block = buf.slice(0, lastNl + 1);
      this.carry = buf.slice(lastNl + 1);
      this.scanBlock(block, regexFinder(block));
      this.finishBlock(block);
    }
    if (this.carry.length > MAX_LINE) {
      // A line longer than MAX_LINE: hand on its head now, drop the rest up to its newline.
      this.sink!.line(this.carry, this.linesDone + 1);
      this.carry = "";
      this.skippingLongLine = true;
    }
  }

  /**
   * Decodes complete UTF-8 sequences and keeps a cut one for the next chunk. Node 20's
   * TextDecoder is about 2.5x slower with {stream: true} than without, so the boundary is
   * handled here and every call is a plain decode (identical output for any split).
   */
  private decodeBytes(chunk: Uint8Array): string {
    let bytesIn = chunk;
    if (this.pendingBytes) {
      bytesIn = new Uint8Array(this.pendingBytes.length + chunk.length);
      bytesIn.set(this.pendingBytes);
      bytesIn.set(chunk, this.pendingBytes.length);
      this.pendingBytes = null;
    }
    const cut = completeUtf8Length(bytesIn);
    if (cut < bytesIn.length) this.pendingBytes = bytesIn.slice(cut);
    return cut === 0 ? "" : this.decoder.decode(cut === bytesIn.length ? bytesIn : bytesIn.subarray(0, cut));
  }

  /** The byte path is taken when the first chunk is bytes and WebAssembly is usable. */
  private choosePath(first: string | Uint8Array): void {
    this.pathChosen = true;
    if (typeof first !== "string" && this.anchorScan === "auto") this.scanner = WasmAnchorScanner.create(ANCHORS, MAX_LINE_BYTES + SLICE_BYTES);
  }
}
