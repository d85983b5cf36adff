// A worker thread with the grammar loaded once: it extracts shards of files (parallel.ts,
// the CLI's large lints) or runs a whole analysis (analysis-pool.ts, the server's reviews,
// pre-flight checks and Slack checks) or renders a `/hcp advise` reply, one answer per message.
import { parentPort } from "node:worker_threads";
import type { AnalyzerOptions } from "../core/analyze/analyzer.ts";
import { analyze, extractFiles } from "../core/analyze/index.ts";
import type { SourceFile } from "../core/model/source.ts";
import type { AdviseCommand } from "../core/commands/types.ts";
import { adviseReplyMarkdown, adviseReplySlack } from "../core/render/layout/advice.ts";
import { loadPythonLanguage } from "./treesitter.ts";
import { serverUpstreamIndex } from "./upstream-index.ts";

interface Job {
  id: number;
  files: SourceFile[];
  library: SourceFile[];
  maxFileBytes?: number;
  analyze?: { files: SourceFile[]; options: AnalyzerOptions };
  advise?: { surface: "github" | "slack"; command: AdviseCommand };
}

const python = await loadPythonLanguage();
parentPort!.on("message", (job: Job) => {
  try {
    if (job.advise) {
      const { surface, command } = job.advise;
      parentPort!.postMessage({ id: job.id, advice: surface === "github" ? adviseReplyMarkdown(command) : adviseReplySlack(command) });
      return;
    }
    if (job.analyze) {
      const options = job.analyze.options;
      parentPort!.postMessage({ id: job.id, report: analyze(job.analyze.files, { ...options, python, upstream: options.upstream ?? serverUpstreamIndex() }) });
      return;
    }
    // A JSON string crosses the thread boundary about twice as fast as a structured clone of
    // the same nested objects, and the stringify half runs here, in parallel.
    parentPort!.postMessage({ id: job.id, json: JSON.stringify(extractFiles(job.files, { python, library: job.library, maxFileBytes: job.maxFileBytes })) });
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
parentPort!.postMessage({ ready: true });
