// Extraction on several threads: each file's extraction is independent (tree-sitter
// parsing dominates), so shards go to worker threads and the judging (composition and
// rules) runs once on the combined results. Small inputs stay on the calling thread,
// where a worker's start-up would cost more than it saves. The same worker runs whole
// analyses for the server (analysis-pool.ts).
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { FROM_SOURCE, packageFile } from "./package-files.ts";
import { extractFiles, judge, type AnalysisReport, type AnalyzeOptions } from "../core/analyze/index.ts";
import type { SourceFile } from "../core/model/source.ts";
import { importClosure } from "../core/recipe/python/library.ts";
import type { ExtractResult } from "../core/recipe/types.ts";
import type { AnalyzerOptions } from "../core/analyze/analyzer.ts";
import type { AdviseCommand } from "../core/commands/types.ts";
import type { SlackMessage } from "../core/render/slack.ts";

export const PARALLEL_MIN_CHARS = 2_000_000;

/**
 * The young generation of a worker's heap. Extraction makes short-lived objects (each file's
 * JavaScript copy of its tree, the evaluator's values), which a small young generation
 * collects as well as a large one; V8's default lets each thread's grow to tens of megabytes
 * more before it does (bench:lint: peak RSS 698 MB -> 466 MB with two workers). Only the young
 * generation is capped: the old one keeps V8's limit, so a large input is never cut short.
 */
const WORKER_YOUNG_GENERATION_MB = 16;

// The build has the worker as an entry point of its own; the sources need tsx's loader registered in the thread first.
const WORKER_FILE = FROM_SOURCE ? packageFile("src/node/extract-worker-entry.js") : packageFile("dist/extract-worker.js");

interface Reply {
  id: number;
  /** An extraction's ExtractResult[] as JSON (see extract-worker.ts). */
  json?: string;
  /** A whole analysis's report (structured clone). */
  report?: AnalysisReport;
  /** A `/hcp advise` reply: Markdown, or a Slack message. */
  advice?: string | SlackMessage;
  error?: string;
}

type Request =
  | { files: SourceFile[]; library: SourceFile[]; maxFileBytes?: number }
  | { analyze: { files: readonly SourceFile[]; options: AnalyzerOptions } }
  | { advise: { surface: "github" | "slack"; command: AdviseCommand } };

/** One worker thread with the grammar loaded: extracts shards (the CLI) or runs whole analyses (the server). */
export class AnalysisWorker {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  private pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  /** Set once the thread failed or exited: what was asked of it is rejected, and it takes nothing more. */
  dead = false;

  constructor() {
    // Loaded here, not at start-up: a small lint never starts a thread (~2-5 ms of `hcp-bot lint`).
    const { Worker } = process.getBuiltinModule("node:worker_threads");
    this.worker = new Worker(WORKER_FILE, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.once("error", reject);
      this.worker.once("exit", (code) => reject(new Error(`the analysis worker exited (code ${code}) before it was ready`)));
      const onFirst = (m: { ready?: boolean }) => {
        if (m.ready) {
          this.worker.off("message", onFirst);
          this.worker.on("message", (reply: Reply) => this.settle(reply));
          resolve();
        }
      };
      this.worker.on("message", onFirst);
    });
    this.ready.catch(() => {}); // raised to whoever asks next
    const fail = (error: Error) => {
      this.dead = true;
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the analysis worker exited (code ${code})`)));
  }

  /** Resolves once the thread has loaded the grammar. */
  started(): Promise<void> {
    return this.ready;
  }

  /** Requests this thread has not answered yet. */
  get load(): number {
    return this.pending.size;
  }

  private async ask(request: Request): Promise<Reply> {
    await this.ready;
    if (this.dead) throw new Error("the analysis worker is gone");
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...request });
    });
  }

  async extract(files: SourceFile[], library: SourceFile[], maxFileBytes?: number): Promise<ExtractResult[]> {
    const reply = await this.ask({ files, library, maxFileBytes });
    return reply.json ? (JSON.parse(reply.json) as ExtractResult[]) : [];
  }

  async analyze(files: readonly SourceFile[], options: AnalyzerOptions): Promise<AnalysisReport> {
    return (await this.ask({ analyze: { files, options } })).report!;
  }

  async adviseMarkdown(command: AdviseCommand): Promise<string> {
    return (await this.ask({ advise: { surface: "github", command } })).advice as string;
  }

  async adviseSlack(command: AdviseCommand): Promise<SlackMessage> {
    return (await this.ask({ advise: { surface: "slack", command } })).advice as SlackMessage;
  }

  private settle(reply: Reply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (reply.error !== undefined) p.reject(new Error(reply.error));
    else p.resolve(reply);
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/** Splits files into `n` shards of similar total size, keeping each shard's file order. */
export function shard<T extends { text: string }>(files: readonly T[], n: number): number[][] {
  const shards: { size: number; indexes: number[] }[] = Array.from({ length: n }, () => ({ size: 0, indexes: [] }));
  const bySize = files.map((f, i) => ({ i, size: f.text.length })).sort((a, b) => b.size - a.size);
  for (const f of bySize) {
    const smallest = shards.reduce((a, b) => (b.size < a.size ? b : a));
    smallest.size += f.size;
    smallest.indexes.push(f.i);
  }
  return shards.map((s) => s.indexes.sort((a, b) => a - b)).filter((s) => s.length > 0);
}

export class ParallelAnalyzer {
  private workers: AnalysisWorker[] = [];

  constructor(private readonly threads = Math.min(availableParallelism(), 4)) {}

  async analyze(files: readonly SourceFile[], options: AnalyzeOptions): Promise<AnalysisReport> {
    const chars = files.reduce((n, f) => n + f.text.length, 0);
    if (this.threads < 2 || chars < PARALLEL_MIN_CHARS) return judge(files, extractFiles(files, options), options);
    while (this.workers.length < this.threads) this.workers.push(new AnalysisWorker());
    const shards = shard(files, this.threads);
    const parts = await Promise.all(
      shards.map((indexes, k) => {
        const shardFiles = indexes.map((i) => files[i]!);
        // Each shard also gets the modules its recipes import builders from (they may sit in another shard).
        return this.workers[k]!.extract(shardFiles, importClosure(shardFiles, [...files, ...(options.library ?? [])]), options.maxFileBytes);
      }),
    );
    const results: ExtractResult[] = new Array(files.length);
    shards.forEach((indexes, k) => indexes.forEach((fileIndex, j) => (results[fileIndex] = parts[k]![j]!)));
    return judge(files, results, options);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}
