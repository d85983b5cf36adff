// `npm run bench:verdict`: streaming verdict throughput on a ≥ 1 GB torchrun log.
//
// 1. Assembles the log in a temp file from real fixture lines + Bridge iteration lines from
//    4 ranks (bench/verdict-corpus.ts).
// 2. Runs the parser over it in a child process (the CLI's reader: reads straight
//    into the parser's buffer), so the child's peak RSS (process.resourceUsage().maxRSS) measures
//    the parser alone (plus node + tsx, about 73 MB on their own). That is the WebAssembly
//    anchor scan, what the CLI and the bot use; a second child runs the regex path (runtimes
//    without WebAssembly) for comparison.
// 3. Runs `grep -cE '<the same anchors>'` over the same file.
// The three run in BENCH_VERDICT_ROUNDS interleaved rounds (default 5; the order rotates per
// round) and the ratios are paired per round, then the median is taken: on a shared 2-core
// machine only ratios from the same round compare. Targets (issue 33): parser time ≤ 1.0x
// grep's, peak RSS < 150 MB, regex path ≤ 1.5x the WebAssembly path.
// Env: BENCH_VERDICT_MB (default 1024), BENCH_VERDICT_FILE (reuse a file), BENCH_KEEP=1,
// BEFORE=<checkout> (also runs that checkout's workers in the same rounds), BENCH_PROF_DIR
// (the workers write --cpu-prof / --heap-prof profiles there).
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { ANCHORS, createVerdictParser } from "../src/core/verdict/parser.ts";
import { readLogInto } from "../src/node/read-log.ts";
import { backgroundLines, CORPUS_PROBE_KEY, SyntheticLog } from "./verdict-corpus.ts";


const MB = 1024 * 1024;
const REPO = process.env.BENCH_REPO ?? join(import.meta.dirname, "..");

type WorkerResult = {
  seconds: number; cpuSeconds?: number; bytes: number; lines: number; examinedLines: number; maxRssMB: number; status: string; hcpActive: boolean | null; iterations: number; engine: string;
};

async function worker(file: string, anchorScan: "auto" | "regex"): Promise<void> {
  const parser = createVerdictParser({ expectHcp: true, gpu: "H200", anchorScan, probeKey: CORPUS_PROBE_KEY, worldSize: 4, contextParallelSize: 4, sizes: [2, 2] });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  readLogInto(file, parser);
  const verdict = parser.end(0);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  const out = {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    bytes: verdict.stats.bytes,
    lines: verdict.stats.lines,
    examinedLines: verdict.stats.examinedLines,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
    status: verdict.status,
    hcpActive: verdict.hcp.active,
    iterations: verdict.iterations.count,
    engine: parser.scanEngine,
  } satisfies WorkerResult;
  process.stdout.write(JSON.stringify(out) + "\n");
}

function generate(file: string, megabytes: number): void {
  const log = new SyntheticLog(backgroundLines());
  const fd = openSync(file, "w");
  try {
    writeSync(fd, log.header());
    let written = 0;
    while (written < megabytes * MB) {
      const block = log.block(4 * MB);
      writeSync(fd, block);
      written += Buffer.byteLength(block);
    }
    writeSync(fd, log.footer());
  } finally {
    closeSync(fd);
  }
}

/** The parser's anchors as one ERE alternation (they are plain words; escape ERE specials anyway). */
export function anchorsAsEre(): string {
  return ANCHORS.map((a) => a.replace(/[.[\]()*+?{}|^$\\]/g, "\\$&")).join("|");
}

/** The worker of this bench, or of another checkout (BEFORE): its bench file, or that bench bundled into one .mjs (runs without tsx). */
function workerCommand(checkout: string | undefined): string[] {
  const bench = checkout === undefined ? import.meta.filename : checkout.endsWith(".mjs") ? checkout : join(checkout, "bench", "verdict.bench.ts");
  return bench.endsWith(".ts") ? ["--import", "tsx", bench] : [bench];
}

function runWorker(file: string, anchorScan: "auto" | "regex", checkout?: string): WorkerResult {
  const cwd = checkout === undefined ? REPO : checkout.endsWith(".mjs") ? dirname(checkout) : checkout;
  const child = spawnSync(process.execPath, [...workerFlags(anchorScan), ...workerCommand(checkout), "--worker", file, anchorScan], { cwd, encoding: "utf8", maxBuffer: 16 * MB });
  if (child.status !== 0) throw new Error(`worker failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").pop()!) as WorkerResult;
}

/** BENCH_PROF_DIR: the workers write V8 CPU and heap profiles there (one per run; the profiler's cost is in that run's time). */
function workerFlags(anchorScan: string): string[] {
  const dir = process.env.BENCH_PROF_DIR;
  if (!dir) return [];
  const name = `verdict-${anchorScan}-${Date.now()}`;
  return ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-name", `${name}.cpuprofile`, "--heap-prof", "--heap-prof-dir", dir, "--heap-prof-name", `${name}.heapprofile`];
}

/** grep's wall time, and its CPU time from the shell's `times` (user + system of its children). */
function grepOnce(file: string): { seconds: number; cpuSeconds: number; count: string } {
  const g0 = performance.now();
  const grep = spawnSync("bash", ["-c", 'grep -cE "$0" "$1" && times', anchorsAsEre(), file], { encoding: "utf8", env: { ...process.env, LC_ALL: "C" } });
  const seconds = (performance.now() - g0) / 1000;
  if (grep.status !== 0) throw new Error(`grep failed (${grep.status}): ${grep.stderr}`);
  const [count, , children] = grep.stdout.trim().split("\n");
  const cpuSeconds = (children ?? "").split(" ").reduce((sum, t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    return m ? sum + Number(m[1]) * 60 + Number(m[2]) : sum;
  }, 0);
  return { seconds, cpuSeconds, count: count! };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

type Sample = { name: string; run: () => { seconds: number; cpuSeconds?: number; result?: WorkerResult } };

/**
 * Interleaved rounds: every round runs each contender once, in an order rotated per round, so
 * that a load spike from the other processes on a shared machine lands on all of them alike.
 * Ratios are taken per round (paired) and reported as their median.
 */
function rounds(samples: Sample[], count: number): Map<string, { seconds: number[]; cpuSeconds: number[]; results: WorkerResult[] }> {
  const out = new Map(samples.map((s) => [s.name, { seconds: [] as number[], cpuSeconds: [] as number[], results: [] as WorkerResult[] }]));
  for (let round = 0; round < count; round++) {
    for (let k = 0; k < samples.length; k++) {
      const s = samples[(k + round) % samples.length]!;
      const r = s.run();
      out.get(s.name)!.seconds.push(r.seconds);
      out.get(s.name)!.cpuSeconds.push(r.cpuSeconds ?? Number.NaN);
      if (r.result) out.get(s.name)!.results.push(r.result);
    }
  }
  return out;
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const verdictMark = (ok: boolean) => (ok ? "met" : "NOT met");

async function main(): Promise<void> {
  const megabytes = Number(process.env.BENCH_VERDICT_MB ?? 1024);
  const roundCount = Math.max(1, Number(process.env.BENCH_VERDICT_ROUNDS ?? 5));
  const before = process.env.BEFORE;
  const reuse = process.env.BENCH_VERDICT_FILE;
  const file = reuse ?? join(tmpdir(), `hcp-verdict-bench-${process.pid}.log`);
  if (!reuse || !existsSync(file)) {
    const g0 = performance.now();
    generate(file, megabytes);
    console.log(`generated ${file}: ${(statSync(file).size / MB).toFixed(0)} MB in ${((performance.now() - g0) / 1000).toFixed(1)} s`);
  }
  const size = statSync(file).size;
  try {
    const loadBefore = load();
    let grepCount = "";
    const worker = (anchorScan: "auto" | "regex", checkout?: string) => () => {
      const result = runWorker(file, anchorScan, checkout);
      return { seconds: result.seconds, cpuSeconds: result.cpuSeconds, result };
    };
    const samples: Sample[] = [
      { name: "grep", run: () => { const g = grepOnce(file); grepCount = g.count; return { seconds: g.seconds, cpuSeconds: g.cpuSeconds }; } },
      { name: "wasm", run: worker("auto") },
      { name: "regex", run: worker("regex") },
      ...(before ? [{ name: "wasm before", run: worker("auto", before) }, { name: "regex before", run: worker("regex", before) }] : []),
    ];
    const m = rounds(samples, roundCount);
    const seconds = (name: string) => m.get(name)!.seconds;
    const paired = (a: string, b: string) => median(seconds(a).map((s, i) => s / seconds(b)[i]!));
    const cpu = (name: string) => m.get(name)!.cpuSeconds;
    const pairedCpu = (a: string, b: string) => median(cpu(a).map((s, i) => s / cpu(b)[i]!));
    const r = m.get("wasm")!.results[0]!;
    const regex = m.get("regex")!.results[0]!;
    for (const name of ["regex", "wasm before", "regex before"].filter((n) => m.has(n))) {
      for (const x of m.get(name)!.results) {
        if (x.status !== r.status || x.lines !== r.lines || x.examinedLines !== r.examinedLines || x.iterations !== r.iterations) throw new Error(`${name} disagrees with the WebAssembly scan`);
      }
    }
    const maxRss = (name: string) => Math.max(...m.get(name)!.results.map((x) => x.maxRssMB));
    const line = (name: string, what: string) => {
      const s = median(seconds(name));
      return `${what.padEnd(13)} ${s.toFixed(3)} s median (${seconds(name).map((x) => x.toFixed(2)).join(" ")}) = ${(size / MB / s).toFixed(0)} MB/s, CPU ${median(cpu(name)).toFixed(3)} s`;
    };
    console.log(`log:          ${(size / MB).toFixed(0)} MB, ${r.lines.toLocaleString()} lines (${r.iterations.toLocaleString()} iteration lines); ${roundCount} interleaved rounds`);
    console.log(`verdict:      ${r.status} (hcp.active=${r.hcpActive}), examined ${r.examinedLines.toLocaleString()} lines`);
    console.log(`${line("wasm", "parser:")}, peak RSS ${maxRss("wasm").toFixed(0)} MB (${r.engine} anchor scan)`);
    console.log(`${line("regex", "regex path:")}, peak RSS ${maxRss("regex").toFixed(0)} MB (${regex.engine}, as where WebAssembly is unavailable)`);
    console.log(`${line("grep", "grep -cE:")}, ${grepCount} matching lines`);
    if (before) {
      console.log(`${line("wasm before", "parser BEFORE:")}, peak RSS ${maxRss("wasm before").toFixed(0)} MB (${before})`);
      console.log(`${line("regex before", "regex BEFORE:")}, peak RSS ${maxRss("regex before").toFixed(0)} MB`);
      console.log(`after/before: parser ${paired("wasm", "wasm before").toFixed(2)}x, regex path ${paired("regex", "regex before").toFixed(2)}x (paired medians)`);
    }
    console.log(`CPU time:     parser / grep ${pairedCpu("wasm", "grep").toFixed(2)}x, regex / WebAssembly ${pairedCpu("regex", "wasm").toFixed(2)}x (paired medians of user + system time; less sensitive to the load)`);
    console.log(`load average: ${loadBefore} before, ${load()} after (${availableParallelism()} cores)`);
    const vsGrep = paired("wasm", "grep");
    const regexVsWasm = paired("regex", "wasm");
    const rss = maxRss("wasm");
    const targets = [
      [`parser time / grep -cE time = ${vsGrep.toFixed(2)}x`, "≤ 1.00x", vsGrep <= 1.0],
      [`peak RSS ${rss.toFixed(0)} MB`, "< 150 MB", rss < 150],
      [`regex path / WebAssembly path = ${regexVsWasm.toFixed(2)}x`, "≤ 1.50x", regexVsWasm <= 1.5],
    ] as const;
    for (const [what, target, ok] of targets) console.log(`target:       ${what.padEnd(42)} ${target.padEnd(8)} ${verdictMark(ok)}`);
    console.log(`targets:      ${targets.every((t) => t[2]) ? "all met" : "NOT all met"}`);
  } finally {
    if (!reuse && process.env.BENCH_KEEP !== "1") rmSync(file, { force: true });
  }
}

if (process.argv[2] === "--worker") await worker(process.argv[3]!, process.argv[4] === "regex" ? "regex" : "auto");
else await main();
