// /metrics scraped from the real server after real signed webhooks (a review with findings,
// a forged and an oversized delivery, a smoke run from comment to verdict) with GitHub
// failing once on the way; the Prometheus text is parsed, not grepped.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { FORGED, sendHugeWebhook } from "../../bench/support/memory-client.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { appKeys, botSettings, deliverWebhook, instantClock, PASSING_RUN_LOG, runnerFacts, trainingLog } from "../support/bot-harness.ts";
import { addSmokeRepo, SmokeFlow, SMOKE_RECIPE_FILE } from "../support/smoke-flow.ts";
import { startFakeSlack } from "../support/fake-slack/index.ts";
import { slashCommandForm } from "../support/slack-form.ts";

const SECRET = "metrics-webhook-secret";
const TOKEN = "metrics-token-0123456789";
const R = { owner: "acme", repo: "mb", installation: 11 };
const BROKEN = `from megatron.bridge.recipes.common import _pretrain_common


def llama3_8b_pretrain_config():
    cfg = _pretrain_common()
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    return cfg
`;

let gh: FakeGitHub;
let bot: RunningServer;
let flow: SmokeFlow;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition format: `# HELP`/`# TYPE` lines and `name{a="b",...} value` samples. */
function parseMetrics(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

async function scrape(authorization?: string): Promise<Response> {
  return fetch(`${bot.url}/metrics`, authorization ? { headers: { authorization } } : {});
}

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 6161, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: R.installation, account: R.owner, accountType: "Organization" });
  addSmokeRepo(gh, R);
  gh.setPermission("maint", "write");
  bot = await startServer(botSettings({ githubUrl: gh.url, appId: 6161, secret: SECRET, extra: { HCP_METRICS_TOKEN: TOKEN } }), { sweepIntervalMs: 0, clock: instantClock, smoke: { runLookup: { attempts: 2, delayMs: 10 } } });
  flow = new SmokeFlow({ gh, bot: () => bot, secret: SECRET });
});

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
});

describe("/metrics", () => {
  it("is not public: 401 without the token or with a wrong one", async () => {
    for (const auth of [undefined, "Bearer wrong-token-0123456789", `Basic ${TOKEN}`]) {
      const res = await scrape(auth);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain("hcp_bot_");
    }
  });

  it("counts webhooks, reviews, findings by rule, GitHub calls and waits, dispatches, verdicts, jobs", async () => {
    // A review with findings, GitHub failing once on the way.
    const pr = flow.openPr(R);
    gh.addCommit({ owner: R.owner, repo: R.repo, branch: `pr-${pr.number}`, sha: "f".repeat(40), files: { [SMOKE_RECIPE_FILE]: BROKEN } });
    gh.addPullRequest({ owner: R.owner, repo: R.repo, number: 900, head: { sha: "f".repeat(40), ref: `pr-${pr.number}` }, files: [{ filename: SMOKE_RECIPE_FILE, contents: BROKEN, status: "modified" }] });
    gh.inject({ method: "GET", path: /\/pulls\/900\/files$/, status: 500 });
    const repository = flow.repository(R);
    const pull = { number: 900, state: "open", draft: false, html_url: `${gh.url}/${R.owner}/${R.repo}/pull/900`, head: { sha: "f".repeat(40), ref: `pr-${pr.number}`, repo: repository }, base: { sha: "b".repeat(40), ref: "main", repo: repository }, user: { login: "author", id: 3, type: "User" } };
    expect(await flow.deliver("pull_request", { action: "opened", number: 900, installation: { id: R.installation }, repository, sender: { login: "author", id: 3, type: "User" }, pull_request: pull })).toBe(200);
    // Refused at the door.
    expect(await deliverWebhook(`${bot.url}/api/github/webhooks`, "wrong-secret", "pull_request", { action: "opened" })).toBe(401);
    expect(await sendHugeWebhook(bot.port, 30, { signature: FORGED })).toBe(413);
    // A smoke run from comment to verdict.
    const sent = await flow.smokeOn(R, "maint");
    expect(sent.runId).toBeDefined();
    await flow.runToEnd(R, sent.runId!, sent.id!, { "smoke.log": trainingLog(PASSING_RUN_LOG), "verdict.json": runnerFacts() });

    const res = await scrape(`Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const { samples, types } = parseMetrics(await res.text());
    expect(value(samples, "hcp_bot_webhooks_total", { event: "pull_request", outcome: "accepted" })).toBe(1);
    expect(value(samples, "hcp_bot_webhooks_total", { event: "issue_comment", outcome: "accepted" })).toBe(1);
    expect(value(samples, "hcp_bot_webhooks_total", { event: "workflow_run", outcome: "accepted" })).toBe(2);
    expect(value(samples, "hcp_bot_webhooks_total", { event: "unverified", outcome: "forged" })).toBe(1);
    expect(value(samples, "hcp_bot_webhooks_total", { event: "unverified", outcome: "too-large" })).toBe(1);
    expect(value(samples, "hcp_bot_reviews_total", { conclusion: "failure" })).toBe(1);
    expect(value(samples, "hcp_bot_findings_total", { rule: "HCP001" })).toBe(1);
    expect(value(samples, "hcp_bot_github_requests_total", { method: "GET", status: "500" })).toBe(1);
    expect(value(samples, "hcp_bot_github_requests_total", { method: "POST", status: "201" })).toBeGreaterThan(0);
    expect(value(samples, "hcp_bot_github_waits_total", { reason: "server-error" })).toBe(1);
    expect(value(samples, "hcp_bot_github_wait_seconds_total", { reason: "server-error" })).toBe(1);
    expect(value(samples, "hcp_bot_smoke_dispatches_total")).toBe(1);
    expect(value(samples, "hcp_bot_verdicts_total", { status: "pass", cause: "none" })).toBe(1);
    expect(value(samples, "hcp_bot_queue_depth")).toBe(0);
    expect(types.get("hcp_bot_job_duration_seconds")).toBe("histogram");
    expect(value(samples, "hcp_bot_job_duration_seconds_count", { kind: "pull-request", outcome: "done" })).toBe(2); // the review and the comment
    expect(value(samples, "hcp_bot_job_duration_seconds_count", { kind: "workflow-run", outcome: "done" })).toBe(2);
    expect(value(samples, "hcp_bot_job_wait_seconds_count")).toBe(4);
    expect(types.get("hcp_bot_store_errors_total")).toBe("counter");
    expect(value(samples, "hcp_bot_store_errors_total")).toBe(0);
    expect(value(samples, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(gh.violations).toEqual([]);
  });
});

describe("/metrics and the Slack Web API", () => {
  it("counts Slack's waits (429 Retry-After, 5xx backoff) and give-ups, next to GitHub's", async () => {
    const SLACK_SECRET = "metrics-slack-secret";
    const slack = await startFakeSlack({ token: "xoxb-test" });
    const withSlack = await startServer(
      botSettings({ githubUrl: gh.url, appId: 6161, secret: SECRET, extra: { HCP_METRICS_TOKEN: TOKEN, SLACK_SIGNING_SECRET: SLACK_SECRET, SLACK_BOT_TOKEN: "xoxb-test", SLACK_API_URL: slack.apiUrl, SLACK_TEAM_ID: "T0TEAM" } }),
      { sweepIntervalMs: 0, clock: instantClock },
    );
    /** A signed `/hcp check` (no repository: it needs nothing of GitHub); its findings go back through response_url. */
    const check = async (responseId: string) => {
      const line = "torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama32_1b_pretrain_config model.context_parallel_size=4 model.cp_comm_type=a2a+p2p";
      const body = slashCommandForm(`check ${line}`, { team_id: "T0TEAM", response_url: slack.responseUrl(responseId), trigger_id: `${Date.now()}.1.${randomUUID().replace(/-/g, "")}` });
      const ts = Math.floor(Date.now() / 1000);
      const res = await fetch(`${withSlack.url}/slack/events`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(ts), "x-slack-signature": `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${body}`).digest("hex")}` },
        body,
      });
      expect(res.status).toBe(200);
      await withSlack.idle();
    };
    try {
      // A 429 asking for 1 s, then a 503 (backed off 1 s): the reply still arrives, once.
      slack.inject({ method: "response_url", status: 429, retryAfter: 1 });
      slack.inject({ method: "response_url", status: 503 });
      await check("waits");
      expect(slack.responses("waits")).toHaveLength(1);
      // A Retry-After past the five-minute horizon: given up at once, no reply.
      slack.inject({ method: "response_url", status: 429, retryAfter: 900 });
      await check("gives-up");
      expect(slack.responses("gives-up")).toHaveLength(0);

      const { samples, types } = parseMetrics(await (await fetch(`${withSlack.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text());
      expect(types.get("hcp_bot_slack_waits_total")).toBe("counter");
      expect(value(samples, "hcp_bot_slack_waits_total", { method: "response_url", reason: "rate-limit" })).toBe(1);
      expect(value(samples, "hcp_bot_slack_waits_total", { method: "response_url", reason: "server-error" })).toBe(1);
      expect(value(samples, "hcp_bot_slack_wait_seconds_total", { method: "response_url", reason: "rate-limit" })).toBe(1);
      expect(value(samples, "hcp_bot_slack_wait_seconds_total", { method: "response_url", reason: "server-error" })).toBe(1);
      expect(value(samples, "hcp_bot_slack_give_ups_total", { method: "response_url", reason: "rate-limit" })).toBe(1);
      expect(value(samples, "hcp_bot_slack_give_ups_total", { reason: "server-error" })).toBe(0);
      // GitHub's waits are in the same registry (none here: this command asked nothing of GitHub).
      expect(types.get("hcp_bot_github_waits_total")).toBe("counter");
      expect(slack.violations).toEqual([]);
    } finally {
      await withSlack.stop();
      await slack.close();
    }
  });
});

describe("/metrics off by default", () => {
  it("answers 404 when HCP_METRICS_TOKEN is not set", async () => {
    const plain = await startServer(botSettings({ githubUrl: gh.url, appId: 6161, secret: SECRET }), { sweepIntervalMs: 0 });
    try {
      const res = await fetch(`${plain.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("hcp_bot_");
    } finally {
      await plain.stop();
    }
  });
});
