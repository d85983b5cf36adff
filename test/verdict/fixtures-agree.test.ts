// Every log in fixtures/ gives byte-identical output in every format whichever way it is read:
// the CLI's reader (reads straight into the WebAssembly buffer), the regex path (runtimes
// without WebAssembly), bytes pushed in 4 KiB and in odd-sized chunks, and the whole text as
// one string. The fast paths are only allowed to be faster, never to see something else.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { createVerdictParser, formatVerdict, type VerdictOptions, type VerdictParser } from "../../src/core/verdict/index.ts";
import { readLogInto } from "../../src/node/read-log.ts";

const root = join(import.meta.dirname, "..", "..");
const fixtures = join(root, "fixtures");
const keys = JSON.parse(readFileSync(join(fixtures, "logs", "real-probe", "keys.json"), "utf8")) as Record<string, string>;

function logsUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? logsUnder(path) : name.endsWith(".log") ? [path] : [];
  });
}

type Reading = (file: string, options: VerdictOptions) => VerdictParser;

const chunked = (size: number, anchorScan: "auto" | "regex"): Reading => (file, options) => {
  const parser = createVerdictParser({ ...options, anchorScan });
  const bytes = readFileSync(file);
  for (let i = 0; i < bytes.length; i += size) parser.push(bytes.subarray(i, i + size));
  return parser;
};

const READINGS: Record<string, Reading> = {
  "regex path, 4 KiB chunks": chunked(4096, "regex"),
  "WebAssembly, 4 KiB chunks": chunked(4096, "auto"),
  "WebAssembly, 997-byte chunks": chunked(997, "auto"),
  "whole text as a string": (file, options) => {
    const parser = createVerdictParser(options);
    parser.push(readFileSync(file, "utf8"));
    return parser;
  },
};

describe("every fixture log reads the same whichever path reads it", () => {
  const logs = logsUnder(fixtures);
  it("finds the fixture logs", () => expect(logs.length).toBeGreaterThanOrEqual(16));

  for (const file of logs) {
    const name = relative(fixtures, file);
    const key = keys[file.split("/").pop()!];
    const optionSets: [VerdictOptions, number | null][] = [
      [{ expectHcp: true }, null],
      [{ expectHcp: false }, 0],
      [{ expectHcp: true, gpu: "H200", worldSize: 4, contextParallelSize: 4, sizes: [2, 2], cpCommType: "a2a+p2p" }, 1],
      ...(key ? [[{ expectHcp: true, probeKey: key }, 0] as [VerdictOptions, number]] : []),
    ];
    it(`${name}: the CLI's reader and every other path, in text, json and markdown`, () => {
      for (const [options, exitCode] of optionSets) {
        const cli = createVerdictParser(options);
        readLogInto(file, cli);
        expect(cli.scanEngine).toBe("wasm");
        const expected = cli.end(exitCode);
        for (const [how, read] of Object.entries(READINGS)) {
          const got = read(file, options).end(exitCode);
          for (const format of ["text", "json", "markdown"] as const) {
            expect(formatVerdict(got, format), `${how}, ${format}, ${JSON.stringify(options)}`).toBe(formatVerdict(expected, format));
          }
        }
      }
    });
  }
});
