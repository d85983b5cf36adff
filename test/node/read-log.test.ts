// Reading a log in small reads into one reused buffer gives the verdict of the whole text:
// the parser copies what it keeps, even a UTF-8 sequence cut by a read boundary.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createVerdictParser, verdictOf } from "../../src/core/verdict/index.ts";
import { feedFile } from "../../src/node/read-log.ts";
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
