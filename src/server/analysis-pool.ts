// The server's analysis off the thread that answers requests: reviews, pre-flight checks and
// Slack checks parse recipes with tree-sitter and run the rules, and on the answering thread
// every webhook and Slack ack that arrived meanwhile waited behind them (and behind the
// grammar's first load and compile). Here they run on worker threads with their own grammar;
// the answering thread only posts the files and receives the report. `/hcp advise` replies are
// rendered there too (the largest layout the advisor takes costs a few hundred milliseconds).
// A thread that dies fails what it held (the job is retried, as after any failure) and is
// replaced on the next analysis.
import { inThreadAnalyzer, type Analyzer, type AnalyzerOptions } from "../core/analyze/analyzer.ts";
import type { SourceFile } from "../core/model/source.ts";
import { inThreadAdvise, type AdviseReplies } from "../core/render/layout/advice.ts";
import { AnalysisWorker } from "../node/parallel.ts";
import { loadPythonLanguage } from "../node/treesitter.ts";
import { serverUpstreamIndex } from "../node/upstream-index.ts";

export interface AnalysisPool {
  analyze: Analyzer;
  /** `/hcp advise` replies, rendered on the same threads. */
  advise: AdviseReplies;
  /** Starts the threads now (they load the grammar) instead of on the first analysis; resolves when they are ready. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/** `threads` 0: the analysis runs on the calling thread (HCP_ANALYSIS_THREADS=0). `newWorker` starts one thread (tests watch them). */
export function createAnalysisPool(threads: number, newWorker: () => AnalysisWorker = () => new AnalysisWorker()): AnalysisPool {
  if (threads <= 0) return { analyze: inThreadAnalyzer(loadPythonLanguage, () => serverUpstreamIndex()), advise: inThreadAdvise, warm: async () => {}, close: async () => {} };
  const workers: AnalysisWorker[] = [];
  let closed = false;
  /** The live thread with the fewest unanswered analyses; a dead one is replaced in its slot. */
  function pick(): AnalysisWorker {
    if (closed) throw new Error("the analysis threads are closed");
    for (let i = 0; i < threads; i++) if (!workers[i] || workers[i]!.dead) workers[i] = newWorker();
    return workers.reduce((a, b) => (b.load < a.load ? b : a));
  }
  return {
    analyze: async (files: readonly SourceFile[], options: AnalyzerOptions = {}) => pick().analyze(files, options),
    advise: { markdown: async (command) => pick().adviseMarkdown(command), slack: async (command) => pick().adviseSlack(command) },
    async warm() {
      pick();
      await Promise.all(workers.map((w) => w.started()));
    },
    async close() {
      closed = true;
      await Promise.all(workers.splice(0).map((w) => w.terminate()));
    },
  };
}
