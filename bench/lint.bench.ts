// `npm run bench:lint`: analyzer throughput on a generated Megatron-Bridge-shaped corpus.
// Prints files/s, lines/s, peak memory, cold and warm times, and the ratio of analysis
// time to bare tree-sitter parse time of the same Python files (the floor).
// Targets (issue 2): whole corpus < 1.5 s warm on 2 cores; analysis <= 2x bare parse.
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { Parser } from "web-tree-sitter";
import { analyze } from "../src/core/analyze/index.ts";
import { loadPythonLanguage } from "../src/node/treesitter.ts";
import { ParallelAnalyzer } from "../src/node/parallel.ts";
import { generateCorpus } from "./corpus.ts";

const WARM_RUNS = Number(process.env.BENCH_RUNS ?? 7);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const corpus = generateCorpus();
const python = corpus.files.filter((f) => f.path.endsWith(".py"));
const pythonLines = python.reduce((n, f) => n + f.text.split("\n").length - 1, 0);

const coldStart = performance.now();
const language = await loadPythonLanguage();
let report = analyze(corpus.files, { python: language });
const coldMs = performance.now() - coldStart;

const warm: number[] = [];
for (let i = 0; i < WARM_RUNS; i++) {
  gc();
  warm.push(time(() => (report = analyze(corpus.files, { python: language }))));
}

// The CLI's path: extraction shards on worker threads (one per core), judging on the main thread.
const parallel = new ParallelAnalyzer();
await parallel.analyze(corpus.files, { python: language });
const threaded: number[] = [];
for (let i = 0; i < WARM_RUNS; i++) {
  gc();
  const t0 = performance.now();
  await parallel.analyze(corpus.files, { python: language });
  threaded.push(performance.now() - t0);
}
await parallel.close();

const parser = new Parser();
parser.setLanguage(language);
const parseOnly: number[] = [];
const analyzePython: number[] = [];
for (let i = 0; i < WARM_RUNS; i++) {
  gc();
  parseOnly.push(time(() => python.forEach((f) => parser.parse(f.text)?.delete())));
  gc();
  analyzePython.push(time(() => analyze(python, { python: language })));
}
parser.delete();

const warmMs = median(warm);
const threadedMs = median(threaded);
const parseMs = median(parseOnly);
const pyMs = median(analyzePython);
const peakMb = process.resourceUsage().maxRSS / 1024;
// Each round times parse and analysis back to back; the median of the per-round ratios is
// steadier than a ratio of medians when other work shares the machine.
const ratio = median(parseOnly.map((p, i) => analyzePython[i]! / p));

const rows: [string, string][] = [
  ["corpus", `${corpus.files.length} files (${python.length} Python), ${corpus.lines} lines, ${(corpus.bytes / 1e6).toFixed(1)} MB`],
  ["configurations / findings", `${report.units.length} / ${report.findings.length}`],
  ["cold (grammar load + first run)", `${coldMs.toFixed(0)} ms`],
  [`warm, one thread (median of ${WARM_RUNS})`, `${warmMs.toFixed(0)} ms`],
  [`warm, ${availableParallelism()} threads as the CLI runs it`, `${threadedMs.toFixed(0)} ms  [target < 1500 ms: ${threadedMs < 1500 ? "met" : "MISSED"}]`],
  ["throughput warm (threads)", `${(corpus.files.length / (threadedMs / 1000)).toFixed(0)} files/s, ${(corpus.lines / (threadedMs / 1000) / 1000).toFixed(0)}k lines/s`],
  ["bare tree-sitter parse (Python files)", `${parseMs.toFixed(0)} ms for ${pythonLines} lines`],
  ["analysis of the same Python files", `${pyMs.toFixed(0)} ms`],
  ["ratio analysis / parse", `${ratio.toFixed(2)}x  [target <= 2x: ${ratio <= 2 ? "met" : "MISSED"}]`],
  ["peak RSS", `${peakMb.toFixed(0)} MB`],
];
const width = Math.max(...rows.map(([k]) => k.length));
console.log("hcp-bot lint benchmark");
for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
