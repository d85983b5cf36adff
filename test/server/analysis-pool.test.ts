// The server's analysis thread gives exactly the report the calling thread gives, for the
// real fixture recipes and the options reviews and checks pass (rules selected, severities,
// GPUs per node, imported library modules).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { createAnalysisPool } from "../../src/server/analysis-pool.ts";
import { adviseReplyMarkdown, adviseReplySlack } from "../../src/core/render/layout/advice.ts";
import { AnalysisWorker } from "../../src/node/parallel.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";
import { root } from "../support/cli.ts";

function filesUnder(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort()
    .map((p) => ({ path: relative(root, p), text: readFileSync(p, "utf8") }));
}

describe("the analysis thread", () => {
  it("reports exactly what the calling thread reports", async () => {
    const files = filesUnder(join(root, "fixtures", "recipes"));
    expect(files.length).toBeGreaterThan(10);
    const [library, analyzed] = [files.filter((f) => f.path.endsWith("common.py")), files.filter((f) => !f.path.endsWith("common.py"))];
    const python = await loadPythonLanguage();
    const pool = createAnalysisPool(1);
    try {
      const cases = [{}, { gpusPerNode: 4, gpusPerNodeSource: "gpus_per_node in .github/hcp-bot.yml", library }, { select: ["HCP001", "HCP002"], severity: { HCP002: "warning" as const } }, { ignore: ["HCP001"] }];
      for (const options of cases) {
        const threaded = await pool.analyze(analyzed, options);
        const here = analyze(analyzed, { ...options, python });
        expect(threaded).toEqual(here);
      }
      expect((await pool.analyze(analyzed)).findings.length).toBeGreaterThan(5);
    } finally {
      await pool.close();
    }
    await expect(pool.analyze(files)).rejects.toThrow(/closed/);
  });

  it("replaces a thread that died: what it held fails, the next analysis runs on a new thread", async () => {
    const files = filesUnder(join(root, "fixtures", "recipes")).filter((f) => !f.path.endsWith("common.py"));
    const here = analyze(files, { python: await loadPythonLanguage() });
    const started: AnalysisWorker[] = [];
    const pool = createAnalysisPool(1, () => {
      const w = new AnalysisWorker();
      started.push(w);
      return w;
    });
    try {
      expect(await pool.analyze(files)).toEqual(here);
      expect(started).toHaveLength(1);
      // The thread dies with an analysis in hand (as if it ran out of memory).
      // (A large batch, so it is still in hand when the thread is stopped.)
      const many = Array.from({ length: 10 }, (_, k) => files.map((f) => ({ ...f, path: `copy${k}/${f.path}` }))).flat();
      const held = pool.analyze(many);
      await started[0]!.terminate();
      await expect(held).rejects.toThrow(/analysis worker/);
      expect(started[0]!.dead).toBe(true);
      expect(await pool.analyze(files)).toEqual(here);
      expect(started).toHaveLength(2);
      expect(started[1]!.dead).toBe(false);
    } finally {
      await pool.close();
    }
  });

  it("renders /hcp advise replies on its thread, as the calling thread renders them", async () => {
    const started: AnalysisWorker[] = [];
    const pool = createAnalysisPool(1, () => {
      const w = new AnalysisWorker();
      started.push(w);
      return w;
    });
    try {
      // The largest layout the advisor takes (65,536 GPUs), and one it refuses.
      for (const command of [{ kind: "advise", cp: 8, tp: 2, nodes: 2 }, { kind: "advise", cp: 8, domainGpus: 64, domain: "node", nodes: 1024 }, { kind: "advise", cp: 8, domainGpus: 1024, domain: "node", nodes: 4096 }] as const) {
        expect(await pool.advise.markdown(command)).toBe(adviseReplyMarkdown(command));
        expect(await pool.advise.slack(command)).toEqual(adviseReplySlack(command));
      }
      expect(started).toHaveLength(1);
      expect(started[0]!.dead).toBe(false);
    } finally {
      await pool.close();
    }
  });
});
