// `npm run bench:lint`: analyzer throughput against its floor, the bare tree-sitter parse of
// the same Python files, on a generated Megatron-Bridge-shaped corpus and, when
// MEGATRON_BRIDGE_DIR names a checkout, on the real Bridge (the files `hcp-bot lint DIR` reads).
//
// The machine is shared, so nothing here is an absolute figure alone: each round runs the
// bare parse, the one-thread analysis of the same Python files, the one-thread analysis of
// every file and the 2-thread run back to back, and the ratios are medians of per-round
// ratios. Each corpus runs in a child process of its own, so its peak RSS is its own.
// Targets (issue 33): analysis <= 1.5x the parse on one thread; the warm 2-thread run of the
// generated corpus < 700 ms; peak RSS < 250 MB.
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { Parser } from "web-tree-sitter";
import { analyze } from "../src/core/analyze/index.ts";
import type { SourceFile } from "../src/core/model/source.ts";
import { collectInputs, readSources } from "../src/node/files.ts";
import { loadPythonLanguage } from "../src/node/treesitter.ts";
import { ParallelAnalyzer } from "../src/node/parallel.ts";
import { generateCorpus } from "./corpus.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const THREADS = 2;
const TARGET_RATIO = 1.5;
const TARGET_THREADED_MS = 700;
const TARGET_RSS_MB = 250;
const CHILD = "HCP_BENCH_LINT_CORPUS";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

const verdict = (met: boolean): string => (met ? "met" : "MISSED");
const load = (): string => loadavg().map((l) => l.toFixed(2)).join(" ");

async function bridgeFiles(dir: string): Promise<SourceFile[]> {
  const { paths } = await collectInputs([dir]);
  const { files } = await readSources(paths);
  return files;
}

/** One corpus, measured in this process: the report lines. */
async function measure(name: string): Promise<[string, string][]> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const files = name === "generated" ? generateCorpus().files : await bridgeFiles(process.env.MEGATRON_BRIDGE_DIR!);
  const python = files.filter((f) => f.path.endsWith(".py"));
  const count = (fs: SourceFile[]) => fs.reduce((n, f) => n + f.text.split("\n").length - 1, 0);
  const bytes = files.reduce((n, f) => n + f.text.length, 0);

  const coldStart = performance.now();
  const language = await loadPythonLanguage();
  let report = analyze(files, { python: language });
  const coldMs = performance.now() - coldStart;
  const summary = `${report.units.length} / ${report.findings.length}`;
  report = undefined!; // not held through the rounds: the peak is the analysis's, not the bench's

  const parser = new Parser();
  parser.setLanguage(language);
  const parallel = new ParallelAnalyzer(THREADS);
  await parallel.analyze(files, { python: language });
  const parse: number[] = [];
  const pyAnalysis: number[] = [];
  const oneThread: number[] = [];
  const threaded: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    gc();
    parse.push(time(() => python.forEach((f) => parser.parse(f.text)?.delete())));
    gc();
    pyAnalysis.push(time(() => analyze(python, { python: language })));
    gc();
    oneThread.push(time(() => analyze(files, { python: language })));
    gc();
    const t0 = performance.now();
    await parallel.analyze(files, { python: language });
    threaded.push(performance.now() - t0);
  }
  await parallel.close();
  parser.delete();

  const ratio = median(parse.map((p, i) => pyAnalysis[i]! / p));
  const threadedMs = median(threaded);
  const peakMb = process.resourceUsage().maxRSS / 1024;
  const threadedTarget = name === "generated" ? `  [target < ${TARGET_THREADED_MS} ms: ${verdict(threadedMs < TARGET_THREADED_MS)}]` : "";
  return [
    ["files", `${files.length} (${python.length} Python), ${count(files)} lines, ${(bytes / 1e6).toFixed(1)} MB`],
    ["configurations / findings", summary],
    ["cold (grammar load + first run)", `${coldMs.toFixed(0)} ms`],
    [`bare tree-sitter parse, Python files (median of ${RUNS})`, `${median(parse).toFixed(0)} ms for ${count(python)} lines`],
    ["analysis of the same Python files, one thread", `${median(pyAnalysis).toFixed(0)} ms`],
    ["ratio analysis / parse (median of rounds)", `${ratio.toFixed(2)}x  [target <= ${TARGET_RATIO}x: ${verdict(ratio <= TARGET_RATIO)}]`],
    ["ratio range over rounds", `${Math.min(...parse.map((p, i) => pyAnalysis[i]! / p)).toFixed(2)}x .. ${Math.max(...parse.map((p, i) => pyAnalysis[i]! / p)).toFixed(2)}x`],
    ["warm, every file, one thread", `${median(oneThread).toFixed(0)} ms`],
    [`warm, every file, ${THREADS} threads as the CLI runs it`, `${threadedMs.toFixed(0)} ms${threadedTarget}`],
    ["throughput warm (threads)", `${(files.length / (threadedMs / 1000)).toFixed(0)} files/s, ${(count(files) / (threadedMs / 1000) / 1000).toFixed(0)}k lines/s`],
    ["peak RSS (this corpus's process, workers included)", `${peakMb.toFixed(0)} MB  [target < ${TARGET_RSS_MB} MB: ${verdict(peakMb < TARGET_RSS_MB)}]`],
    ["load average (1, 5, 15 min) at the end", load()],
  ];
}

function print(title: string, rows: [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(title);
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}

const child = process.env[CHILD];
if (child) {
  print(`hcp-bot lint benchmark: ${child === "generated" ? "generated corpus" : `Megatron-Bridge checkout ${process.env.MEGATRON_BRIDGE_DIR}`}`, await measure(child));
} else {
  console.log(`load average (1, 5, 15 min) at the start: ${load()}; ${RUNS} rounds per corpus`);
  const corpora = ["generated", ...(process.env.MEGATRON_BRIDGE_DIR ? ["bridge"] : [])];
  let failed = false;
  for (const name of corpora) {
    const run = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!], { env: { ...process.env, [CHILD]: name }, stdio: "inherit" });
    failed ||= run.status !== 0;
  }
  if (!process.env.MEGATRON_BRIDGE_DIR) console.log("(set MEGATRON_BRIDGE_DIR to a Megatron-Bridge checkout to measure it too)");
  process.exitCode = failed ? 1 : 0;
}
