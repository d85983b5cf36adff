// `npm run bench:load`: two replicas (real `hcp-bot serve` processes) on one real Redis,
// against the fake GitHub and the fake Slack on loopback. For BENCH_LOAD_SECONDS (default 60;
// 10-15 for a short run while developing) seconds, 200 signed webhooks a second (BENCH_RATE),
// spread over both replicas: mostly PR comments the bot reads and ignores, plus
// BENCH_REVIEWS_PER_S pushes that each start a review, every one of those also redelivered to
// the other replica. Then 100 concurrent Slack `/hcp smoke` commands (BENCH_SLACK), and once
// they are answered their retries, each on the other replica; before them, one such burst
// unmeasured (warm code and open connections, as a load balancer keeps them).
// It prints the answer latency (p50/p99) per kind and per Slack wave, the floor (the same
// Slack waves answered by two bare node:http servers), the CPU each process spent per ack,
// errors with their causes, duplicates counted in the fake GitHub's state (a head SHA with two
// review check runs, a PR with two summary comments or two dispatches) and each replica's RSS,
// against the budgets: p99 < 100 ms for webhooks and for Slack, 0 errors, 0 duplicates,
// RSS < 300 MB per replica. Progress goes to stderr as it happens, and every wait is bounded:
// a replica that never does the work is reported, not waited on in silence.
// BENCH_CPU_PROF_DIR=DIR: the replicas write V8 CPU profiles there, and the Slack waves'
// windows on the profiles' clock are printed.
import { spawn } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { CHECK_NAME, SUMMARY_MARKER } from "../src/core/review/plan.ts";
import { startFakeGitHub } from "../test/support/fake-github/index.ts";
import { startFakeSlack } from "../test/support/fake-slack/index.ts";
import { appKeys, hcpRecipe } from "../test/support/bot-harness.ts";
import { startRedis } from "../test/support/redis.ts";
import { cpuMsOf, startReplica, stopReplica, type Replica } from "../test/support/replicas.ts";
import { addSmokeRepo, SMOKE_RECIPE_FILE, type FlowRepo } from "../test/support/smoke-flow.ts";

const DURATION_S = Number(process.env.BENCH_LOAD_SECONDS ?? process.env.BENCH_DURATION_S ?? 60);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const REVIEWS_PER_S = Number(process.env.BENCH_REVIEWS_PER_S ?? 2);
const SLACK_COMMANDS = Number(process.env.BENCH_SLACK ?? 100);
/** How long the work after the answers may take before what is missing is reported. */
const DRAIN_S = Number(process.env.BENCH_DRAIN_SECONDS ?? 120);
const SECRET = "load-secret";
const SLACK_SECRET = "load-slack-secret";
const APP_ID = 9191;
const R: FlowRepo = { owner: "acme", repo: "mb", installation: 31 };
const BUDGET = { p99Ms: 100, errors: 0, duplicates: 0, rssMb: 300 };

const t0 = performance.now();
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
/** Progress on stderr, so a slow phase shows where it is. */
const phase = (what: string) => process.stderr.write(`bench:load [${((performance.now() - t0) / 1000).toFixed(1)} s, load ${load()}] ${what}\n`);

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : Number.NaN;
}

/** Resolves once neither fake was called for a second (or after `ms`): the replicas' work is done. */
async function settled(ms: number): Promise<void> {
  let seen = -1;
  let since = Date.now();
  await within(ms, () => {
    const now = gh.calls.length + slack.calls.length;
    if (now !== seen) [seen, since] = [now, Date.now()];
    return Date.now() - since >= 1000;
  });
}

/** Polls `check` until it holds or `ms` pass; false then (the caller reports what is missing). */
async function within(ms: number, check: () => boolean): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

phase(`starting Redis, the fakes and two replicas (${DURATION_S} s of webhooks at ${RATE}/s, then ${SLACK_COMMANDS} Slack commands)`);
const redis = await startRedis();
const gh = await startFakeGitHub({ appId: APP_ID, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey, validateResponses: false });
const slack = await startFakeSlack({ token: "xoxb-test" });
gh.addInstallation({ id: R.installation, account: R.owner, accountType: "Organization" });
addSmokeRepo(gh, R);
// On top of main: the smoke workflow addSmokeRepo installed stays (a dispatch reads it first).
gh.addCommit({ owner: R.owner, repo: R.repo, branch: "main", base: "main", files: { ".github/hcp-bot.yml": "smoke:\n  quotas: {per_user_per_day: 100000, max_queued: 100000}\nslack:\n  users: {U0LOAD: maint}\n" } });
gh.setPermission("maint", "write");
gh.setPermission("author", "write");

// HCP_* settings in the bench's environment reach the replicas (HCP_ANALYSIS_THREADS=0 for a before/after pair).
const hcpSettings = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith("HCP_") && e[1] !== undefined));
const env = { ...hcpSettings, SLACK_SIGNING_SECRET: SLACK_SECRET, SLACK_BOT_TOKEN: "xoxb-test", SLACK_API_URL: slack.apiUrl, SLACK_TEAM_ID: "T0LOAD", LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error", ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}) };
// BENCH_CPU_PROF_DIR: each replica writes a V8 CPU profile there when it stops (for where an answer's time goes).
const nodeArgs = process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : undefined;
const replicas: Replica[] = await Promise.all(
  ["load-a", "load-b"].map((name) => startReplica({ name, githubUrl: gh.url, appId: APP_ID, secret: SECRET, redisUrl: redis.url, prefix: "load:", extra: env, ...(nodeArgs ? { nodeArgs } : {}) })),
);
// Requests are sent and timed on their own thread (bench/support/load-sender.mjs), away from the fakes.
const sender = new Worker(new URL("./support/load-sender.mjs", import.meta.url));
/** What the sender thread takes and gives back (bench/support/load-sender.mjs). */
interface SendOrder { id: number; port: number; path: string; headers: Record<string, string>; body: string }
interface SendResult { id: number; ms: number; status: number | null; text: string; error?: string }
const pending = new Map<number, (r: SendResult) => void>();
let nextOrder = 0;
sender.on("message", (r: SendResult) => {
  pending.get(r.id)?.(r);
  pending.delete(r.id);
});

type Kind = "webhook" | "slack";
interface Sample {
  kind: Kind;
  /** The GitHub event of a webhook; "first" or "retry" for a Slack command. */
  event?: string;
  ms: number;
}
const samples: Sample[] = [];
/** Each answer that is not a 200 and each failed connection, by cause. */
const errorCauses = new Map<string, number>();
function countError(cause: string): void {
  errorCauses.set(cause, (errorCauses.get(cause) ?? 0) + 1);
}

/** Where requests go and where their timings are kept: the replicas, or bench:load's floor (two bare servers). */
interface Targets {
  servers: readonly { name: string; port: number }[];
  samples: Sample[];
}

function post(kind: Kind, i: number, path: string, body: string, headers: Record<string, string>, to: Targets = { servers: replicas, samples }): Promise<void> {
  const replica = to.servers[i % to.servers.length]!;
  const id = nextOrder++;
  return new Promise((resolve) => {
    pending.set(id, (r) => {
      if (r.error) countError(`${kind} ${replica.name}: ${r.error}`);
      else {
        // A webhook's GitHub event; a Slack command's wave (the first delivery or Slack's retry).
        const event = headers["x-github-event"] ?? (kind === "slack" ? (headers["x-slack-retry-num"] ? "retry" : "first") : undefined);
        to.samples.push({ kind, ...(event ? { event } : {}), ms: r.ms });
        if (r.status !== 200) countError(`${kind} ${replica.name}: HTTP ${r.status} ${r.text.slice(0, 120)}`);
      }
      resolve();
    });
    sender.postMessage({ id, port: replica.port, path, headers, body } satisfies SendOrder);
  });
}

function webhook(i: number, event: string, payload: object, id = randomUUID()): Promise<void> {
  const body = JSON.stringify(payload);
  return post("webhook", i, "/api/github/webhooks", body, {
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

function slashCommand(i: number, text: string, triggerId: string, responseUrl: string, retry: boolean, to?: Targets): Promise<void> {
  const body = new URLSearchParams({ team_id: "T0LOAD", channel_id: "C0LOAD", user_id: "U0LOAD", command: "/hcp", text, response_url: responseUrl, trigger_id: triggerId }).toString();
  const ts = Math.floor(Date.now() / 1000);
  return post("slack", i, "/slack/events", body, {
    "content-type": "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`,
    ...(retry ? { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } : {}),
  }, to);
}

interface SlackCommand {
  i: number;
  pr: number;
  text: string;
  trigger: string;
  responseUrl: string;
}

/** BENCH_SLACK `/hcp smoke` commands, each on a PR of its own. */
function newCommands(): SlackCommand[] {
  return Array.from({ length: SLACK_COMMANDS }, (_, i) => {
    const pr = openPr(hcpRecipe("llama3_8b", { sizes: true })).number;
    return { i, pr, text: `smoke ${R.owner}/${R.repo}#${pr}`, trigger: `${Date.now()}.${i}.${randomUUID().replace(/-/g, "")}`, responseUrl: slack.responseUrl() };
  });
}

/** The Slack waves as the replicas get them: the commands at once, then their retries at once. */
async function slackWaves(commands: SlackCommand[], to?: Targets): Promise<{ firstWaveMs: number; firstWaveCpu: CpuUse }> {
  const started = performance.now();
  const startUs = process.hrtime.bigint() / 1000n;
  const before = cpuNow();
  await Promise.all(commands.map((c) => slashCommand(c.i, c.text, c.trigger, c.responseUrl, false, to)));
  const firstWaveMs = performance.now() - started;
  const firstWaveCpu = cpuSince(before);
  if (nodeArgs && !to) phase(`Slack commands (first wave) on the CPU profiles' clock: ${startUs} to ${process.hrtime.bigint() / 1000n} µs`);
  await Promise.all(commands.map((c) => slashCommand(c.i + 1, c.text, c.trigger, c.responseUrl, true, to)));
  return { firstWaveMs, firstWaveCpu };
}

/** CPU time used so far by each replica, Redis and this process (the sender thread and the fakes), in ms. */
interface CpuUse {
  replicas: number[];
  redis: number;
  bench: number;
}
// CPU the burst costs each process (load-independent, unlike its latency on a shared machine).
function cpuNow(): CpuUse {
  const own = process.cpuUsage();
  return { replicas: replicas.map((r) => r.cpuMs()), redis: redis.pid ? cpuMsOf(redis.pid) : 0, bench: (own.user + own.system) / 1000 };
}
function cpuSince(before: CpuUse): CpuUse {
  const now = cpuNow();
  return { replicas: now.replicas.map((ms, k) => ms - before.replicas[k]!), redis: now.redis - before.redis, bench: now.bench - before.bench };
}

/** Two bare node:http servers (bench/support/bare-server.mjs), as child processes like the replicas. */
async function startBareServers(): Promise<{ servers: { name: string; port: number }[]; cpuMs: () => number; stop: () => void }> {
  const children = [0, 1].map(() => spawn(process.execPath, [new URL("./support/bare-server.mjs", import.meta.url).pathname], { stdio: ["ignore", "ignore", "pipe"] }));
  const ports = await Promise.all(children.map((c) => new Promise<number>((resolve, reject) => {
    let err = "";
    c.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on port (\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    c.once("exit", (code) => reject(new Error(`a bare server exited (${code}): ${err}`)));
  })));
  return { servers: ports.map((port, k) => ({ name: `bare-${k}`, port })), cpuMs: () => children.reduce((ms, c) => ms + cpuMsOf(c.pid!), 0), stop: () => children.forEach((c) => c.kill("SIGTERM")) };
}

const rss = replicas.map(() => 0);
const sampler = setInterval(() => replicas.forEach((r, k) => (rss[k] = Math.max(rss[k]!, r.rssMb()))), 500);

// Warm-up (module loading, the Redis scripts, tree-sitter, the Slack path), not measured: a
// review and a Slack `/hcp smoke` on each replica.
phase("replicas listening; warming up");
const warmPrs = [openPr(hcpRecipe("llama3_8b", { sizes: true })), openPr(hcpRecipe("llama3_8b", { sizes: true }))];
const warmDispatches = gh.state.dispatches.length;
await Promise.all([chatter(0), chatter(1), review(0), review(1), ...warmPrs.map((pr, i) => slashCommand(i, `smoke ${R.owner}/${R.repo}#${pr.number}`, `warm.${i}.${randomUUID()}`, slack.responseUrl(), false))]);
await within(30_000, () => [...reviewShas].every((sha) => [...gh.state.checkRuns.values()].some((c) => c.headSha === sha && c.status === "completed")) && gh.state.dispatches.length >= warmDispatches + warmPrs.length);
// And its work's last steps (check runs, Slack messages): nothing asked of GitHub or Slack for a second.
await settled(10_000);
samples.length = 0;
errorCauses.clear();

const inFlight: Promise<void>[] = [];
const ticksPerSecond = 20;
const perTick = RATE / ticksPerSecond;
phase(`sending webhooks for ${DURATION_S} s`);
const started = performance.now();
let sent = 0;
for (let tick = 0; tick < DURATION_S * ticksPerSecond; tick++) {
  const reviewTick = REVIEWS_PER_S > 0 && tick % Math.max(1, Math.round(ticksPerSecond / REVIEWS_PER_S)) === 0;
  for (let k = 0; k < perTick; k++, sent++) inFlight.push(reviewTick && k === 0 ? review(sent) : chatter(sent));
  if (tick % (10 * ticksPerSecond) === 0 && tick > 0) phase(`${sent} webhooks sent, ${samples.length} answered`);
  const next = started + ((tick + 1) * 1000) / ticksPerSecond;
  await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
}
await Promise.all(inFlight.splice(0));
const webhookWall = (performance.now() - started) / 1000;
const webhookCount = samples.length;

// 100 concurrent /hcp smoke commands, each on its own PR, spread over both replicas; once
// they are answered, each is retried on the other replica (a wave as Slack's retries come:
// after the first delivery, while its work runs), which must not dispatch again. First the
// same burst once, not measured, and its work done: a server that has taken Slack commands
// before (warm code, and the connections a load balancer keeps open to it); one command per
// replica left most of the ack path to V8's interpreter, at about twice the CPU per ack.
const dispatchesBefore = gh.state.dispatches.length;
phase(`${webhookCount} webhooks answered; a burst of ${SLACK_COMMANDS} Slack commands to warm up, then its work`);
const warmCommands = newCommands();
await slackWaves(warmCommands, { servers: replicas, samples: [] });
const warmNumbers = new Set(warmCommands.map((c) => String(c.pr)));
await within(DRAIN_S * 1000, () => new Set(gh.state.dispatches.slice(dispatchesBefore).map((d) => (d.inputs as Record<string, string>).pr!).filter((n) => warmNumbers.has(n))).size >= SLACK_COMMANDS);
await settled(30_000);
phase(`sending ${SLACK_COMMANDS} concurrent Slack commands`);
const commands = newCommands();
const smokePrs = commands.map((c) => ({ number: c.pr }));
const responseUrls = commands.map((c) => c.responseUrl);
// The burst's window on the monotonic clock the replicas' CPU profiles use (microseconds).
const burstStartUs = process.hrtime.bigint() / 1000n;
const cpuBefore = cpuNow();
const burstStarted = performance.now();
const { firstWaveMs, firstWaveCpu } = await slackWaves(commands);

const burstWallMs = performance.now() - burstStarted;
const burstCpu = cpuSince(cpuBefore);
if (nodeArgs) phase(`Slack burst on the CPU profiles' clock: ${burstStartUs} to ${process.hrtime.bigint() / 1000n} µs`);
// The work after the answers drains (bounded); then the fake is asked what was done, and twice.
phase("Slack commands answered; waiting for the reviews and dispatches");
const smokeNumbers = new Set(smokePrs.map((p) => String(p.number)));
const dispatched = () => new Set(gh.state.dispatches.slice(dispatchesBefore).map((d) => (d.inputs as Record<string, string>).pr!).filter((n) => smokeNumbers.has(n)));
const reviewed = () => new Set([...gh.state.checkRuns.values()].filter((c) => c.name === CHECK_NAME && c.status === "completed" && reviewShas.has(c.headSha)).map((c) => c.headSha));
let lastCalls = -1;
let quietSince = Date.now();
const drained = await within(DRAIN_S * 1000, () => {
  if (gh.calls.length !== lastCalls) [lastCalls, quietSince] = [gh.calls.length, Date.now()];
  // Done, or nothing asked of GitHub for 10 s (the replicas stopped working: reported below).
  return (dispatched().size >= SLACK_COMMANDS && reviewed().size >= reviewShas.size && Date.now() - quietSince > 2000) || Date.now() - quietSince > 10_000;
});
clearInterval(sampler);

// The floor: the same two waves against two bare node:http servers, from the same sender thread.
phase("the same Slack waves against two bare node:http servers (the floor)");
const bare = await startBareServers();
const floorSamples: Sample[] = [];
const bareCpuBefore = bare.cpuMs();
await slackWaves(commands, { servers: bare.servers, samples: [] }); // warm, as the replicas were
const floor = await slackWaves(commands, { servers: bare.servers, samples: floorSamples });
const bareCpuMs = bare.cpuMs() - bareCpuBefore;
bare.stop();

const checkRunsBySha = new Map<string, number>();
for (const c of gh.state.checkRuns.values()) if (c.name === CHECK_NAME) checkRunsBySha.set(c.headSha, (checkRunsBySha.get(c.headSha) ?? 0) + 1);
const summariesByPr = new Map<number, number>();
for (const c of gh.state.issueComments.values()) if (c.body.trimEnd().endsWith(SUMMARY_MARKER)) summariesByPr.set(c.issueNumber, (summariesByPr.get(c.issueNumber) ?? 0) + 1);
const dispatchesByPr = new Map<string, number>();
for (const d of gh.state.dispatches.slice(dispatchesBefore)) {
  const pr = (d.inputs as Record<string, string>).pr!;
  dispatchesByPr.set(pr, (dispatchesByPr.get(pr) ?? 0) + 1);
}
const extra = (m: Map<unknown, number>) => [...m.values()].reduce((n, c) => n + Math.max(0, c - 1), 0);
const duplicates = { "review check runs": extra(checkRunsBySha), "summary comments": extra(summariesByPr), dispatches: extra(dispatchesByPr) };
const duplicateCount = Object.values(duplicates).reduce((a, b) => a + b, 0);
const reviewsDone = reviewed().size;
const dispatchesDone = dispatched().size;
const errors = [...errorCauses.values()].reduce((a, b) => a + b, 0);
const latency = (kind: Kind, event?: string) => {
  const ms = samples.filter((s) => s.kind === kind && (!event || s.event === event)).map((s) => s.ms);
  return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms.length ? Math.max(...ms) : Number.NaN };
};
const hooks = latency("webhook");
const slackAcks = latency("slack");
const slackWaveLatency = { first: latency("slack", "first"), retry: latency("slack", "retry") };

const fmt = (n: number) => n.toFixed(1);
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
console.log(`bench:load: 2 replicas on one Redis, ${webhookCount} signed webhooks in ${webhookWall.toFixed(1)} s (${(webhookCount / webhookWall).toFixed(0)}/s, ${reviewShas.size - 2} of them PR openings, each also redelivered to the other replica), then ${SLACK_COMMANDS} concurrent /hcp smoke commands, each retried on the other replica; load average ${load()}`);
console.log(`  webhooks: p50 ${fmt(hooks.p50)} ms   p99 ${fmt(hooks.p99)} ms   max ${fmt(hooks.max)} ms   (${hooks.n} answers)   budget p99 < ${BUDGET.p99Ms} ms   ratio ${(hooks.p99 / BUDGET.p99Ms).toFixed(2)}   ${verdict(hooks.p99 < BUDGET.p99Ms)}`);
for (const event of ["issue_comment", "pull_request"]) {
  const e = latency("webhook", event);
  console.log(`    ${event.padEnd(13)} p50 ${fmt(e.p50)} ms   p99 ${fmt(e.p99)} ms   max ${fmt(e.max)} ms   (${e.n})`);
}
console.log(`  slack:    p50 ${fmt(slackAcks.p50)} ms   p99 ${fmt(slackAcks.p99)} ms   max ${fmt(slackAcks.max)} ms   (${slackAcks.n} acks)   budget p99 < ${BUDGET.p99Ms} ms   ratio ${(slackAcks.p99 / BUDGET.p99Ms).toFixed(2)}   ${verdict(slackAcks.p99 < BUDGET.p99Ms)}`);
const acks = 2 * SLACK_COMMANDS;
const floorMs = floorSamples.map((x) => x.ms);
const floorP99 = percentile(floorMs, 99);
console.log(`    floor: two bare node:http servers answering the same waves: p50 ${fmt(percentile(floorMs, 50))} ms   p99 ${fmt(floorP99)} ms   (commands answered in ${floor.firstWaveMs.toFixed(0)} ms; the two servers' CPU ${(bareCpuMs / acks).toFixed(2)} ms per ack); the bot's p99 is ${(slackAcks.p99 / floorP99).toFixed(2)}x the floor`);
for (const [wave, w] of Object.entries(slackWaveLatency)) console.log(`    ${wave === "first" ? "commands" : "retries "}      p50 ${fmt(w.p50)} ms   p99 ${fmt(w.p99)} ms   max ${fmt(w.max)} ms   (${w.n}${wave === "first" ? `, answered in ${firstWaveMs.toFixed(0)} ms` : ""})`);
const perAck = (ms: number, n = acks) => `${ms.toFixed(0)} ms (${(ms / n).toFixed(2)} ms per ack)`;
// Each replica answers half the acks; Redis and the bench serve all of them.
const cpuLine = (cpu: CpuUse, n: number) => `${replicas.map((r, k) => `${r.name} ${perAck(cpu.replicas[k]!, n / replicas.length)}`).join(", ")}, Redis ${perAck(cpu.redis, n)}, the bench (sender, fakes) ${perAck(cpu.bench, n)}`;
console.log(`    CPU used while the commands were answered: ${cpuLine(firstWaveCpu, SLACK_COMMANDS)}`);
console.log(`    both waves: ${burstWallMs.toFixed(0)} ms from the first send to the last ack; CPU used meanwhile (the commands' work had begun): ${cpuLine(burstCpu, acks)}`);
console.log(`  errors ${errors}   budget ${BUDGET.errors}   ${verdict(errors === BUDGET.errors)}`);
for (const [cause, n] of errorCauses) console.log(`    ${n} x ${cause}`);
console.log(`  duplicates ${duplicateCount} (${Object.entries(duplicates).map(([k, v]) => `${v} ${k}`).join(", ")}, from the fake GitHub's state)   budget ${BUDGET.duplicates}   ${verdict(duplicateCount === BUDGET.duplicates)}`);
replicas.forEach((r, k) => console.log(`  RSS ${r.name} max ${fmt(rss[k]!)} MB   budget < ${BUDGET.rssMb} MB   ratio ${(rss[k]! / BUDGET.rssMb).toFixed(2)}   ${verdict(rss[k]! < BUDGET.rssMb)}`));
const workDone = reviewsDone === reviewShas.size && dispatchesDone === SLACK_COMMANDS;
console.log(`  work done: ${reviewsDone}/${reviewShas.size} reviews, ${dispatchesDone}/${SLACK_COMMANDS} dispatches${drained ? "" : ` (still missing after ${DRAIN_S} s)`}   ${workDone ? "all" : "MISSING"}`);
if (!workDone) {
  // What the people whose command did not dispatch were told, so a refusal shows its reason.
  const told = smokePrs.filter((p) => !dispatchesByPr.has(String(p.number))).slice(0, 3).map((p) => slack.responses(responseUrls[smokePrs.indexOf(p)]!.split("/").pop()!).map((b) => String(b.text ?? "").slice(0, 200)));
  console.log("    Slack's replies to commands that did not dispatch:", JSON.stringify(told));
}
if (gh.violations.length || slack.violations.length) console.log("  violations:", [...gh.violations, ...slack.violations].slice(0, 5));

sender.postMessage("close");
await Promise.all(replicas.map((r) => stopReplica(r, "SIGTERM")));
await gh.close();
await slack.close();
await redis.dispose();
const passed = hooks.p99 < BUDGET.p99Ms && slackAcks.p99 < BUDGET.p99Ms && errors === 0 && duplicateCount === 0 && rss.every((m) => m < BUDGET.rssMb) && workDone;
process.exitCode = passed ? 0 : 1;
