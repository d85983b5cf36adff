// `npm run bench:cli`: how long the `hcp-bot` command takes to start, as a user's shell
// sees it (wall time of a child process, from spawn to exit).
//
// - `node -e 0`: starting Node itself, the floor everything is compared with.
// - `hcp-bot --version`: answered by bin/hcp-bot.js before any bundle loads. Target ≤ 2x node -e 0.
// - `hcp-bot lint` of one small recipe, from dist/lint.cjs with its V8 code cache (the
//   second and later lints of a user: what the target is about, ≤ 150 ms), and without the
//   cache (HCP_BOT_CACHE_DIR=off: the first lint after an install or an upgrade).
// - the same lint from dist/main.js (the ES modules the other commands run from), and through
//   tsx from the sources: what `hcp-bot lint` cost before dist/lint.cjs and before the build.
// - in-process phases of the cached lint, to show where the time goes.
// The variants run interleaved (one of each per round), BENCH_CLI_RUNS rounds (default 15)
// after 2 warm-up rounds; median and p90 are printed. The machine is shared: the figures
// move with its load (printed), the ratios to `node -e 0` from the same rounds much less.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { buildPackage, isStale } from "../scripts/build.mjs";

const root = join(import.meta.dirname, "..");
const bin = join(root, "bin", "hcp-bot.js");
const dist = join(root, "dist");
const recipe = join("fixtures", "cli", "clean_recipe.py");
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);
const cacheDir = mkdtempSync(join(tmpdir(), "hcp-bench-cli-cache-"));

interface Variant {
  name: string;
  argv: string[];
  env?: Record<string, string>;
}

interface Figure {
  name: string;
  median: number;
  p90: number;
}

// dist/main.js run directly (argv[1] a placeholder for the script): the lint as the other commands still run.
const esmMain = `await import(${JSON.stringify(join(dist, "main.js"))});`;

const VARIANTS: Variant[] = [
  { name: "node -e 0", argv: [process.execPath, "-e", "0"] },
  { name: "hcp-bot --version", argv: [process.execPath, bin, "--version"] },
  { name: "hcp-bot --help", argv: [process.execPath, bin, "--help"] },
  { name: "hcp-bot lint (one small recipe), code cache", argv: [process.execPath, bin, "lint", recipe], env: { HCP_BOT_CACHE_DIR: cacheDir } },
  { name: "hcp-bot lint, no code cache (first lint)", argv: [process.execPath, bin, "lint", recipe], env: { HCP_BOT_CACHE_DIR: "off" } },
  { name: "lint from dist/main.js (ES modules)", argv: [process.execPath, "--input-type=module", "-e", esmMain, "x", "lint", recipe] },
  { name: "lint through tsx from the sources (before the build)", argv: [process.execPath, "--import", "tsx", join(root, "src", "main.ts"), "lint", recipe] },
];

function timeRounds(variants: readonly Variant[]): Figure[] {
  const samples = variants.map(() => [] as number[]);
  for (let round = 0; round < RUNS + 2; round++) {
    variants.forEach((v, k) => {
      const t0 = performance.now();
      const r = spawnSync(v.argv[0]!, v.argv.slice(1), { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", ...v.env } });
      const ms = performance.now() - t0;
      if (r.status !== 0) throw new Error(`${v.name} exited ${r.status}: ${r.stderr}`);
      if (round >= 2) samples[k]!.push(ms);
    });
  }
  return variants.map((v, k) => {
    const s = samples[k]!.sort((a, b) => a - b);
    return { name: v.name, median: s[Math.floor(s.length / 2)]!, p90: s[Math.min(s.length - 1, Math.floor(s.length * 0.9))]! };
  });
}

/** Phases inside one cached lint: the bundle from its code cache, the grammar (both WebAssembly modules), the analysis and report. */
function phases(): Record<string, number> {
  const script = `
    process.getBuiltinModule("node:v8").setFlagsFromString("--liftoff-only"); // as bin/hcp-bot.js starts a lint
    const t0 = performance.now();
    const { enablePrivateCompileCache } = await import(${JSON.stringify(join(dist, "lint-start.cjs"))});
    enablePrivateCompileCache(${JSON.stringify(cacheDir)});
    const { createRequire, flushCompileCache } = await import("node:module");
    const bundle = createRequire(import.meta.url)(${JSON.stringify(join(dist, "lint.cjs"))});
    const t1 = performance.now();
    await bundle.loadPythonLanguage();
    const t2 = performance.now();
    let out = "";
    const code = await bundle.main(["lint", ${JSON.stringify(recipe)}], { out: (t) => (out += t), err: (t) => (out += t) });
    const t3 = performance.now();
    flushCompileCache();
    if (code !== 0) throw new Error("lint " + code + ": " + out);
    console.log(JSON.stringify({ "dist/lint.cjs from its code cache (compile + evaluate)": t1 - t0, "tree-sitter runtime + Python grammar (WASM)": t2 - t1, "analysis and report": t3 - t2 }));`;
  const runs: Record<string, number>[] = [];
  // The first run writes the cache for this process's flags (they differ from the binary's).
  for (let i = -1; i < Math.max(5, Math.floor(RUNS / 2)); i++) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, i < 0 ? "warm-up" : "timed"], { cwd: root, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`phases: ${r.stderr}`);
    if (i >= 0) runs.push(JSON.parse(r.stdout) as Record<string, number>);
  }
  return Object.fromEntries(Object.keys(runs[0]!).map((k) => [k, runs.map((r) => r[k]!).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!]));
}

if (isStale({ types: false })) await buildPackage({ types: false });

try {
  const loadBefore = loadavg()[0]!;
  const figures = timeRounds(VARIANTS);
  const loadAfter = loadavg()[0]!;
  const [node, version, , lint, lintCold, lintEsm, tsx] = figures as [Figure, Figure, Figure, Figure, Figure, Figure, Figure];
  const fmt = (ms: number) => `${ms.toFixed(0).padStart(5)} ms`;
  console.log(`bench:cli (${RUNS} interleaved rounds, wall time of the child process; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after)`);
  for (const f of figures) console.log(`  ${f.name.padEnd(56)} median ${fmt(f.median)}   p90 ${fmt(f.p90)}   ${(f.median / node.median).toFixed(2)}x node -e 0`);
  console.log("  cached lint, in-process phases (median):");
  for (const [k, v] of Object.entries(phases())) console.log(`    ${k.padEnd(54)} ${fmt(v)}`);

  const versionRatio = version.median / node.median;
  console.log(`--version / node -e 0: ${versionRatio.toFixed(2)}x (target ≤ 2x: ${versionRatio <= 2 ? "met" : "MISSED"})`);
  console.log(
    `lint one recipe: ${lint.median.toFixed(0)} ms, ${(lint.median / node.median).toFixed(2)}x node -e 0 (${(lint.median - node.median).toFixed(0)} ms above Node's own start) (target ≤ 150 ms: ${lint.median <= 150 ? "met" : "MISSED"})`,
  );
  console.log(`lint without the code cache: ${lintCold.median.toFixed(0)} ms, ${(lintCold.median / node.median).toFixed(2)}x node -e 0 (target ≤ 150 ms: ${lintCold.median <= 150 ? "met" : "MISSED"})`);
  console.log(`lint, dist/main.js / dist/lint.cjs with its cache: ${(lintEsm.median / lint.median).toFixed(2)}x; tsx from sources / cached: ${(tsx.median / lint.median).toFixed(1)}x`);
} finally {
  rmSync(cacheDir, { recursive: true, force: true });
}
