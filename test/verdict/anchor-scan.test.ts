// The WebAssembly anchor scanner (src/core/verdict/scan) and the parser's byte path built on it:
// the scanner finds exactly the lines the regex finds, and a verdict is the same whichever way
// the anchored lines were found, however the bytes are chunked.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleAnchorScan, EMBEDDED_PATH, embeddedModuleSource } from "../../scripts/build-wasm.ts";
import { ANCHORS } from "../../src/core/verdict/anchors.ts";
import { BUCKET_GROUPS, WasmAnchorScanner } from "../../src/core/verdict/scan/wasm-scanner.ts";
import { createVerdictParser, MAX_LINE, type Verdict, type VerdictOptions } from "../../src/core/verdict/index.ts";
import { hcpBot, root } from "../support/cli.ts";
import { chunkingSample, REAL_PROBE_KEYS, splitAt } from "./logs.ts";

const run = promisify(execFile);
const logsDir = join(root, "fixtures", "logs");
const encoder = new TextEncoder();

/** The regex path's answer for a block of complete lines: [lineStart, newlineIndex, anchor, newlinesBefore]. */
function regexHits(block: string): number[][] {
  const re = new RegExp(ANCHORS.map((a) => a.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  const out: number[][] = [];
  let pos = 0;
  for (;;) {
    re.lastIndex = pos;
    const m = re.exec(block);
    if (!m) break;
    const start = block.lastIndexOf("\n", m.index - 1) + 1;
    const nl = block.indexOf("\n", m.index);
    out.push([start, nl, ANCHORS.indexOf(m[0] as (typeof ANCHORS)[number]), block.slice(0, start).split("\n").length - 1]);
    pos = nl + 1;
  }
  return out;
}

function wasmHits(scanner: WasmAnchorScanner, block: string): { hits: number[][]; newlines: number; ascii: boolean } {
  scanner.discard(scanner.size);
  const bytes = encoder.encode(block);
  scanner.append(bytes);
  const ascii = scanner.isAscii(0, bytes.length);
  const found = scanner.scan(bytes.length);
  const hits = Array.from({ length: found.count }, (_, i) => Array.from(found.data.subarray(i * 4, i * 4 + 4)));
  return { hits, newlines: found.newlines, ascii };
}

function newScanner(capacity = 1 << 16): WasmAnchorScanner {
  const scanner = WasmAnchorScanner.create(ANCHORS, capacity);
  if (!scanner) throw new Error("WebAssembly SIMD is expected on Node 20");
  return scanner;
}

// Pieces a block is built from: every anchor, near-misses that share their 3-byte prefixes
// (the candidates the scanner must reject), filler, and line ends.
const PIECES = [
  ...ANCHORS,
  ...ANCHORS.map((a) => a.slice(0, -1)),
  ...ANCHORS.map((a) => a.slice(0, 3) + "~"),
  "Error",
  "CONTEXT_PARALLEL_GROUP_L1",
  "x",
  "  ",
  "[rank3]:",
  "\n",
  "\n",
  "\r\n",
  "0123456789abcdef",
];
const blockArb = fc
  .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 20 }).map((s) => s.replace(/[^\x20-\x7e]/g, "."))), { maxLength: 120 })
  .map((parts) => parts.join("") + "\n");

describe("the WebAssembly module", () => {
  it("is what anchor-scan.wat assembles to (run `npm run build:wasm` after changing the .wat)", async () => {
    const wasm = await assembleAnchorScan();
    expect(readFileSync(EMBEDDED_PATH, "utf8")).toBe(embeddedModuleSource(wasm));
  });
});

describe("WasmAnchorScanner", () => {
  const scanner = newScanner();

  it("finds the same lines, anchors and line numbers as the regex on random blocks", () => {
    fc.assert(
      fc.property(blockArb, (block) => {
        const got = wasmHits(scanner, block);
        expect(got.ascii).toBe(true);
        expect(got.hits).toEqual(regexHits(block));
        expect(got.newlines).toBe(block.split("\n").length - 1);
      }),
      { numRuns: 2000 },
    );
  });

  it("finds the same lines whatever the bucket grouping (k % 8, all in one bucket)", () => {
    const byIndex = WasmAnchorScanner.create(ANCHORS, 1 << 16, [])!;
    const oneBucket = WasmAnchorScanner.create(ANCHORS, 1 << 16, [ANCHORS])!;
    fc.assert(
      fc.property(blockArb, (block) => {
        const expected = regexHits(block);
        expect(wasmHits(byIndex, block).hits).toEqual(expected);
        expect(wasmHits(oneBucket, block).hits).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("groups every anchor in BUCKET_GROUPS, 8 buckets at most", () => {
    expect(BUCKET_GROUPS.length).toBeLessThanOrEqual(8);
    expect(BUCKET_GROUPS.flat().sort()).toEqual([...ANCHORS].sort());
  });

  it("finds anchors at every offset of a 16-byte vector, including the block's last bytes", () => {
    for (const anchor of ANCHORS) {
      for (let pad = 0; pad < 40; pad++) {
        const block = "ab\n" + "x".repeat(pad) + anchor + "\n";
        expect(wasmHits(scanner, block).hits).toEqual([[3, block.length - 1, ANCHORS.indexOf(anchor), 1]]);
      }
    }
  });

  it("reports the leftmost anchor of a line, and the first in ANCHORS order at one position", () => {
    const block = "xx context ... iteration\nrrror CONTEXT_PARALLEL_GROUP\n";
    expect(wasmHits(scanner, block).hits).toEqual([
      [0, 24, ANCHORS.indexOf("context"), 0],
      [25, 53, ANCHORS.indexOf("rror"), 1],
    ]);
  });

  it("does not see an anchor in stale bytes past the block's end", () => {
    scanner.discard(scanner.size);
    scanner.append(encoder.encode("nothing here\nTraceback (most recent call last):\n"));
    // Scan only the first line: "Traceback" sits right behind the end, inside the vector loads.
    expect(scanner.scan("nothing here\n".length).count).toBe(0);
  });

  it("tells ASCII from non-ASCII blocks wherever the high byte is", () => {
    for (let at = 0; at < 40; at++) {
      const text = "a".repeat(at) + "é" + "b".repeat(40 - at) + "\n";
      scanner.discard(scanner.size);
      scanner.append(encoder.encode(text));
      expect(scanner.isAscii(0, scanner.size)).toBe(false);
      expect(scanner.isAscii(0, at)).toBe(true);
    }
  });

  it("keeps the unscanned tail at the front after discard", () => {
    scanner.discard(scanner.size);
    scanner.append(encoder.encode("line one\npartial Trace"));
    scanner.discard(9);
    scanner.append(encoder.encode("back here\n"));
    expect(new TextDecoder().decode(scanner.view())).toBe("partial Traceback here\n");
    expect(scanner.scan(scanner.size).count).toBe(1);
  });

  it("refuses more bytes than its capacity with a clear error", () => {
    const small = newScanner(100);
    expect(() => small.append(new Uint8Array(101))).toThrow(/exceed its capacity of 100/);
  });

  it("is null (the parser keeps the regex) when its memory cannot grow", () => {
    expect(WasmAnchorScanner.create(ANCHORS, 2 ** 32)).toBeNull();
  });

  it("refuses anchors it cannot match (shorter than 3 bytes, non-ASCII)", () => {
    expect(() => WasmAnchorScanner.create(["ab"], 100)).toThrow(/3\+ ASCII/);
    expect(() => WasmAnchorScanner.create(["réseau"], 100)).toThrow(/3\+ ASCII/);
  });
});

function verdictOf(chunks: (Uint8Array | string)[], options: Partial<VerdictOptions> = {}, exitCode: number | null = 1): { verdict: Verdict; engine: string } {
  const p = createVerdictParser({ expectHcp: true, gpu: "H100", ...options });
  for (const c of chunks) p.push(c);
  return { verdict: p.end(exitCode), engine: p.scanEngine };
}

// ASCII on purpose (the WebAssembly path is for ASCII blocks), with the multi-line state
// machines (a traceback, the ChildFailedError box) that switch to line-by-line reading.
const ASCII_SAMPLE = chunkingSample(false);
const ASCII_BYTES = encoder.encode(ASCII_SAMPLE);

describe("the parser's byte path (WebAssembly) against its regex path", () => {
  const byRegex = verdictOf([ASCII_BYTES], { anchorScan: "regex" });

  it("takes the WebAssembly path for ASCII bytes, the regex when asked or when fed strings", () => {
    expect(verdictOf([ASCII_BYTES]).engine).toBe("wasm");
    expect(byRegex.engine).toBe("regex");
    expect(verdictOf([ASCII_SAMPLE]).engine).toBe("regex");
    expect(byRegex.verdict.cause).toMatchObject({ kind: "cuda-oom", rank: 2 });
  });

  it("any split of the bytes gives the regex path's verdict", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        expect(verdictOf(splitAt(ASCII_BYTES, cuts)).verdict).toEqual(byRegex.verdict);
      }),
      { numRuns: 300 },
    );
  });

  it("one byte at a time", () => {
    expect(verdictOf(Array.from(ASCII_BYTES, (b) => Uint8Array.of(b))).verdict).toEqual(byRegex.verdict);
  });

  it("strings pushed after bytes continue from the same partial line", () => {
    fc.assert(
      fc.property(fc.nat(ASCII_BYTES.length), fc.nat(ASCII_BYTES.length), (a, b) => {
        const [x, y] = [Math.min(a, b), Math.max(a, b)];
        const chunks = [ASCII_BYTES.subarray(0, x), ASCII_SAMPLE.slice(x, y), ASCII_BYTES.subarray(y)];
        expect(verdictOf(chunks).verdict).toEqual(byRegex.verdict);
      }),
      { numRuns: 200 },
    );
  });

  it("a non-ASCII block falls back to the regex for that block only", () => {
    const mixed = encoder.encode(ASCII_SAMPLE.replace("a warning", "un réglage ✓"));
    const fromBytes = verdictOf(splitAt(mixed, [700, 1400, 2100]));
    expect(fromBytes.verdict).toEqual(verdictOf([new TextDecoder().decode(mixed)]).verdict);
  });

  it.each(readdirSync(logsDir).filter((n) => n.endsWith(".log")))("fixture %s: same verdict in 4 KiB chunks either way", (name) => {
    const bytes = new Uint8Array(readFileSync(join(logsDir, name)));
    const chunks = splitAt(bytes, Array.from({ length: Math.ceil(bytes.length / 4096) }, (_, i) => (i + 1) * 4096));
    for (const exitCode of [0, 1, null]) {
      const wasm = verdictOf(chunks, {}, exitCode);
      expect(wasm.engine).toBe("wasm");
      expect(wasm.verdict).toEqual(verdictOf(chunks, { anchorScan: "regex" }, exitCode).verdict);
    }
  });
});

describe("long lines on the byte path", () => {
  it("a 5 MB line without a newline is cut at MAX_LINE, not buffered; the next line still counts", () => {
    const p = createVerdictParser({ expectHcp: false });
    const chunk = encoder.encode("x".repeat(1024 * 1024));
    for (let i = 0; i < 5; i++) {
      p.push(chunk);
      expect(p.stateSize().carryChars).toBeLessThan(3 * MAX_LINE + 65_536);
    }
    p.push(encoder.encode("\nTraceback (most recent call last):\n"));
    const v = p.end(0);
    expect(v.stats.lines).toBe(2);
    expect(p.scanEngine).toBe("wasm");
  });

  it("an anchor in the head of a long line is seen, one past MAX_LINE is not, as on the string path", () => {
    for (const at of [10, MAX_LINE - 30, MAX_LINE + 10]) {
      const line = "y".repeat(at) + " iteration 1/ 2 | lm loss: 1.0E+00 |" + "z".repeat(3 * MAX_LINE);
      const text = `${line}\nStarting training loop at iteration 0\n`;
      const bytes = encoder.encode(text);
      const fromBytes = verdictOf(splitAt(bytes, [5000, 70_000, 140_000]), {}, 0).verdict;
      expect(fromBytes).toEqual(verdictOf([text], {}, 0).verdict);
      expect(fromBytes.iterations.count).toBe(at < MAX_LINE ? 1 : 0);
    }
  });

  it("at the MAX_LINE boundary (3-byte characters, a sequence cut by the chunk) both paths examine the same lines", () => {
    for (const count of [MAX_LINE - 1, MAX_LINE, MAX_LINE + 1]) {
      // No anchor in the long line: only the long-line cut would examine it.
      const text = "✓".repeat(count) + "€\nnext line with context\n";
      const bytes = encoder.encode(text);
      for (let cut = 3 * MAX_LINE - 4; cut <= 3 * MAX_LINE + 6; cut++) {
        const chunks = splitAt(bytes, [cut, cut + 65_536]);
        const wasm = verdictOf(chunks, {}, 0);
        expect(wasm.verdict).toEqual(verdictOf(chunks, { anchorScan: "regex" }, 0).verdict);
      }
    }
  });

  it("a long line of 3-byte characters is cut at MAX_LINE characters, like the string path", () => {
    const text = "✓".repeat(MAX_LINE + 5) + " Traceback\n" + "✓ ".repeat(100) + "context_parallel_size: 4\n";
    const bytes = encoder.encode(text);
    expect(verdictOf(splitAt(bytes, [1000, 100_000]), {}, 0).verdict).toEqual(verdictOf([text], {}, 0).verdict);
  });
});

describe("without WebAssembly", () => {
  // The real signed probe log (CP=4 [2, 2], 4 ranks) with the key of its run.
  const args = ["verdict", join(logsDir, "real-probe", "s1_gloo_cp4_hcp2x2.v2.log"), "--exit-code", "0", "--probe-key", REAL_PROBE_KEYS["s1_gloo_cp4_hcp2x2.v2.log"]!, "--format", "json"];
  // The CLI exits 1 for a failing verdict (this probe log has no training step); stdout is the JSON.
  const verdictJson = (nodeArgs: string[]) => hcpBot(args, { nodeArgs, env: { ...process.env, NO_COLOR: "1" } });
  // What Cloudflare Workers do: WebAssembly exists, compiling bytes at run time throws.
  // No WebAssembly object at all, as in an embedder without it (Node 24 no longer takes V8's --no-expose-wasm).
  const NO_WASM = "data:text/javascript,delete globalThis.WebAssembly;";
  const forbidCompile =
    "data:text/javascript," +
    encodeURIComponent('WebAssembly.Module = function () { throw new WebAssembly.CompileError("Wasm code generation disallowed by embedder"); };');

  it("the CLI gives the same verdict with no WebAssembly at all, or when compiling it is forbidden (regex path)", async () => {
    const [withWasm, withoutWasm, forbidden] = await Promise.all([verdictJson([]), verdictJson(["--import", NO_WASM]), verdictJson(["--import", forbidCompile])]);
    const a = JSON.parse(withWasm.stdout) as Verdict;
    expect(a.hcp.active).toBe(true);
    expect(JSON.parse(withoutWasm.stdout)).toEqual(a);
    expect(JSON.parse(forbidden.stdout)).toEqual(a);
  });

  it("the switches really take WebAssembly away", async () => {
    const check = "process.stdout.write(typeof WebAssembly === 'undefined' ? 'absent' : String((() => { try { new WebAssembly.Module(new Uint8Array([0,97,115,109,1,0,0,0])); return 'compiles'; } catch { return 'refused'; } })()))";
    expect((await run(process.execPath, ["-e", check])).stdout).toBe("compiles");
    expect((await run(process.execPath, ["--import", NO_WASM, "-e", check])).stdout).toBe("absent");
    expect((await run(process.execPath, ["--import", forbidCompile, "-e", check])).stdout).toBe("refused");
  });
});
