// A worker thread that extracts shards of files (see parallel.ts). It loads the grammar
// once and answers one message per shard.
import { parentPort } from "node:worker_threads";
import { extractFiles } from "../core/analyze/index.ts";
import type { SourceFile } from "../core/model/source.ts";
import { loadPythonLanguage } from "./treesitter.ts";

interface Job {
  id: number;
  files: SourceFile[];
  library: SourceFile[];
  maxFileBytes?: number;
}

const python = await loadPythonLanguage();
parentPort!.on("message", (job: Job) => {
  try {
    // A JSON string crosses the thread boundary about twice as fast as a structured clone of
    // the same nested objects, and the stringify half runs here, in parallel.
    parentPort!.postMessage({ id: job.id, json: JSON.stringify(extractFiles(job.files, { python, library: job.library, maxFileBytes: job.maxFileBytes })) });
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
parentPort!.postMessage({ ready: true });
