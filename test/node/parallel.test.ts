// Threaded extraction gives exactly the single-threaded report.
import { describe, expect, it } from "vitest";
import { generateCorpus } from "../../bench/corpus.ts";
import { analyze } from "../../src/core/analyze/index.ts";
import { importClosure } from "../../src/core/recipe/python/library.ts";
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
  });

  it("gives every shard the modules its recipes import builders from, wherever those modules landed", async () => {
    const corpus = generateCorpus(140, 20, 20, 7);
    const builder = {
      path: "src/megatron/bridge/recipes/zz_family/common.py",
      text: "def _zz_common(context_parallel_size=1, cp_comm_type=None):\n    cfg = ConfigContainer(model=GPTModelProvider())\n    cfg.model.context_parallel_size = context_parallel_size\n    cfg.model.cp_comm_type = cp_comm_type\n    return cfg\n",
    };
    const kwargs = {
      path: "src/megatron/bridge/recipes/zz_family/h100/zz.py",
      text: "from megatron.bridge.recipes.zz_family.common import _zz_common\n\n\ndef zz_pretrain_config(**user_kwargs):\n    kw = {\"context_parallel_size\": 4, \"cp_comm_type\": \"a2a+p2p\"}\n    return _zz_common(**{**kw, **user_kwargs})\n",
    };
    // The builder first and the recipe last: size-balanced shards put them on different threads.
    const files = [builder, ...corpus.files, kwargs];
    const python = await loadPythonLanguage();
    const analyzer = new ParallelAnalyzer(2);
    try {
      const threaded = await analyzer.analyze(files, { python });
      expect(threaded.findings.some((f) => f.ruleId === "HCP001" && f.location.file === kwargs.path)).toBe(true);
      expect(threaded.findings).toEqual(analyze(files, { python }).findings);
    } finally {
      await analyzer.close();
    }
  });

  it("a shard's library follows re-exports through the shard's own modules (a compatibility module in the same shard)", () => {
    const recipe = { path: "src/megatron/bridge/perf_recipes/fam/b300/fam.py", text: "from megatron.bridge.recipes.fam.fam import fam_config\n\n\ndef fam_perf_config():\n    return fam_config()\n" };
    const alias = { path: "src/megatron/bridge/recipes/fam/fam.py", text: "from megatron.bridge.recipes.fam.h100.fam import (\n    fam_h100_config as fam_config,\n)\n" };
    const h100 = { path: "src/megatron/bridge/recipes/fam/h100/fam.py", text: "def fam_h100_config():\n    return ConfigContainer()\n" };
    expect(importClosure([recipe, alias], [recipe, alias, h100]).map((f) => f.path)).toEqual([h100.path]);
    // A file without a def runs no builder: it needs no library of its own.
    expect(importClosure([alias], [recipe, alias, h100])).toEqual([]);
  });
});
