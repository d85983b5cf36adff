// `npm run bench:edge`: the edge deployment's budgets (issue 9), printed as figures and
// ratios. Sizes of the built worker (and wrangler's own upload figure); spawn to first
// response on workerd and Deno next to a hello world on the same runtime; the webhook
// answer and the 5-file review (webhook -> last post, fake GitHub on loopback) warm, on
// workerd, Deno and, as the reference, the Node server measured the same way here.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type AddressInfo } from "node:net";
import { join, relative } from "node:path";
import { performance } from "node:perf_hooks";
import { buildEdge, EDGE_DIR } from "../scripts/build-edge.ts";
import { readWranglerConfig, startWorkerd } from "../scripts/start-workerd.ts";
import { startServer } from "../src/node/server.ts";
import { appKeys, botSettings, deliverWebhook, hcpRecipe } from "../test/support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.ts";
import { startEdge, type EdgeProcess } from "../test/edge/runtimes.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const COLD_RUNS = 7;
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
const wasmGzip = ["web-tree-sitter.wasm", "tree-sitter-python.wasm", "anchor-scan.wasm"].reduce((n, f) => n + sizes[f]!.gzip, 0);
const uploadGzip = sizes["worker.js"]!.gzip + wasmGzip;
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

/** A port the OS says is free now (other servers share this machine). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Spawns `command` and polls `url` until it answers 200: the time from spawn to that answer. */
async function spawnToFirstResponse(start: (port: number) => ChildProcess, path: string): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = start(port);
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        await res.text();
        if (res.ok) return performance.now() - t0;
      } catch {
        /* not listening yet */
      }
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  } finally {
    child.kill("SIGKILL");
  }
}

function median(xs: number[]): number {
  return percentile(xs, 50);
}

const coldDir = mkdtempSync(join(tmpdir(), "hcp-edge-cold-"));
const botEnv = { APP_ID: "1", PRIVATE_KEY: appKeys.privateKey, WEBHOOK_SECRET: SECRET, LOG_LEVEL: "silent", GHE_HOST: "127.0.0.1:1", GHE_PROTOCOL: "http" };

/** A workerd config (capnp) serving the built worker with its Durable Object on local disk. */
function workerdConfig(port: number, hello: boolean): string {
  const file = join(coldDir, `${hello ? "hello" : "bot"}-${port}.capnp`);
  // capnp embeds are relative to the config file.
  const rel = (name: string) => relative(coldDir, join(EDGE_DIR, name));
  const modules = hello
    ? `[(name = "hello.js", esModule = "export default { fetch() { return new Response('ok'); } };")]`
    : `[(name = "worker.js", esModule = embed "${rel("worker.js")}"),
        (name = "web-tree-sitter.wasm", wasm = embed "${rel("web-tree-sitter.wasm")}"),
        (name = "tree-sitter-python.wasm", wasm = embed "${rel("tree-sitter-python.wasm")}"),
        (name = "anchor-scan.wasm", wasm = embed "${rel("anchor-scan.wasm")}")]`;
  const bindings = hello
    ? "[]"
    : `[${Object.entries(botEnv)
        .map(([k, v]) => `(name = "${k}", text = ${JSON.stringify(v)})`)
        .join(", ")}, (name = "STORE", durableObjectNamespace = "HcpStore")]`;
  const storage = hello ? "" : `durableObjectNamespaces = [(className = "HcpStore", uniqueKey = "hcp-bot-store", enableSql = true)], durableObjectStorage = (localDisk = "disk"),`;
  const diskDir = mkdtempSync(join(coldDir, "do-"));
  writeFileSync(
    file,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .w), (name = "disk", disk = (path = "${diskDir}", writable = true))],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const w :Workerd.Worker = (modules = ${modules}, compatibilityDate = "${readWranglerConfig().compatibility_date}", bindings = ${bindings}, ${storage});
`,
  );
  return file;
}

async function coldStarts(label: string, start: (port: number) => ChildProcess, path: string): Promise<number> {
  await spawnToFirstResponse(start, path); // first run warms the OS file cache
  const runs: number[] = [];
  for (let i = 0; i < COLD_RUNS; i++) runs.push(await spawnToFirstResponse(start, path));
  void label;
  return median(runs);
}

const denoEnv = (port: number, extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", HOST: "127.0.0.1", PORT: String(port), ...extra });
const helloDeno = join(coldDir, "hello.js");
writeFileSync(helloDeno, `Deno.serve({ hostname: "127.0.0.1", port: Number(Deno.env.get("PORT")), onListen() {} }, () => new Response("ok"));\n`);

const cold = {
  workerdHello: await coldStarts("workerd hello", (port) => spawn(workerdBin, ["serve", workerdConfig(port, true)], { stdio: "ignore" }), "/"),
  workerdBot: await coldStarts("workerd bot", (port) => spawn(workerdBin, ["serve", workerdConfig(port, false)], { stdio: "ignore" }), "/healthz"),
  denoHello: await coldStarts("deno hello", (port) => spawn(denoBin, ["run", "--allow-net", "--allow-env", helloDeno], { stdio: "ignore", env: denoEnv(port) }), "/"),
  denoBot: await coldStarts(
    "deno bot",
    (port) => spawn(denoBin, ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", join(EDGE_DIR, "deno.js")], { cwd: root, stdio: "ignore", env: denoEnv(port, { ...botEnv, HCP_DATA_DIR: mkdtempSync(join(coldDir, "kv-")) }) }),
    "/healthz",
  ),
};

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

const node = await reviews("node", async (gh) => {
  const bot = await startServer(botSettings({ githubUrl: gh.url, appId: 1, secret: SECRET }), { sweepIntervalMs: 0 });
  return { url: bot.url, stop: () => bot.stop() };
});
const workerd = await reviews("workerd", async (gh) => edgeTarget(await startEdge("workerd", edgeEnv(gh))));
const deno = await reviews("deno", async (gh) => edgeTarget(await startEdge("deno", edgeEnv(gh))));

// ------------------------------------------------------------------- report

console.log("hcp-bot edge benchmark (dist/edge, workerd and Deno from npm, fake GitHub on loopback)");
console.log(`  worker JS             ${kb(sizes["worker.js"]!.bytes)} minified, ${kb(sizes["worker.js"]!.gzip)} gzip   target <= 250 KB gzip: ${met(sizes["worker.js"]!.gzip <= 250 * 1024)}`);
console.log(`  upload incl. WASM     ${kb(uploadGzip)} gzip (wrangler: ${wranglerFigure})   target <= 450 KB gzip: ${met(uploadGzip <= 450 * 1024)}`);
console.log(`  Deno entry            ${kb(sizes["deno.js"]!.bytes)} minified, ${kb(sizes["deno.js"]!.gzip)} gzip`);
for (const [name, bot, hello] of [["workerd", cold.workerdBot, cold.workerdHello], ["deno", cold.denoBot, cold.denoHello]] as const) {
  console.log(`  spawn -> first /healthz on ${name.padEnd(7)} median ${ms(bot)} (hello world ${ms(hello)}, ${(bot / hello).toFixed(2)}x; vs the ~38 ms floor ${(bot / 38).toFixed(2)}x)   target <= 100 ms: ${met(bot <= 100)}`);
}
for (const r of [node, workerd, deno]) {
  const ratio = r.reviewP99 / node.reviewP99;
  console.log(
    `  ${r.label.padEnd(8)} webhook answer p50 ${ms(r.ackP50)} p99 ${ms(r.ackP99)}${r.label === "node" ? "" : `   target p99 <= 50 ms: ${met(r.ackP99 <= 50)}`}; 5-file review p50 ${ms(r.reviewP50)} p99 ${ms(r.reviewP99)}${r.label === "node" ? " (the reference)" : ` = ${ratio.toFixed(2)}x Node   target <= 1.5x: ${met(ratio <= 1.5)}`}`,
  );
}
