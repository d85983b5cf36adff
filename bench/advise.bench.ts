// `npm run bench:advise [ROOT]`: what `/hcp advise` costs (issue 28.4). The CLI: wall time and
// peak RSS of `hcp-bot advise` at the advisor's bound (65,536 GPUs) and past it. The server:
// 20 signed Slack `/hcp advise` commands at the bound at once, with the analysis thread
// (HCP_ANALYSIS_THREADS=1, the default) and without (0: rendered on the answering thread, as
// before), while /healthz is asked every 5 ms: the longest /healthz answer is how long the
// answering thread was held. And the replies' rendering alone. ROOT names another checkout's
// CLI to measure (its dist/ built).
import { spawnSync } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { appKeys, botSettings } from "../test/support/bot-harness.ts";
import { startServer } from "../src/server/server.ts";
import { adviseReplyMarkdown, adviseReplySlack } from "../src/core/render/layout/advice.ts";
import { startFakeGitHub } from "../test/support/fake-github/index.ts";
import { startFakeSlack } from "../test/support/fake-slack/index.ts";

const here = join(import.meta.dirname, "..");
const root = process.argv[2] ?? here;
const mb = (bytes: number) => (bytes / 1e6).toFixed(0);
const SLACK_SECRET = "bench-advise-secret";
const COMMANDS = 20;
const serverThreads = process.env.BENCH_ADVISE_SERVER_THREADS;

if (serverThreads === undefined) {
  measureCli();
  measureRender();
  console.log(`server: ${COMMANDS} signed Slack "/hcp advise cp=8 nodes=1024 gpus_per_node=64" (65,536 GPUs) at once, /healthz every 5 ms (each server in a process of its own):`);
  for (const threads of ["0", "1"]) {
    const run = spawnSync(process.execPath, ["--import", "tsx", import.meta.filename], { encoding: "utf8", env: { ...process.env, BENCH_ADVISE_SERVER_THREADS: threads }, timeout: 300_000 });
    process.stdout.write(run.stdout.split("\n").filter((l) => l.startsWith("  HCP_")).join("\n") + "\n");
    if (run.status !== 0) process.stdout.write(run.stderr.slice(-2000));
  }
} else {
  await measureServer(serverThreads);
}

function measureCli(): void {
console.log(`hcp-bot advise (CLI from ${root}):`);
for (const args of [
  ["--cp", "8", "--nodes", "1024", "--gpus-per-node", "64"],
  ["--cp", "8", "--nodes", "4096", "--gpus-per-node", "1024"],
  ["--cp", "8", "--nodes", "1000000"],
]) {
  const started = performance.now();
  const run = spawnSync(process.execPath, ["--import", join(here, "bench/support/maxrss.mjs"), join(root, "bin/hcp-bot.js"), "advise", ...args], { encoding: "utf8", timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - started;
  const rss = Number(/maxrss-kib (\d+)/.exec(run.stderr)?.[1] ?? NaN) * 1024;
  const said = run.status === 0 ? `${run.stdout.length} characters` : (run.stderr.split("\n").find((l) => l.startsWith("hcp-bot:")) ?? run.signal ?? "").slice(0, 90);
  console.log(`  ${args.join(" ").padEnd(42)} exit ${run.status ?? run.signal}  ${ms.toFixed(0).padStart(6)} ms  peak RSS ${mb(rss)} MB  ${said}`);
}
}

/** The replies' rendering alone, in this thread: 12 of each at the bound (the machine's load shows in the median). */
function measureRender(): void {
  const command = { kind: "advise", cp: 8, domainGpus: 64, domain: "node", nodes: 1024 } as const;
  for (const [name, render] of [["PR comment (Markdown)", adviseReplyMarkdown], ["Slack message", adviseReplySlack]] as const) {
    const ms = Array.from({ length: 12 }, () => {
      const t = performance.now();
      render(command);
      return performance.now() - t;
    }).sort((a, b) => a - b);
    console.log(`  render ${name.padEnd(22)} at 65,536 GPUs: min ${ms[0]!.toFixed(0)} ms, median ${ms[6]!.toFixed(0)} ms`);
  }
}

async function measureServer(threads: string): Promise<void> {
  const gh = await startFakeGitHub({ appId: 1, appPublicKey: appKeys.publicKey, validateResponses: false });
  const slack = await startFakeSlack();
  const bot = await startServer(
    botSettings({ githubUrl: gh.url, appId: 1, secret: "bench", extra: { SLACK_SIGNING_SECRET: SLACK_SECRET, SLACK_BOT_TOKEN: "xoxb-test", SLACK_API_URL: slack.apiUrl, HCP_ANALYSIS_THREADS: threads } }),
    { sweepIntervalMs: 0 },
  );
  const agent = new Agent({ keepAlive: true, maxSockets: COMMANDS + 2 });
  const port = Number(new URL(bot.url).port);
  const send = (method: string, path: string, body = "", headers: Record<string, string> = {}) =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, method, path, agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end(body);
    });
  const advise = (user: string) => {
    const body = new URLSearchParams({ team_id: "T0BENCH", channel_id: "C0BENCH", user_id: user, command: "/hcp", text: "advise cp=8 nodes=1024 gpus_per_node=64", response_url: slack.responseUrl(), trigger_id: randomUUID() }).toString();
    const ts = Math.floor(Date.now() / 1000);
    const signature = `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`;
    return send("POST", "/slack/events", body, { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(ts), "x-slack-signature": signature });
  };
  await advise("U0WARM"); // module loading and the thread's start
  let peak = process.memoryUsage().rss;
  const before = peak;
  let busy = true;
  let longest = 0;
  const probe = (async () => {
    while (busy) {
      const t = performance.now();
      await send("GET", "/healthz");
      longest = Math.max(longest, performance.now() - t);
      peak = Math.max(peak, process.memoryUsage().rss);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const started = performance.now();
  const statuses = await Promise.all(Array.from({ length: COMMANDS }, (_, i) => advise(`U0B${i}`).then((s) => ((peak = Math.max(peak, process.memoryUsage().rss)), s))));
  const wall = performance.now() - started;
  busy = false;
  await probe;
  console.log(
    `  HCP_ANALYSIS_THREADS=${threads}: answers ${[...new Set(statuses)].join(",")} in ${wall.toFixed(0)} ms; longest /healthz meanwhile ${longest.toFixed(0)} ms; RSS ${mb(before)} -> peak ${mb(peak)} MB`,
  );
  agent.destroy();
  await bot.stop();
  await gh.close();
  await slack.close();
}
