// Threaded extraction gives exactly the single-threaded report.
import { describe, expect, it } from "vitest";
import { generateCorpus } from "../../bench/corpus.ts";
import { analyze } from "../../src/core/analyze/index.ts";
import { ParallelAnalyzer, shard } from "../../src/node/parallel.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

describe("ParallelAnalyzer", () => {
  it("shards by size and keeps every file once", () => {
    const files = [5, 1, 9, 3, 7, 2].map((n) => ({ text: "x".repeat(n) }));
    const shards = shard(files, 2);
    expect(shards.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
    const sizes = shards.map((s) => s.reduce((n, i) => n + files[i]!.text.length, 0));
    expect(Math.abs(sizes[0]! - sizes[1]!)).toBeLessThanOrEqual(2);
    expect(shard(files, 10).length).toBe(6);
  });

  it("finds exactly what one thread finds, on a corpus large enough to use the workers", async () => {
    const corpus = generateCorpus(140, 20, 20, 7);
    expect(corpus.bytes).toBeGreaterThan(2_000_000);
    const python = await loadPythonLanguage();
    const analyzer = new ParallelAnalyzer(2);
    try {
      const threaded = await analyzer.analyze(corpus.files, { python });
      const single = analyze(corpus.files, { python });
      expect(threaded.findings.length).toBeGreaterThan(50);
      expect(threaded.findings).toEqual(single.findings);
      expect(threaded.units).toEqual(single.units);
      expect(threaded.diagnostics).toEqual(single.diagnostics);
    } finally {
      await analyzer.close();
    }
  }, 60_000);
});
