// `npm run bench:cli`: how long the `hcp-bot` command takes to start, as a user's shell
// sees it (wall time of a child process, from spawn to exit).
//
// - `node -e 0`: starting Node itself, the floor everything is compared with.
// - `hcp-bot --version`: answered by bin/hcp-bot.js before any bundle loads. Target ≤ 2x node -e 0.
// - `hcp-bot lint` of one small recipe: the lint bundle (zod, yaml and the core in one file),
//   web-tree-sitter and both WebAssembly modules (compiled concurrently), the analysis and the
//   report. Target ≤ 150 ms.
// - the same lint through tsx from the sources: what `hcp-bot` cost before the build.
// - in-process phases of that lint (bundle import, grammar load), to show where the time goes.
// Each is run BENCH_CLI_RUNS times (default 15) after 2 warm-up runs; median and p90 are printed.
// The machine is shared: the figures move with its load, the ratios much less.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { buildPackage, isStale } from "../scripts/build.mjs";

const root = join(import.meta.dirname, "..");
const bin = join(root, "bin", "hcp-bot.js");
const recipe = join("fixtures", "cli", "clean_recipe.py");
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);

interface Figure {
  name: string;
  median: number;
  p90: number;
}

function timeRuns(name: string, argv: string[]): Figure {
  const samples: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const t0 = performance.now();
    const r = spawnSync(argv[0]!, argv.slice(1), { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
    if (i >= 2) samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  return { name, median: samples[Math.floor(samples.length / 2)]!, p90: samples[Math.min(samples.length - 1, Math.floor(samples.length * 0.9))]! };
}

/** Phases inside one lint process: importing the CLI bundle, and loading the grammar (both WebAssembly modules). */
function phases(): Record<string, number> {
  const script = `
    const t0 = performance.now();
    await import(${JSON.stringify(join(root, "dist", "index.js"))});
    const t1 = performance.now();
    const { loadPythonLanguage } = await import(${JSON.stringify(join(root, "dist", "node.js"))});
    const t2 = performance.now();
    await loadPythonLanguage();
    const t3 = performance.now();
    console.log(JSON.stringify({ "import core bundle": t1 - t0, "import node entry": t2 - t1, "tree-sitter runtime + Python grammar (WASM)": t3 - t2 }));`;
  const runs: Record<string, number>[] = [];
  for (let i = 0; i < Math.max(5, Math.floor(RUNS / 2)); i++) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    runs.push(JSON.parse(r.stdout) as Record<string, number>);
  }
  return Object.fromEntries(Object.keys(runs[0]!).map((k) => [k, runs.map((r) => r[k]!).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!]));
}

if (isStale({ types: false })) await buildPackage({ types: false });

const node = timeRuns("node -e 0", [process.execPath, "-e", "0"]);
const version = timeRuns("hcp-bot --version", [process.execPath, bin, "--version"]);
const help = timeRuns("hcp-bot --help", [process.execPath, bin, "--help"]);
const lint = timeRuns("hcp-bot lint (one small recipe)", [process.execPath, bin, "lint", recipe]);
const tsx = timeRuns("lint through tsx from the sources (before the build)", [process.execPath, "--import", "tsx", join(root, "src", "main.ts"), "lint", recipe]);

const fmt = (ms: number) => `${ms.toFixed(0).padStart(5)} ms`;
console.log(`bench:cli (${RUNS} runs each, wall time of the child process)`);
for (const f of [node, version, help, lint, tsx]) console.log(`  ${f.name.padEnd(56)} median ${fmt(f.median)}   p90 ${fmt(f.p90)}`);
console.log("  lint, in-process phases (median):");
for (const [k, v] of Object.entries(phases())) console.log(`    ${k.padEnd(54)} ${fmt(v)}`);

const versionRatio = version.median / node.median;
const lintOverNode = lint.median - node.median;
console.log(`--version / node -e 0: ${versionRatio.toFixed(2)}x (target ≤ 2x: ${versionRatio <= 2 ? "met" : "MISSED"})`);
console.log(`lint one recipe: ${lint.median.toFixed(0)} ms, ${lintOverNode.toFixed(0)} ms above Node's own start (target ≤ 150 ms: ${lint.median <= 150 ? "met" : "MISSED"})`);
console.log(`lint, tsx from sources / compiled: ${(tsx.median / lint.median).toFixed(1)}x`);
