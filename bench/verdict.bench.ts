// `npm run bench:verdict`: streaming verdict throughput on a ≥ 1 GB torchrun log.
//
// 1. Assembles the log in a temp file from real fixture lines + Bridge iteration lines from
//    4 ranks (bench/verdict-corpus.ts).
// 2. Runs the parser over it in a child process (the CLI's reader: 1 MiB reads
//    into one buffer → parser.push), so the child's peak RSS (process.resourceUsage().maxRSS) measures
//    the parser alone (plus node + tsx, about 73 MB on their own). That is the WebAssembly
//    anchor scan, what the CLI and the bot use; a second child runs the regex path (runtimes
//    without WebAssembly) for comparison.
// 3. Runs `grep -cE '<the same anchors>'` over the same file and prints the time ratio.
// Targets: ≥ 250 MB/s, < 150 MB peak RSS.
// Env: BENCH_VERDICT_MB (default 1024), BENCH_VERDICT_FILE (reuse a file), BENCH_KEEP=1.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ANCHORS, createVerdictParser } from "../src/core/verdict/parser.ts";
import { feedFile } from "../src/node/read-log.ts";
import { backgroundLines, CORPUS_PROBE_KEY, SyntheticLog } from "./verdict-corpus.ts";


const MB = 1024 * 1024;

type WorkerResult = {
  seconds: number; bytes: number; lines: number; examinedLines: number; maxRssMB: number; status: string; hcpActive: boolean | null; iterations: number; engine: string;
};

async function worker(file: string, anchorScan: "auto" | "regex"): Promise<void> {
  const parser = createVerdictParser({ expectHcp: true, gpu: "H200", anchorScan, probeKey: CORPUS_PROBE_KEY, worldSize: 4, contextParallelSize: 4, sizes: [2, 2] });
  const t0 = performance.now();
  feedFile(file, (chunk) => parser.push(chunk));
  const verdict = parser.end(0);
  const seconds = (performance.now() - t0) / 1000;
  const out = {
    seconds,
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

function runWorker(file: string, anchorScan: "auto" | "regex"): WorkerResult {
  const child = spawnSync(process.execPath, ["--import", "tsx", import.meta.filename, "--worker", file, anchorScan], { encoding: "utf8", maxBuffer: 16 * MB });
  if (child.status !== 0) throw new Error(`worker failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").pop()!) as WorkerResult;
}

async function main(): Promise<void> {
  const megabytes = Number(process.env.BENCH_VERDICT_MB ?? 1024);
  const reuse = process.env.BENCH_VERDICT_FILE;
  const file = reuse ?? join(tmpdir(), `hcp-verdict-bench-${process.pid}.log`);
  if (!reuse || !existsSync(file)) {
    const g0 = performance.now();
    generate(file, megabytes);
    console.log(`generated ${file}: ${(statSync(file).size / MB).toFixed(0)} MB in ${((performance.now() - g0) / 1000).toFixed(1)} s`);
  }
  const size = statSync(file).size;
  try {
    const r = runWorker(file, "auto");
    const regex = runWorker(file, "regex");

    const g0 = performance.now();
    const grep = spawnSync("grep", ["-cE", anchorsAsEre(), file], { encoding: "utf8", env: { ...process.env, LC_ALL: "C" } });
    const grepSeconds = (performance.now() - g0) / 1000;
    const grepCount = grep.stdout.trim();

    const parserMBs = size / MB / r.seconds;
    const grepMBs = size / MB / grepSeconds;
    console.log(`log:        ${(size / MB).toFixed(0)} MB, ${r.lines.toLocaleString()} lines (${r.iterations.toLocaleString()} iteration lines)`);
    console.log(`verdict:    ${r.status} (hcp.active=${r.hcpActive})`);
    console.log(`parser:     ${r.seconds.toFixed(2)} s = ${parserMBs.toFixed(0)} MB/s, peak RSS ${r.maxRssMB.toFixed(0)} MB, examined ${r.examinedLines.toLocaleString()} lines (${r.engine} anchor scan)`);
    console.log(`  regex:    ${regex.seconds.toFixed(2)} s = ${(size / MB / regex.seconds).toFixed(0)} MB/s, peak RSS ${regex.maxRssMB.toFixed(0)} MB (${regex.engine} path, as where WebAssembly is unavailable); ${(regex.seconds / r.seconds).toFixed(2)}x the time`);
    if (regex.status !== r.status || regex.lines !== r.lines || regex.examinedLines !== r.examinedLines) throw new Error("the two anchor scans disagree");
    console.log(`grep -cE:   ${grepSeconds.toFixed(2)} s = ${grepMBs.toFixed(0)} MB/s, ${grepCount} matching lines`);
    console.log(`ratio:      parser time / grep time = ${(r.seconds / grepSeconds).toFixed(2)}`);
    const ok = parserMBs >= 250 && r.maxRssMB < 150;
    console.log(`targets:    ≥ 250 MB/s and < 150 MB → ${ok ? "met" : "NOT met"}`);
  } finally {
    if (!reuse && process.env.BENCH_KEEP !== "1") rmSync(file, { force: true });
  }
}

if (process.argv[2] === "--worker") await worker(process.argv[3]!, process.argv[4] === "regex" ? "regex" : "auto");
else await main();
