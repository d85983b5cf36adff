// `npm run bench:edge`: the edge deployment's budgets (issue 9), printed as figures and
// ratios. Sizes of the built worker (and wrangler's own upload figure); spawn to first
// response on workerd and Deno next to a hello world on the same runtime; the webhook
// answer and the 5-file review (webhook -> last post, fake GitHub on loopback) warm, on
// workerd, Deno and, as the reference, the Node server measured the same way here.
import { execFileSync } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { buildEdge } from "../scripts/build-edge.ts";
import { readWranglerConfig, startWorkerd } from "../scripts/start-workerd.ts";
import { startServer } from "../src/server/server.ts";
import { appKeys, botSettings, deliverWebhook, hcpRecipe } from "../test/support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.ts";
import { startEdge, type EdgeProcess } from "../test/edge/runtimes.ts";
import { coldStart, median, type ColdStart, type FirstRequest } from "./support/cold-start.ts";
import { denoLaunch, workerdLaunch, type LaunchOptions } from "./support/edge-launch.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 7);
/** Hello world's spawn to first response on this machine (docs/edge-notes.md), the floor the budget is read against. */
const FLOOR_MS = 38;
const SECRET = "bench-secret";
const OWNER = "acme";
const REPO = "megatron-bridge";
const root = join(import.meta.dirname, "..");
const workerdBin = join(root, "node_modules", ".bin", "workerd");
const denoBin = join(root, "node_modules", ".bin", "deno");
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const ms = (n: number) => `${n.toFixed(1)} ms`;
const met = (ok: boolean) => (ok ? "met" : "MISSED");

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

// ------------------------------------------------------------------------ sizes

const sizes = await buildEdge(true);
const wasmGzip = ["web-tree-sitter.wasm", "tree-sitter-python.wasm", "anchor-scan.wasm"].reduce((n, f) => n + sizes.files[f]!.gzip, 0);
// The worker's JavaScript is its entry and its chunks, each gzipped on its own (a little more than one file would be).
const workerJs = sizes.js.worker;
const uploadGzip = workerJs.gzip + wasmGzip;
let wranglerFigure = "not run";
try {
  const out = execFileSync(join(root, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", mkdtempSync(join(tmpdir(), "hcp-wrangler-"))], {
    cwd: root,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    encoding: "utf8",
  });
  wranglerFigure = /Total Upload: ([^\n]+)/.exec(out)?.[1] ?? "?";
} catch (error) {
  wranglerFigure = `failed: ${(error as Error).message.split("\n")[0]}`;
}

// ------------------------------------------------------------------ cold start

const load = () => `load ${loadavg().map((n) => n.toFixed(2)).join(" ")}`;
const HEALTH_TOKEN = "bench-health-token-0123456789";
const coldEnv = { APP_ID: "1", PRIVATE_KEY: appKeys.privateKey, WEBHOOK_SECRET: SECRET, LOG_LEVEL: "silent", GHE_HOST: "127.0.0.1:1", GHE_PROTOCOL: "http", HCP_HEALTH_TOKEN: HEALTH_TOKEN };
const launchOptions = (tree: string): LaunchOptions => ({
  edgeDir: join(tree, "dist", "edge"),
  scratch: mkdtempSync(join(tmpdir(), "hcp-edge-cold-")),
  stateDir: mkdtempSync(join(tmpdir(), "hcp-edge-state-")),
  workerdBin,
  denoBin,
  env: coldEnv,
  compatibilityDate: readWranglerConfig().compatibility_date,
  cwd: tree,
});
// The first answer must be a real one: /healthz with the operator's token reports the store it opened.
const healthz: FirstRequest = { method: "GET", path: "/healthz", headers: { authorization: `Bearer ${HEALTH_TOKEN}` }, status: 200 };
const helloRequest: FirstRequest = { method: "GET", path: "/", status: 200 };
/** A signed pull_request delivery as the first request: answered 202 once its job is written with its claim. */
function firstWebhook(): FirstRequest {
  const body = JSON.stringify({
    action: "opened",
    number: 1,
    installation: { id: 1 },
    repository: { id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main" },
    sender: { login: "author", id: 3 },
    pull_request: { number: 1, state: "open", draft: false, head: { sha: "a".repeat(40), ref: "pr-1" }, base: { ref: "main" } },
  });
  const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
  return { method: "POST", path: "/api/github/webhooks", headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": randomUUID(), "x-hub-signature-256": signature }, body, status: 202 };
}

interface ColdCase {
  label: string;
  runtime: "workerd" | "deno";
  hello: boolean;
  run(): Promise<ColdStart>;
}
const trees: [string, string][] = [["bot", root], ...(process.env.BEFORE ? [["bot before", process.env.BEFORE] as [string, string]] : [])];
const coldCases: ColdCase[] = [];
for (const runtime of ["workerd", "deno"] as const) {
  const launch = runtime === "workerd" ? workerdLaunch : denoLaunch;
  const hello = launchOptions(root);
  coldCases.push({ label: `${runtime} hello world`, runtime, hello: true, run: () => coldStart(launch(hello, true), helloRequest) });
  for (const [label, tree] of trees) {
    const bot = launchOptions(tree);
    const webhookFirst = launchOptions(tree);
    coldCases.push({ label: `${runtime} ${label}`, runtime, hello: false, run: () => coldStart(launch(bot, false), healthz) });
    coldCases.push({ label: `${runtime} ${label}, webhook first`, runtime, hello: false, run: () => coldStart(launch(webhookFirst, false), firstWebhook()) });
  }
}
const coldLoadBefore = load();
// Paired and interleaved: every round starts each case once, so the others' load falls on all alike.
const coldRuns = new Map<ColdCase, ColdStart[]>(coldCases.map((c) => [c, []]));
// The first start of each case creates its store and warms the OS file cache and Deno's code
// cache; the timed starts find them, as a restarted deployment does.
for (const c of coldCases) await c.run();
for (let i = 0; i < COLD_RUNS; i++) for (const c of coldCases) coldRuns.get(c)!.push(await c.run());
const coldLoadAfter = load();
for (const c of coldCases) {
  const first = coldRuns.get(c)![0]!;
  if (!c.hello && c.label.endsWith(" bot") && !/"kind":"(durable-object|deno-kv)"/.test(first.body)) throw new Error(`${c.label}: /healthz did not report its store: ${first.body}`);
}

// The Node wrapper `npm run start:workerd` uses (Miniflare starting workerd), for comparison only.
async function miniflareToFirstResponse(): Promise<number> {
  const t0 = performance.now();
  const worker = await startWorkerd({ ...coldEnv, HOST: "127.0.0.1", PORT: "0", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-edge-mf-")) });
  try {
    const res = await fetch(`${worker.url}/healthz`);
    await res.text();
    return performance.now() - t0;
  } finally {
    await worker.stop();
  }
}
const wrapperRuns: number[] = [];
for (let i = 0; i < 3; i++) wrapperRuns.push(await miniflareToFirstResponse());

// ------------------------------------------------------------- warm webhooks

const GOOD = (name: string) => hcpRecipe(name, { sizes: true });
const BROKEN = (name: string) => hcpRecipe(name, { sizes: false });

interface Target {
  url: string;
  stop(): Promise<void>;
}

async function reviews(label: string, start: (gh: FakeGitHub) => Promise<Target>): Promise<{ label: string; ackP99: number; ackP50: number; reviewP50: number; reviewP99: number }> {
  const gh = await startFakeGitHub({ appId: 1, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: 1, account: OWNER, accountType: "Organization" });
  gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: 1, files: { main: { "README.md": "# repo\n" } } });
  const target = await start(gh);
  let number = 0;
  const acks: number[] = [];
  const times: number[] = [];
  const review = async () => {
    number++;
    const head = number.toString(16).padStart(40, "0");
    const files: Record<string, string> = {};
    for (let i = 0; i < 5; i++) files[`src/megatron/bridge/recipes/fam/h100/m${number}_${i}.py`] = i === 0 ? BROKEN(`m${number}_${i}`) : GOOD(`m${number}_${i}`);
    gh.addCommit({ owner: OWNER, repo: REPO, branch: `pr-${number}`, base: "main", sha: head, files });
    gh.addPullRequest({ owner: OWNER, repo: REPO, number, head: { sha: head, ref: `pr-${number}` }, files: Object.entries(files).map(([filename, contents]) => ({ filename, contents, status: "added" as const })) });
    const payload = {
      action: "opened",
      number,
      installation: { id: 1 },
      repository: { id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main" },
      sender: { login: "author", id: 3 },
      pull_request: { number, state: "open", draft: false, html_url: `${gh.url}/${OWNER}/${REPO}/pull/${number}`, head: { sha: head, ref: `pr-${number}` }, base: { ref: "main" } },
    };
    const summaryPath = `/repos/${OWNER}/${REPO}/issues/${number}/comments`;
    const t0 = Date.now();
    const p0 = performance.now();
    const status = await deliverWebhook(`${target.url}/api/github/webhooks`, SECRET, "pull_request", payload);
    const ack = performance.now() - p0;
    if (status !== 200 && status !== 202) throw new Error(`${label}: webhook answered ${status}`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const last = gh.calls.find((c) => c.method === "POST" && c.path === summaryPath);
      if (last) return { ack, ms: last.timestamp - t0 };
      if (Date.now() > deadline) throw new Error(`${label}: no summary comment for PR ${number}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  await review(); // warm-up: grammar, token, bot login
  await review();
  for (let i = 0; i < RUNS; i++) {
    const r = await review();
    acks.push(r.ack);
    times.push(r.ms);
  }
  await target.stop();
  if (gh.violations.length) console.log(`  ${label}: the fake GitHub recorded ${gh.violations.length} spec violation(s)`);
  await gh.close();
  return { label, ackP50: percentile(acks, 50), ackP99: percentile(acks, 99), reviewP50: percentile(times, 50), reviewP99: percentile(times, 99) };
}

const edgeEnv = (gh: FakeGitHub) => ({ APP_ID: "1", PRIVATE_KEY: appKeys.privateKey, WEBHOOK_SECRET: SECRET, GHE_HOST: new URL(gh.url).host, GHE_PROTOCOL: "http", LOG_LEVEL: "silent", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-edge-bench-")) });
const edgeTarget = (p: EdgeProcess): Target => ({ url: p.url, stop: () => p.stop() });

// BENCH_PART=cold: sizes and cold starts only (the warm part takes minutes).
const warm = process.env.BENCH_PART !== "cold";
const node = warm && await reviews("node", async (gh) => {
  const bot = await startServer(botSettings({ githubUrl: gh.url, appId: 1, secret: SECRET }), { sweepIntervalMs: 0 });
  return { url: bot.url, stop: () => bot.stop() };
});
const workerd = warm && await reviews("workerd", async (gh) => edgeTarget(await startEdge("workerd", edgeEnv(gh))));
const deno = warm && await reviews("deno", async (gh) => edgeTarget(await startEdge("deno", edgeEnv(gh))));

// ------------------------------------------------------------------- report

console.log("hcp-bot edge benchmark (dist/edge, workerd and Deno from npm, fake GitHub on loopback)");
console.log(`  worker JS             ${kb(workerJs.bytes)} minified, ${kb(workerJs.gzip)} gzip (worker.js and its chunks; the entry alone ${kb(sizes.files["worker.js"]!.gzip)})   target <= 250 KB gzip: ${met(workerJs.gzip <= 250 * 1024)}`);
console.log(`  upload incl. WASM     ${kb(uploadGzip)} gzip (wrangler: ${wranglerFigure})   target <= 450 KB gzip: ${met(uploadGzip <= 450 * 1024)}`);
console.log(`  Deno entry            ${kb(sizes.js.deno.bytes)} minified, ${kb(sizes.js.deno.gzip)} gzip (deno.js and its chunks; the entry alone ${kb(sizes.files["deno.js"]!.gzip)})`);
console.log(`  spawn -> first response, median of ${COLD_RUNS} interleaved starts (${coldLoadBefore} before, ${coldLoadAfter} after; wall, then the process's CPU and its threads' wait for a core):`);
for (const c of coldCases) {
  const runs = coldRuns.get(c)!;
  const wall = median(runs.map((r) => r.wallMs));
  const hello = median(coldRuns.get(coldCases.find((h) => h.hello && h.runtime === c.runtime)!)!.map((r) => r.wallMs));
  const ratios = c.hello ? `${(wall / FLOOR_MS).toFixed(2)}x the ${FLOOR_MS} ms floor` : `${(wall / hello).toFixed(2)}x this hello world, ${(wall / FLOOR_MS).toFixed(2)}x the ${FLOOR_MS} ms floor`;
  const target = c.hello ? "" : `   target <= 100 ms: ${met(wall <= 100)}`;
  console.log(`    ${c.label.padEnd(30)} ${ms(wall).padStart(9)} (cpu ${ms(median(runs.map((r) => r.cpuMs)))}, wait ${ms(median(runs.map((r) => r.waitMs)))}; ${ratios})${target}`);
}
console.log(`    (npm run start:workerd's wrapper, Node + Miniflare -> first /healthz: median ${ms(median(wrapperRuns))} of 3; not the runtime's own start)`);
for (const r of node && workerd && deno ? [node, workerd, deno] : []) {
  const ratio = r.reviewP99 / (node as { reviewP99: number }).reviewP99;
  console.log(
    `  ${r.label.padEnd(8)} webhook answer p50 ${ms(r.ackP50)} p99 ${ms(r.ackP99)}${r.label === "node" ? "" : `   target p99 <= 50 ms: ${met(r.ackP99 <= 50)}`}; 5-file review p50 ${ms(r.reviewP50)} p99 ${ms(r.reviewP99)}${r.label === "node" ? " (the reference)" : ` = ${ratio.toFixed(2)}x Node   target <= 1.5x: ${met(ratio <= 1.5)}`}`,
  );
}
