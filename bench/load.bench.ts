// `npm run bench:load`: two replicas (real `hcp-bot serve` processes) on one real Redis,
// against the fake GitHub and the fake Slack on loopback. For BENCH_DURATION_S (default 60)
// seconds, 200 signed webhooks a second (BENCH_RATE), spread over both replicas: mostly PR
// comments the bot reads and ignores, plus BENCH_REVIEWS_PER_S pushes that each start a
// review, every one of those also redelivered to the other replica; then 100 concurrent
// Slack `/hcp smoke` commands (BENCH_SLACK), each retried on the other replica. It prints the
// answer latency (p50/p99), errors, duplicates counted in the fake GitHub (a head SHA with
// two check runs, a request with two dispatches) and each replica's RSS, against the budgets:
// p99 < 100 ms, 0 errors, 0 duplicates, RSS < 300 MB per replica.
import { createHmac, randomUUID } from "node:crypto";
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import { startFakeGitHub } from "../test/support/fake-github/index.ts";
import { startFakeSlack } from "../test/support/fake-slack/index.ts";
import { appKeys, hcpRecipe } from "../test/support/bot-harness.ts";
import { startRedis } from "../test/support/redis.ts";
import { startReplica, stopReplica, waitUntil, type Replica } from "../test/support/replicas.ts";
import { addSmokeRepo, SMOKE_RECIPE_FILE, type FlowRepo } from "../test/support/smoke-flow.ts";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 60);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const REVIEWS_PER_S = Number(process.env.BENCH_REVIEWS_PER_S ?? 2);
const SLACK_COMMANDS = Number(process.env.BENCH_SLACK ?? 100);
const SECRET = "load-secret";
const SLACK_SECRET = "load-slack-secret";
const APP_ID = 9191;
const R: FlowRepo = { owner: "acme", repo: "mb", installation: 31 };
const BUDGET = { p99Ms: 100, errors: 0, duplicates: 0, rssMb: 300 };

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : Number.NaN;
}

const redis = await startRedis();
const gh = await startFakeGitHub({ appId: APP_ID, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey, validateResponses: false });
const slack = await startFakeSlack({ token: "xoxb-test" });
gh.addInstallation({ id: R.installation, account: R.owner, accountType: "Organization" });
addSmokeRepo(gh, R);
gh.addCommit({ owner: R.owner, repo: R.repo, branch: "main", files: { ".github/hcp-bot.yml": "smoke:\n  quotas: {per_user_per_day: 100000, max_queued: 100000}\nslack:\n  users: {U0LOAD: maint}\n" } });
gh.setPermission("maint", "write");
gh.setPermission("author", "write");

const env = { SLACK_SIGNING_SECRET: SLACK_SECRET, SLACK_BOT_TOKEN: "xoxb-test", SLACK_API_URL: slack.apiUrl, SLACK_TEAM_ID: "T0LOAD", LOG_LEVEL: "error" };
const replicas: Replica[] = await Promise.all(
  ["load-a", "load-b"].map((name) => startReplica({ name, githubUrl: gh.url, appId: APP_ID, secret: SECRET, redisUrl: redis.url, prefix: "load:", extra: env })),
);
const agents = replicas.map(() => new Agent({ keepAlive: true, maxSockets: 256 }));

interface Sample {
  ms: number;
  ok: boolean;
}
const samples: Sample[] = [];
let failures = 0;

function post(i: number, path: string, body: string, headers: Record<string, string>): Promise<void> {
  const replica = replicas[i % replicas.length]!;
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port: replica.port, method: "POST", path, agent: agents[i % replicas.length], headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      res.on("end", () => {
        samples.push({ ms: performance.now() - started, ok: res.statusCode === 200 });
        resolve();
      });
    });
    req.on("error", () => {
      failures++;
      resolve();
    });
    req.end(body);
  });
}

function webhook(i: number, event: string, payload: object, id = randomUUID()): Promise<void> {
  const body = JSON.stringify(payload);
  return post(i, "/api/github/webhooks", body, {
    "content-type": "application/json",
    "x-github-event": event,
    "x-github-delivery": id,
    "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
  });
}

const repository = { id: 1, name: R.repo, full_name: `${R.owner}/${R.repo}`, owner: { login: R.owner, id: 2, type: "Organization" }, default_branch: "main" };
let prCounter = 0;
const reviewShas = new Set<string>();

function openPr(text: string): { number: number; sha: string } {
  const number = ++prCounter;
  const sha = randomUUID().replace(/-/g, "").padEnd(40, "a").slice(0, 40);
  gh.addCommit({ owner: R.owner, repo: R.repo, branch: `pr-${number}`, base: "main", sha, files: { [SMOKE_RECIPE_FILE]: text } });
  gh.addPullRequest({ owner: R.owner, repo: R.repo, number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: SMOKE_RECIPE_FILE, contents: text, status: "modified" }] });
  return { number, sha };
}

/** A comment that is no command: verified, parsed, ignored (most of a busy repository's events). */
function chatter(i: number): Promise<void> {
  return webhook(i, "issue_comment", {
    action: "created",
    installation: { id: R.installation },
    repository,
    sender: { login: "author", id: 3, type: "User" },
    issue: { number: 1, pull_request: { url: `${gh.apiUrl}/repos/${R.owner}/${R.repo}/pulls/1` }, user: { login: "author" } },
    comment: { id: 1e6 + i, body: "LGTM, thanks!", user: { login: "author", id: 3, type: "User" } },
  });
}

/** A PR opened: a review; the same delivery also reaches the other replica (a redelivery). */
function review(i: number): Promise<void> {
  const pr = openPr(hcpRecipe("llama3_8b", { sizes: i % 2 === 0 }));
  reviewShas.add(pr.sha);
  const payload = {
    action: "opened",
    installation: { id: R.installation },
    repository,
    sender: { login: "author", id: 3, type: "User" },
    pull_request: { number: pr.number, draft: false, html_url: `${gh.url}/${R.owner}/${R.repo}/pull/${pr.number}`, head: { sha: pr.sha, ref: `pr-${pr.number}`, repo: repository }, base: { sha: "b".repeat(40), ref: "main", repo: repository }, user: { login: "author", id: 3, type: "User" } },
  };
  const id = randomUUID();
  return Promise.all([webhook(i, "pull_request", payload, id), webhook(i + 1, "pull_request", payload, id)]).then(() => {});
}

function slashCommand(i: number, text: string, triggerId: string, retry: boolean): Promise<void> {
  const body = new URLSearchParams({ team_id: "T0LOAD", channel_id: "C0LOAD", user_id: "U0LOAD", command: "/hcp", text, response_url: slack.responseUrl(), trigger_id: triggerId }).toString();
  const ts = Math.floor(Date.now() / 1000);
  return post(i, "/slack/events", body, {
    "content-type": "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`,
    ...(retry ? { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } : {}),
  });
}

const rss = replicas.map(() => 0);
const sampler = setInterval(() => replicas.forEach((r, k) => (rss[k] = Math.max(rss[k]!, r.rssMb()))), 500);

// Warm-up (module loading, the Redis scripts, tree-sitter), not measured.
await Promise.all([chatter(0), chatter(1), review(0)]);
samples.length = 0;

const inFlight: Promise<void>[] = [];
const ticksPerSecond = 20;
const perTick = RATE / ticksPerSecond;
const started = performance.now();
let sent = 0;
for (let tick = 0; tick < DURATION_S * ticksPerSecond; tick++) {
  const reviewTick = REVIEWS_PER_S > 0 && tick % Math.max(1, Math.round(ticksPerSecond / REVIEWS_PER_S)) === 0;
  for (let k = 0; k < perTick; k++, sent++) inFlight.push(reviewTick && k === 0 ? review(sent) : chatter(sent));
  const next = started + ((tick + 1) * 1000) / ticksPerSecond;
  await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
}
await Promise.all(inFlight.splice(0));
const webhookSamples = samples.splice(0);
const webhookWall = (performance.now() - started) / 1000;

// 100 concurrent /hcp smoke commands, each on its own PR, each retried on the other replica.
const smokePrs = Array.from({ length: SLACK_COMMANDS }, () => openPr(hcpRecipe("llama3_8b", { sizes: true })));
const dispatchesBefore = gh.state.dispatches.length;
await Promise.all(smokePrs.map((pr, i) => {
  const trigger = `${Date.now()}.${i}.${randomUUID().replace(/-/g, "")}`;
  const text = `smoke ${R.owner}/${R.repo}#${pr.number}`;
  return Promise.all([slashCommand(i, text, trigger, false), slashCommand(i + 1, text, trigger, true)]);
}));
const slackSamples = samples.splice(0);

// The work after the answers drains; then the fake is asked what was done twice.
await waitUntil(() => gh.state.dispatches.length - dispatchesBefore >= SLACK_COMMANDS, "the Slack commands' dispatches", 300_000).catch(() => {});
let last = -1;
let since = Date.now();
await waitUntil(() => {
  if (gh.calls.length !== last) [last, since] = [gh.calls.length, Date.now()];
  return Date.now() - since > 3000;
}, "the replicas' work to finish", 600_000).catch(() => {});
clearInterval(sampler);

const checkRunsBySha = new Map<string, number>();
for (const c of gh.calls) {
  const body = c.body as { name?: string; head_sha?: string } | undefined;
  if (c.method === "POST" && c.path.endsWith("/check-runs") && body?.name === "HCP review" && body.head_sha) checkRunsBySha.set(body.head_sha, (checkRunsBySha.get(body.head_sha) ?? 0) + 1);
}
const reviewDuplicates = [...checkRunsBySha.values()].reduce((n, c) => n + Math.max(0, c - 1), 0);
const reviewsDone = [...reviewShas].filter((s) => checkRunsBySha.has(s)).length;
const dispatchesByPr = new Map<string, number>();
for (const d of gh.state.dispatches.slice(dispatchesBefore)) {
  const pr = (d.inputs as Record<string, string>).pr!;
  dispatchesByPr.set(pr, (dispatchesByPr.get(pr) ?? 0) + 1);
}
const dispatchDuplicates = [...dispatchesByPr.values()].reduce((n, c) => n + Math.max(0, c - 1), 0);
const all = [...webhookSamples, ...slackSamples];
const errors = failures + all.filter((s) => !s.ok).length;
const duplicates = reviewDuplicates + dispatchDuplicates;
const p99 = percentile(all.map((s) => s.ms), 99);

const fmt = (n: number) => n.toFixed(1);
const verdict = (ok: boolean) => (ok ? "pass" : "FAIL");
console.log(`bench:load: 2 replicas on one Redis, ${webhookSamples.length} signed webhooks in ${webhookWall.toFixed(1)} s (${(webhookSamples.length / webhookWall).toFixed(0)}/s, ${reviewShas.size} of them reviews, each also redelivered to the other replica), then ${SLACK_COMMANDS} concurrent /hcp smoke commands, each retried on the other replica`);
console.log(`  webhooks: p50 ${fmt(percentile(webhookSamples.map((s) => s.ms), 50))} ms   p99 ${fmt(percentile(webhookSamples.map((s) => s.ms), 99))} ms   max ${fmt(Math.max(...webhookSamples.map((s) => s.ms)))} ms`);
console.log(`  slack:    p50 ${fmt(percentile(slackSamples.map((s) => s.ms), 50))} ms   p99 ${fmt(percentile(slackSamples.map((s) => s.ms), 99))} ms   max ${fmt(Math.max(...slackSamples.map((s) => s.ms)))} ms`);
console.log(`  work done: ${reviewsDone}/${reviewShas.size} reviews, ${dispatchesByPr.size}/${SLACK_COMMANDS} dispatches`);
console.log(`  p99 answer ${fmt(p99)} ms        budget < ${BUDGET.p99Ms} ms   ratio ${(p99 / BUDGET.p99Ms).toFixed(2)}   ${verdict(p99 < BUDGET.p99Ms)}`);
console.log(`  errors ${errors} (${failures} connection failures)        budget ${BUDGET.errors}   ${verdict(errors === 0)}`);
console.log(`  duplicates ${duplicates} (${reviewDuplicates} review check runs, ${dispatchDuplicates} dispatches)   budget ${BUDGET.duplicates}   ${verdict(duplicates === 0)}`);
replicas.forEach((r, k) => console.log(`  RSS ${r.name} max ${fmt(rss[k]!)} MB   budget < ${BUDGET.rssMb} MB   ratio ${(rss[k]! / BUDGET.rssMb).toFixed(2)}   ${verdict(rss[k]! < BUDGET.rssMb)}`));
if (gh.violations.length || slack.violations.length) console.log("  violations:", [...gh.violations, ...slack.violations].slice(0, 5));

for (const a of agents) a.destroy();
await Promise.all(replicas.map((r) => stopReplica(r, "SIGTERM")));
await gh.close();
await slack.close();
await redis.dispose();
const passed = p99 < BUDGET.p99Ms && errors === 0 && duplicates === 0 && rss.every((m) => m < BUDGET.rssMb);
process.exitCode = passed ? 0 : 1;
