// Reading a log in small reads into one reused buffer gives the verdict of the whole text:
// the parser copies what it keeps, even a UTF-8 sequence cut by a read boundary.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createVerdictParser, verdictOf } from "../../src/core/verdict/index.ts";
import { feedFile, readLogInto } from "../../src/node/read-log.ts";
import { MAX_LINE } from "../../src/core/verdict/parser.ts";
import { trainingLog } from "../support/bot-harness.ts";

describe("feedFile", () => {
  it("gives the same verdict as the whole text, at any read size, with multi-byte characters cut across reads", () => {
    const text = `é…µ ${trainingLog("a_nccl_cp2_hcp2x1.log")}Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: ünïcödé “failure”\n`;
    const file = join(mkdtempSync(join(tmpdir(), "hcp-read-")), "run.log");
    writeFileSync(file, text);
    const whole = verdictOf(readFileSync(file), { expectHcp: true }, 1);
    for (const size of [1, 3, 7, 4096, 1 << 20]) {
      const parser = createVerdictParser({ expectHcp: true });
      const bytes = feedFile(file, (chunk) => parser.push(chunk), size);
      expect(bytes).toBe(Buffer.byteLength(text));
      expect(parser.end(1)).toEqual(whole);
    }
    expect(whole.cause?.message).toContain("ünïcödé “failure”");
  });
});

describe("readLogInto (reads straight into the parser's buffer)", () => {
  // Long lines (cut at MAX_LINE, an anchor past the cut not seen), a traceback cut by reads,
  // multi-byte characters and a non-ASCII block: what the WebAssembly buffer must keep apart.
  const text =
    `é…µ ${trainingLog("a_nccl_cp2_hcp2x1.log")}` +
    `${"x".repeat(MAX_LINE + 10)} RuntimeError: past the cut\n` +
    `${"✓".repeat(MAX_LINE)} Traceback (most recent call last):\n` +
    `Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: ünïcödé “failure”\n` +
    "[rank1]: iteration        1/      10 | lm loss: 1.0E+00 | number of nan iterations:   0 |";
  const file = join(mkdtempSync(join(tmpdir(), "hcp-read-")), "run.log");
  writeFileSync(file, text);

  for (const anchorScan of ["auto", "regex"] as const) {
    it(`gives the verdict of push (anchorScan ${anchorScan}), with the same scan engine`, () => {
      const pushed = createVerdictParser({ expectHcp: true, anchorScan });
      pushed.push(readFileSync(file));
      const whole = pushed.end(1);
      const parser = createVerdictParser({ expectHcp: true, anchorScan });
      expect(readLogInto(file, parser)).toBe(Buffer.byteLength(text));
      expect(parser.scanEngine).toBe(pushed.scanEngine);
      expect(parser.end(1)).toEqual(whole);
      expect(whole.cause?.message).toContain("ünïcödé “failure”");
      expect(JSON.stringify(whole)).not.toContain("past the cut");
    });
  }

  it("bytes pushed before and strings pushed after a fill continue the same lines", () => {
    const bytes = readFileSync(file);
    const whole = createVerdictParser({ expectHcp: true });
    whole.push(bytes);
    const parser = createVerdictParser({ expectHcp: true });
    parser.push(bytes.subarray(0, 1000));
    let at = 1000;
    const stringsFrom = bytes.lastIndexOf(10, bytes.length - 5000) + 1; // a line start: no UTF-8 sequence cut
    // Reads of 777 bytes (the parser's buffer is larger: a read may fill less than it offers).
    while (at < stringsFrom) {
      at += parser.fill((into) => {
        const n = Math.min(777, into.length, stringsFrom - at);
        into.set(bytes.subarray(at, at + n));
        return n;
      });
    }
    parser.push(new TextDecoder().decode(bytes.subarray(at)));
    expect(parser.end(1)).toEqual(whole.end(1));
  });
});
