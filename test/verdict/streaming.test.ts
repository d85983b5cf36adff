// Streaming: any split of the input gives the same verdict, and a long stream keeps the
// parser's state bounded.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createVerdictParser, HCP_PROBE_PREFIX, HCP_PROBE_VERSION, formatProbeLine, parseProbeLine, type Verdict } from "../../src/core/verdict/index.ts";
import { MAC_CONTEXT } from "../../src/core/verdict/probe.ts";
import { backgroundLines, CORPUS_PROBE_KEY, SyntheticLog } from "../../bench/verdict-corpus.ts";
import { chunkingSample, PROBE_KEY, probeLines, splitAt } from "./logs.ts";

const encoder = new TextEncoder();

// Multi-byte characters (é: 2 bytes, ✓: 3 bytes, 𝜆: 4 bytes) and CRLF pairs give the splits
// something to cut through; the OOM traceback and box give the multi-line state machines.
const SAMPLE = chunkingSample(true);
const SAMPLE_BYTES = encoder.encode(SAMPLE);

function runChunks(chunks: Uint8Array[], exitCode: number | null = 1): Verdict {
  const p = createVerdictParser({ expectHcp: true, gpu: "H100", probeKey: PROBE_KEY });
  for (const c of chunks) p.push(c);
  return p.end(exitCode);
}

describe("chunking invariance", () => {
  const whole = runChunks([SAMPLE_BYTES]);

  it("the sample decides on the OOM of rank 2", () => {
    expect(whole.cause).toMatchObject({ kind: "cuda-oom", rank: 2 });
    expect(whole.iterations.count).toBe(3);
    expect(whole.hcp.active).toBe(true);
  });

  it("any split into byte chunks (inside UTF-8 sequences and CRLF pairs) gives the same verdict", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        expect(runChunks(splitAt(SAMPLE_BYTES, cuts))).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it("one byte at a time", () => {
    expect(runChunks(Array.from(SAMPLE_BYTES, (b) => Uint8Array.of(b)))).toEqual(whole);
  });

  it("string chunks split anywhere (even between surrogate halves) give the same verdict", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 30 }), (cuts) => {
        const points = [...new Set(cuts.map((c) => c % (SAMPLE.length + 1)))].sort((a, b) => a - b);
        const p = createVerdictParser({ expectHcp: true, gpu: "H100", probeKey: PROBE_KEY });
        let prev = 0;
        for (const at of [...points, SAMPLE.length]) {
          p.push(SAMPLE.slice(prev, at));
          prev = at;
        }
        expect(p.end(1)).toEqual(whole);
      }),
      { numRuns: 100 },
    );
  });

  it("a surrogate pair cut between two string chunks counts as one 4-byte character", () => {
    const p = createVerdictParser({ expectHcp: false });
    p.push("a\uD835");
    p.push("\uDF06b\n");
    expect(p.end(0).stats.bytes).toBe(encoder.encode("a\uD835\uDF06b\n").length);
    const lone = createVerdictParser({ expectHcp: false });
    lone.push("a\uD835");
    lone.push("b\n");
    expect(lone.end(0).stats.bytes).toBe(encoder.encode("a\uD835b\n").length);
  });

  it("a UTF-8 sequence cut by the end of the log becomes U+FFFD, not an exception", () => {
    const p = createVerdictParser({ expectHcp: false });
    p.push(encoder.encode("abc ✓").subarray(0, 5));
    expect(p.end(0).stats.lines).toBe(1);
  });
});

describe("bounded memory on a long stream", () => {
  it("200 MB generated on the fly: state stays small, the heap does not grow with the input", () => {
    const log = new SyntheticLog(backgroundLines(), 10_000_000);
    const p = createVerdictParser({ expectHcp: true, gpu: "H200", probeKey: CORPUS_PROBE_KEY, worldSize: 4, contextParallelSize: 4, sizes: [2, 2] });
    p.push(log.header());
    const gc = (globalThis as { gc?: () => void }).gc;
    let heapAfterWarmup = 0;
    let maxHeap = 0;
    let total = 0;
    for (let i = 0; total < 200 * 1024 * 1024; i++) {
      const chunk = encoder.encode(log.block(1024 * 1024));
      total += chunk.length;
      // Cut the chunk in the middle of a line to exercise the carry.
      p.push(chunk.subarray(0, 1000));
      p.push(chunk.subarray(1000));
      const size = p.stateSize();
      expect(size.carryChars).toBeLessThan(70_000);
      expect(size.tracebacks).toBe(0);
      if (i === 10) {
        gc?.();
        heapAfterWarmup = process.memoryUsage().heapUsed;
      }
      if (i > 10 && i % 20 === 0) {
        gc?.();
        maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
      }
    }
    p.push(log.footer());
    const v = p.end(0);
    expect(v.status).toBe("pass");
    expect(v.iterations.count).toBeGreaterThan(50_000);
    expect(v.evidence.length).toBeLessThanOrEqual(50);
    expect(JSON.stringify(v).length).toBeLessThan(40_000);
    // Without --expose-gc the measurement is noisy; 64 MB of slack is still far below 200 MB.
    expect(maxHeap - heapAfterWarmup).toBeLessThan(64 * 1024 * 1024);
  });

  it("a single 5 MB line without a newline is cut at MAX_LINE, not buffered", () => {
    const p = createVerdictParser({ expectHcp: false });
    const chunk = "x".repeat(1024 * 1024);
    for (let i = 0; i < 5; i++) {
      p.push(chunk);
      expect(p.stateSize().carryChars).toBeLessThan(70_000 + chunk.length);
    }
    p.push("\n");
    expect(p.end(0).stats.lines).toBe(1);
  });
});

describe("probe line format", () => {
  it("formatProbeLine round-trips through parseProbeLine, also after a rank prefix and merged text", () => {
    const line = probeLines(true)[0]!;
    expect(line.startsWith("HCP-PROBE {")).toBe(true);
    const parsed = parseProbeLine(`[rank0]: ${line}[probe rank 1] merged output`);
    expect(parsed).toMatchObject({ ok: true, report: { rank: 0, levels: [{ level: 0 }, { level: 1 }] } });
  });

  it("rejects malformed reports with a note, not a crash", () => {
    expect(parseProbeLine("HCP-PROBE {not json}")).toMatchObject({ ok: false });
    expect(parseProbeLine('HCP-PROBE {"v":3,"rank":0,"levels":null}')).toMatchObject({ ok: false });
    const v = createVerdictParser({ expectHcp: true });
    v.push("HCP-PROBE {\"v\":1}\n");
    expect(v.end(0).notes.some((n) => n.includes("malformed HCP-PROBE"))).toBe(true);
  });

  it("the runner's probe (sitecustomize.py) prints the same prefix and version", () => {
    const probe = readFileSync(join(import.meta.dirname, "..", "..", "src", "gpu", "probe", "sitecustomize.py"), "utf8");
    expect(probe).toContain(`_PREFIX = "${HCP_PROBE_PREFIX}"`);
    expect(probe).toContain(`_VERSION = ${HCP_PROBE_VERSION}`);
    expect(probe).toContain('json.dumps(report, separators=(",", ":"))');
    expect(probe).toContain(`_MAC_CONTEXT = b${JSON.stringify(MAC_CONTEXT)}`);
    expect(formatProbeLine({ v: 2, rank: 3, levels: null })).toBe('HCP-PROBE {"v":2,"rank":3,"levels":null}');
  });
});
