// Slack's /hcp across two real bot processes on one real Redis: a command and Slack's retry
// of it landing on different replicas start one GPU run; with Redis away the user is told,
// in the ack, to try again and nothing starts; once it is back the command works.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appKeys } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { startFakeSlack, type FakeSlack } from "../support/fake-slack/index.ts";
import { startCuttableProxy } from "../support/cuttable-proxy.ts";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { startReplica, stopReplica, waitUntil, type Replica, type ReplicaOptions } from "../support/replicas.ts";
import { slashCommandForm } from "../support/slack-form.ts";
import { addSmokeRepo, SmokeFlow, type FlowRepo } from "../support/smoke-flow.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const SECRET = "replica-gh-secret";
const SLACK_SECRET = "replica-slack-secret";
const APP_ID = 6262;
const R: FlowRepo = { owner: "acme", repo: "mb", installation: 14 };
const CONFIG = "smoke:\n  quotas: {per_user_per_day: 1000, max_queued: 1000}\nslack:\n  users: {U0MAINT: maint}\n  channels: [C0SMOKE]\n";

let redis: TestRedis;
let gh: FakeGitHub;
let slack: FakeSlack;
let replicas: Replica[] = [];
let flow: SmokeFlow;

function options(name: string): ReplicaOptions {
  return {
    name,
    githubUrl: gh.url,
    appId: APP_ID,
    secret: SECRET,
    redisUrl: redis.url,
    prefix: "slack-replicas:",
    extra: { SLACK_SIGNING_SECRET: SLACK_SECRET, SLACK_BOT_TOKEN: "xoxb-test", SLACK_API_URL: slack.apiUrl, SLACK_TEAM_ID: "T0TEAM", HCP_JOB_LEASE_SECONDS: "4" },
  };
}

beforeAll(async () => {
  redis = await startRedis();
  gh = await startFakeGitHub({ appId: APP_ID, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  slack = await startFakeSlack({ token: "xoxb-test" });
  gh.addInstallation({ id: R.installation, account: R.owner, accountType: "Organization" });
  addSmokeRepo(gh, R);
  gh.addCommit({ owner: R.owner, repo: R.repo, branch: "main", base: "main", files: { ".github/hcp-bot.yml": CONFIG } });
  gh.setPermission("maint", "write");
  replicas = await Promise.all([startReplica(options("slack-a")), startReplica(options("slack-b"))]);
  flow = new SmokeFlow({ gh, bot: () => ({ url: replicas[0]!.url, idle: async () => {} }), secret: SECRET });
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => stopReplica(r)));
  await slack?.close();
  await gh?.close();
  await redis?.dispose();
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
  expect(slack.violations).toEqual([]);
});

/** A signed /hcp command (the same trigger id makes it the same command, as a Slack retry is). */
async function command(replica: Replica, text: string, triggerId: string, retryNum?: number) {
  const body = slashCommandForm(text, { channel_id: "C0SMOKE", user_id: "U0MAINT", team_id: "T0TEAM", response_url: slack.responseUrl(triggerId.replace(/\W/g, "")), trigger_id: triggerId });
  const ts = Math.floor(Date.now() / 1000);
  const res = await fetch(`${replica.url}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`,
      ...(retryNum ? { "x-slack-retry-num": String(retryNum), "x-slack-retry-reason": "http_timeout" } : {}),
    },
    body,
  });
  return { status: res.status, json: (await res.json()) as { response_type?: string; text?: string } };
}

const trigger = () => `${Date.now()}.${Math.floor(Math.random() * 1e9)}.${randomUUID().replace(/-/g, "")}`;

async function settle(): Promise<void> {
  let last = -1;
  let since = Date.now();
  await waitUntil(() => {
    const n = gh.calls.length + slack.calls.length;
    if (n !== last) [last, since] = [n, Date.now()];
    return Date.now() - since >= 1500;
  }, "GitHub and Slack to go quiet", PATIENCE_MS);
}

describe("Slack on two replicas", () => {
  it("starts one run for a command and Slack's retry of it on the other replica", async () => {
    const pr = flow.openPr(R);
    const before = gh.state.dispatches.length;
    const id = trigger();
    const [first, retry] = await Promise.all([command(replicas[0]!, `smoke ${R.owner}/${R.repo}#${pr.number}`, id), command(replicas[1]!, `smoke ${R.owner}/${R.repo}#${pr.number}`, id, 1)]);
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect([first.json.text, retry.json.text].filter((t) => /already received/.test(t ?? ""))).toHaveLength(1);
    await waitUntil(() => gh.state.dispatches.length > before, "the dispatch");
    await settle();
    expect(gh.state.dispatches.length - before).toBe(1);
  });

  it("tells the user to try again while Redis is away, starts nothing, and works once it is back", async () => {
    const pr = flow.openPr(R);
    const before = gh.state.dispatches.length;
    await redis.stop();
    let refused;
    try {
      refused = await command(replicas[1]!, `smoke ${R.owner}/${R.repo}#${pr.number}`, trigger());
    } finally {
      await redis.start();
    }
    expect(refused.status).toBe(200);
    expect(refused.json).toMatchObject({ response_type: "ephemeral", text: expect.stringMatching(/Try again in a minute/) });
    await waitUntil(async () => (await fetch(`${replicas[1]!.url}/healthz`)).status === 200, "the replica to reconnect");
    expect(gh.state.dispatches.length).toBe(before);
    const again = await command(replicas[1]!, `smoke ${R.owner}/${R.repo}#${pr.number}`, trigger());
    expect(again.json.text).not.toMatch(/Try again/);
    await waitUntil(() => gh.state.dispatches.length > before, "the dispatch");
    await settle();
    expect(gh.state.dispatches.length - before).toBe(1);
  });
});

describe("a Slack command whose replica lost Redis past the lease", () => {
  it("dispatches once: the dispatch GitHub told to wait is not sent again by the replica that lost the job", async () => {
    const link = await startCuttableProxy(redis.port);
    const cut = await startReplica({ ...options("slack-cut"), redisUrl: `redis://127.0.0.1:${link.port}` });
    replicas.push(cut);
    const pr = flow.openPr(R);
    const before = gh.state.dispatches.length;
    // GitHub holds the dispatch, then answers 429 with a retry-after (not processed): the retry
    // policy sends it again a second later. Meanwhile the replica has lost Redis past the lease.
    let letGo!: () => void;
    const until = new Promise<void>((resolve) => (letGo = resolve));
    gh.inject({ method: "POST", path: /\/dispatches$/, status: 429, headers: { "retry-after": "1" }, body: { message: "API rate limit exceeded", documentation_url: "https://docs.github.com/rest" }, until });
    const held = () => gh.calls.some((c) => c.injected && c.path.endsWith("/dispatches"));
    try {
      const ack = await command(cut, `smoke ${R.owner}/${R.repo}#${pr.number}`, trigger());
      expect(ack.status).toBe(200);
      await waitUntil(held, "the dispatch to be held");
      link.cut();
      await waitUntil(() => gh.state.dispatches.length > before, "the other replica to dispatch the command's run", PATIENCE_MS);
      letGo();
      await settle();
    } finally {
      letGo();
      link.restore();
    }
    await settle();
    expect(gh.state.dispatches.length - before).toBe(1);
    expect(cut.output()).toMatch(/lease was lost/);
  });
});
