// Two (and more) real bot processes sharing one real redis-server, against the fake GitHub:
// every guarantee of one process holds across them. The same delivery sent to both does its
// work once; a smoke run's workflow_run events split across them complete it once; Redis
// going away makes them refuse new work (503) and they recover when it returns; a process
// killed with SIGKILL mid-review leaves a job that another completes exactly once; SIGTERM
// drains within its bound and hands an unfinished job back.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appKeys, deliverWebhook, hcpRecipe } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { startCuttableProxy } from "../support/cuttable-proxy.ts";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { startReplica, stopReplica, waitUntil, type Replica, type ReplicaOptions } from "../support/replicas.ts";
import { addSmokeRepo, SMOKE_RECIPE_FILE, SmokeFlow, type FlowRepo } from "../support/smoke-flow.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const SECRET = "replica-secret";
const APP_ID = 6161;
const R: FlowRepo = { owner: "acme", repo: "mb", installation: 12 };
/** Another installation: GitHub's limits on one installation's token are that installation's. */
const OTHER: FlowRepo = { owner: "globex", repo: "mb", installation: 13 };
const LEASE = "4";
const HEALTH_TOKEN = "replica-health-token-0001";

let redis: TestRedis;
let gh: FakeGitHub;
let a: Replica;
let b: Replica;
const extra: Replica[] = [];
let flow: SmokeFlow;
let prNumber = 500;

function options(name: string, more: Record<string, string> = {}): ReplicaOptions {
  return { name, githubUrl: gh.url, appId: APP_ID, secret: SECRET, redisUrl: redis.url, prefix: "replicas:", extra: { HCP_JOB_LEASE_SECONDS: LEASE, HCP_JOB_RETRY_SECONDS: "1", HCP_JOB_UNLEASED_SECONDS: "2", HCP_HEALTH_TOKEN: HEALTH_TOKEN, ...more } };
}

beforeAll(async () => {
  redis = await startRedis();
  gh = await startFakeGitHub({ appId: APP_ID, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: R.installation, account: R.owner, accountType: "Organization" });
  addSmokeRepo(gh, R);
  gh.addInstallation({ id: OTHER.installation, account: OTHER.owner, accountType: "Organization" });
  addSmokeRepo(gh, OTHER);
  gh.setPermission("maint", "write");
  [a, b] = await Promise.all([startReplica(options("a")), startReplica(options("b"))]);
  flow = new SmokeFlow({ gh, bot: () => ({ url: a.url, idle: quiet }), secret: SECRET });
});

afterAll(async () => {
  await Promise.all([a, b, ...extra].map((r) => stopReplica(r)));
  await gh?.close();
  await redis?.dispose();
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
});

/** Waits until the fake GitHub saw no new call for a while (the replicas' work has settled). */
async function quiet(ms = 1500): Promise<void> {
  let last = -1;
  let since = Date.now();
  await waitUntil(() => {
    if (gh.calls.length !== last) {
      last = gh.calls.length;
      since = Date.now();
    }
    return Date.now() - since >= ms;
  }, "the fake GitHub to go quiet", PATIENCE_MS);
}

const posts = (pattern: RegExp) => gh.calls.filter((c) => c.method === "POST" && pattern.test(c.path) && !c.injected);

/** A PR whose recipe lacks the HCP sizes (HCP001: a check run, an inline suggestion, one summary). */
function openHcpPr(r: FlowRepo = R): { number: number; payload: object } {
  const number = ++prNumber;
  const sha = randomUUID().replace(/-/g, "").padEnd(40, "0").slice(0, 40);
  const text = hcpRecipe("llama3_8b", { sizes: false });
  gh.addCommit({ owner: r.owner, repo: r.repo, branch: `pr-${number}`, base: "main", sha, files: { [SMOKE_RECIPE_FILE]: text } });
  gh.addPullRequest({ owner: r.owner, repo: r.repo, number, head: { sha, ref: `pr-${number}` }, files: [{ filename: SMOKE_RECIPE_FILE, contents: text, status: "modified" }] });
  const repository = flow.repository(r);
  return {
    number,
    payload: {
      action: "opened",
      installation: { id: r.installation },
      repository,
      sender: { login: "author", id: 3, type: "User" },
      pull_request: { number, draft: false, html_url: `${gh.url}/${r.owner}/${r.repo}/pull/${number}`, head: { sha, ref: `pr-${number}`, repo: repository }, base: { sha: "b".repeat(40), ref: "main", repo: repository }, user: { login: "author", id: 3, type: "User" } },
    },
  };
}

async function reviewedOnce(number: number): Promise<void> {
  await waitUntil(() => posts(new RegExp(`/issues/${number}/comments$`)).length > 0, `the review of PR ${number}`, PATIENCE_MS);
  await quiet();
  expect(posts(new RegExp(`/pulls/${number}/reviews$`))).toHaveLength(1);
  expect(posts(new RegExp(`/issues/${number}/comments$`))).toHaveLength(1);
}

describe("two replicas on one Redis", () => {
  it("does the work of one delivery sent to both once: one review, one summary comment", async () => {
    const pr = openHcpPr();
    const id = randomUUID();
    const checksBefore = posts(/\/check-runs$/).length;
    const statuses = await Promise.all([a, b].map((r) => deliverWebhook(`${r.url}/api/github/webhooks`, SECRET, "pull_request", pr.payload, id)));
    expect(statuses).toEqual([200, 200]);
    await reviewedOnce(pr.number);
    expect(posts(/\/check-runs$/).length - checksBefore).toBe(1);
    // The review ran once, not twice with the second finding nothing new to post.
    expect(gh.calls.filter((c) => c.method === "GET" && c.path.endsWith(`/pulls/${pr.number}/files`))).toHaveLength(1);
  });

  it("dispatches one GPU run for one /hcp smoke comment delivered to both", async () => {
    const pr = flow.openPr(R);
    const before = gh.state.dispatches.length;
    const payload = flow.commentPayload(R, pr.number, "/hcp smoke", "maint");
    const id = randomUUID();
    await Promise.all([a, b].map((r) => deliverWebhook(`${r.url}/api/github/webhooks`, SECRET, "issue_comment", payload, id)));
    // The same comment again as a new delivery (GitHub sends one event once, but a replay may differ in id).
    await deliverWebhook(`${b.url}/api/github/webhooks`, SECRET, "issue_comment", payload);
    await waitUntil(() => gh.state.dispatches.length > before, "the dispatch");
    await quiet();
    expect(gh.state.dispatches.length - before).toBe(1);
  });

  it("completes a smoke run once when its workflow_run events are split across the replicas", async () => {
    const pr = flow.openPr(R);
    const before = gh.state.dispatches.length;
    await deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "issue_comment", flow.commentPayload(R, pr.number, "/hcp smoke", "maint"));
    await waitUntil(() => gh.state.dispatches.length > before, "the dispatch");
    await quiet();
    const sent = gh.state.dispatches[before]!;
    const requestId = (sent.inputs as Record<string, string>).request_id!;
    const title = `hcp-smoke ${requestId}`;
    gh.updateWorkflowRun(sent.runId, { status: "in_progress" });
    const running = flow.runPayload(R, "in_progress", { id: sent.runId, status: "in_progress", conclusion: null, display_title: title });
    await deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "workflow_run", running);
    await quiet();
    const { completeSmokeRun, PASSING_RUN_LOG, runnerFacts, trainingLog } = await import("../support/bot-harness.ts");
    await completeSmokeRun(gh, { runId: sent.runId, requestId }, { "smoke.log": trainingLog(PASSING_RUN_LOG), "verdict.json": runnerFacts() });
    const done = flow.runPayload(R, "completed", { id: sent.runId, status: "completed", conclusion: "success", display_title: title });
    const patchesBefore = gh.calls.length;
    // The completion reaches both replicas at once, as two deliveries (GitHub's and a redelivery).
    await Promise.all([deliverWebhook(`${b.url}/api/github/webhooks`, SECRET, "workflow_run", done), deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "workflow_run", done)]);
    await waitUntil(() => gh.calls.slice(patchesBefore).some((c) => c.method === "PATCH" && /\/check-runs\/\d+$/.test(c.path) && (c.body as { status?: string }).status === "completed"), "the verdict on the check run");
    await quiet();
    const verdicts = gh.calls.slice(patchesBefore).filter((c) => c.method === "PATCH" && /\/check-runs\/\d+$/.test(c.path) && (c.body as { status?: string }).status === "completed");
    expect(verdicts).toHaveLength(1);
    expect((verdicts[0]!.body as { conclusion?: string }).conclusion).toBe("success");
    const downloads = gh.calls.slice(patchesBefore).filter((c) => c.method === "GET" && /\/artifacts\/\d+\/zip$/.test(c.path));
    expect(downloads).toHaveLength(1);
  });
});

describe("GitHub's rate limits", () => {
  it("are shared: a replica told to wait makes the other wait too, before its next call", async () => {
    const first = openHcpPr();
    const second = openHcpPr();
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${first.number}/files`), status: 429, headers: { "retry-after": "3" }, body: { message: "API rate limit exceeded", documentation_url: "https://docs.github.com/rest" } });
    await deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "pull_request", first.payload);
    await waitUntil(() => gh.calls.some((c) => c.injected && c.path.includes(`/pulls/${first.number}/files`)), "the rate-limited call");
    const limitedAt = gh.calls.find((c) => c.injected && c.path.includes(`/pulls/${first.number}/files`))!.timestamp;
    await new Promise((r) => setTimeout(r, 300)); // the pause is in Redis
    const deliveredAt = Date.now();
    await deliverWebhook(`${b.url}/api/github/webhooks`, SECRET, "pull_request", second.payload);
    await reviewedOnce(second.number);
    await reviewedOnce(first.number);
    // Nobody called GitHub between the second delivery and the end of the pause GitHub asked for.
    const during = gh.calls.filter((c) => c.timestamp > deliveredAt && c.timestamp < limitedAt + 2800);
    expect(during).toEqual([]);
  });
});

describe("GitHub's rate limits, per installation", () => {
  it("an installation told to wait pauses its own calls only: another installation's review is not held back", async () => {
    const limited = openHcpPr(OTHER);
    const free = openHcpPr(R);
    const WAIT_S = 30;
    gh.inject({ method: "GET", path: new RegExp(`/repos/${OTHER.owner}/${OTHER.repo}/pulls/${limited.number}/files`), status: 429, headers: { "retry-after": String(WAIT_S) }, body: { message: "API rate limit exceeded", documentation_url: "https://docs.github.com/rest" } });
    await deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "pull_request", limited.payload);
    await waitUntil(() => gh.calls.some((c) => c.injected && c.path.includes(`/pulls/${limited.number}/files`)), "the rate-limited call");
    const limitedAt = gh.calls.find((c) => c.injected && c.path.includes(`/pulls/${limited.number}/files`))!.timestamp;
    await new Promise((r) => setTimeout(r, 300)); // the pause is in Redis
    await deliverWebhook(`${b.url}/api/github/webhooks`, SECRET, "pull_request", free.payload);
    await waitUntil(() => posts(new RegExp(`/repos/${R.owner}/${R.repo}/issues/${free.number}/comments$`)).length > 0, `the review of PR ${free.number}`, PATIENCE_MS);
    const reviewedAt = posts(new RegExp(`/repos/${R.owner}/${R.repo}/issues/${free.number}/comments$`))[0]!.timestamp;
    // Well inside the other installation's pause (the whole review takes a few seconds here).
    expect(reviewedAt - limitedAt).toBeLessThan((WAIT_S - 10) * 1000);
    // The limited installation waits out what GitHub asked, then is reviewed once.
    await waitUntil(() => posts(new RegExp(`/repos/${OTHER.owner}/${OTHER.repo}/issues/${limited.number}/comments$`)).length > 0, `the review of PR ${limited.number}`, PATIENCE_MS);
    const resumed = gh.calls.filter((c) => c.path.startsWith(`/repos/${OTHER.owner}/`) && c.timestamp > limitedAt && !c.injected)[0]!;
    expect(resumed.timestamp - limitedAt).toBeGreaterThanOrEqual(WAIT_S * 1000 - 500);
    await quiet();
  });
});

describe("Redis going away", () => {
  it("refuses new work with 503 while Redis is down, and does it once when it is back", async () => {
    const pr = openHcpPr();
    const id = randomUUID();
    await redis.stop();
    try {
      const refused = await deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "pull_request", pr.payload, id);
      expect(refused).toBe(503);
      expect((await fetch(`${b.url}/healthz`)).status).toBe(503);
    } finally {
      await redis.start();
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(posts(new RegExp(`/pulls/${pr.number}/`))).toHaveLength(0); // nothing was done meanwhile
    // GitHub's redelivery (same id) to both, once the clients reconnected.
    await waitUntil(async () => (await fetch(`${a.url}/healthz`)).status === 200 && (await fetch(`${b.url}/healthz`)).status === 200, "both replicas healthy again");
    const statuses = await Promise.all([a, b].map((r) => deliverWebhook(`${r.url}/api/github/webhooks`, SECRET, "pull_request", pr.payload, id)));
    expect(statuses).toEqual([200, 200]);
    await reviewedOnce(pr.number);
  });
});

describe("a lease lost while Redis is away", () => {
  it("stops the job before its next write: a review waiting on GitHub while its replica lost Redis past the lease is finished once, by the other", async () => {
    // This replica reaches Redis through a loopback proxy the test can cut (a partition: the
    // other replica still sees Redis, so its recovery takes the job once the lease passes).
    const link = await startCuttableProxy(redis.port);
    const cut = await startReplica({ ...options("cut"), redisUrl: `redis://127.0.0.1:${link.port}` });
    extra.push(cut);
    const pr = openHcpPr();
    const checksBefore = posts(/\/check-runs$/).length;
    // GitHub hangs on the PR's files (then a 500, retried): the review waits on GitHub. The run
    // that takes the job after the lease passes hangs there too, and both are let go together.
    let letGo!: () => void;
    const until = new Promise<void>((resolve) => (letGo = resolve));
    const files = new RegExp(`/pulls/${pr.number}/files`);
    gh.inject({ method: "GET", path: files, status: 500, until, times: 2 });
    const stalled = () => gh.calls.filter((c) => c.injected && files.test(c.path)).length;
    expect(await deliverWebhook(`${cut.url}/api/github/webhooks`, SECRET, "pull_request", pr.payload)).toBe(200);
    await waitUntil(() => stalled() === 1, "the review to reach the stalled call");
    link.cut();
    try {
      // The lease (4 s) passes; a replica that still sees Redis takes the job.
      await waitUntil(() => stalled() === 2, "another replica to take the job whose lease passed", PATIENCE_MS);
      letGo();
      await waitUntil(() => posts(new RegExp(`/issues/${pr.number}/comments$`)).length > 0, `the review of PR ${pr.number}`, PATIENCE_MS);
      await quiet(3000);
    } finally {
      letGo();
      link.restore();
    }
    await quiet();
    expect(posts(new RegExp(`/pulls/${pr.number}/reviews$`))).toHaveLength(1);
    expect(posts(new RegExp(`/issues/${pr.number}/comments$`))).toHaveLength(1);
    expect(posts(/\/check-runs$/).length - checksBefore).toBe(1);
    expect(cut.output()).toMatch(/lease was lost/);
    await stopReplica(cut);
    link.close();
  });

  it("fences each attempt of a write, not once before them all: a check run GitHub told to wait is not sent again after the lease passed", async () => {
    const link = await startCuttableProxy(redis.port);
    const cut = await startReplica({ ...options("cut-repeat"), redisUrl: `redis://127.0.0.1:${link.port}` });
    extra.push(cut);
    const pr = openHcpPr();
    const checksBefore = posts(/\/check-runs$/).length;
    // The check run's POST is held, then answered 429 with a retry-after: the retry policy
    // sends it again a second later (src/github/octokit.ts). Meanwhile this replica has lost
    // Redis past the lease, and the other replica ran the whole review.
    let letGo!: () => void;
    const until = new Promise<void>((resolve) => (letGo = resolve));
    gh.inject({ method: "POST", path: /\/check-runs$/, status: 429, headers: { "retry-after": "1" }, body: { message: "API rate limit exceeded", documentation_url: "https://docs.github.com/rest" }, until });
    const held = () => gh.calls.some((c) => c.injected && c.method === "POST" && c.path.endsWith("/check-runs"));
    try {
      expect(await deliverWebhook(`${cut.url}/api/github/webhooks`, SECRET, "pull_request", pr.payload)).toBe(200);
      await waitUntil(held, "the check run's POST to be held");
      link.cut();
      await waitUntil(() => posts(new RegExp(`/issues/${pr.number}/comments$`)).length > 0, "the other replica to review the PR", PATIENCE_MS);
      letGo();
      await quiet(3000);
    } finally {
      letGo();
      link.restore();
    }
    await quiet();
    const written = { checkRuns: posts(/\/check-runs$/).length - checksBefore, reviews: posts(new RegExp(`/pulls/${pr.number}/reviews$`)).length, summaries: posts(new RegExp(`/issues/${pr.number}/comments$`)).length };
    expect(written).toEqual({ checkRuns: 1, reviews: 1, summaries: 1 });
    expect(cut.output()).toMatch(/lease was lost/);
    await stopReplica(cut);
    link.close();
  });
});

describe("a process killed mid-review", () => {
  it("leaves the job in Redis; after a restart the review completes exactly once", async () => {
    const victim = await startReplica(options("victim"));
    extra.push(victim);
    const pr = openHcpPr();
    // GitHub hangs on the files of this PR: the review is mid-way when the process dies.
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files`), status: 500, delayMs: 120_000 });
    expect(await deliverWebhook(`${victim.url}/api/github/webhooks`, SECRET, "pull_request", pr.payload)).toBe(200);
    await waitUntil(() => gh.calls.some((c) => c.injected && c.path.includes(`/pulls/${pr.number}/files`)), "the review to reach the stalled call");
    victim.child.kill("SIGKILL");
    expect((await victim.exited).signal).toBe("SIGKILL");
    const restarted = await startReplica(options("restarted"));
    extra.push(restarted);
    await reviewedOnce(pr.number);
    // No replica lost the job: the store holds none (the status lists pending jobs).
    const health = (await (await fetch(`${restarted.url}/healthz`, { headers: { authorization: `Bearer ${HEALTH_TOKEN}` } })).json()) as { store: { kind: string; detail: string } };
    expect(health.store).toMatchObject({ kind: "redis", detail: expect.stringMatching(/ 0 pending jobs/) });
  });
});

describe("a crash mid-dispatch (src/github/smoke/recovery.ts, state C)", () => {
  it("binds the run GitHub created before the answer arrived: no second GPU run, the check run follows it to the verdict", async () => {
    const victim = await startReplica(options("dispatch-victim"));
    extra.push(victim);
    const pr = flow.openPr(R);
    const before = gh.state.dispatches.length;
    // GitHub creates the run, then its answer hangs: the process dies before it arrives.
    gh.inject({ method: "POST", path: /\/dispatches$/, status: 200, afterProcessing: true, delayMs: 120_000 });
    await deliverWebhook(`${victim.url}/api/github/webhooks`, SECRET, "issue_comment", flow.commentPayload(R, pr.number, "/hcp smoke", "maint"));
    await waitUntil(() => gh.state.dispatches.length > before, "the dispatch GitHub processed");
    victim.child.kill("SIGKILL");
    await victim.exited;
    const sent = gh.state.dispatches[before]!;
    const requestId = (sent.inputs as Record<string, string>).request_id!;
    // The durable job runs again on a replica still up once its lease passes: it finds the run.
    await waitUntil(() => posts(new RegExp(`/issues/${pr.number}/comments$`)).some((c) => String((c.body as { body?: string }).body).includes(requestId)), "the story comment of the bound run", PATIENCE_MS);
    await quiet();
    expect(gh.state.dispatches.length - before).toBe(1);
    // A new command on the PR sees the run under way and starts nothing.
    await deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "issue_comment", flow.commentPayload(R, pr.number, "/hcp smoke", "maint"));
    await quiet();
    expect(gh.state.dispatches.length - before).toBe(1);
    // The run's events now reach the request (followRun no longer meets a `requested` one).
    const { completeSmokeRun, PASSING_RUN_LOG, runnerFacts, trainingLog } = await import("../support/bot-harness.ts");
    const title = `hcp-smoke ${requestId}`;
    gh.updateWorkflowRun(sent.runId, { status: "in_progress" });
    await deliverWebhook(`${b.url}/api/github/webhooks`, SECRET, "workflow_run", flow.runPayload(R, "in_progress", { id: sent.runId, status: "in_progress", conclusion: null, display_title: title }));
    await completeSmokeRun(gh, { runId: sent.runId, requestId }, { "smoke.log": trainingLog(PASSING_RUN_LOG), "verdict.json": runnerFacts() });
    const since = gh.calls.length;
    await deliverWebhook(`${a.url}/api/github/webhooks`, SECRET, "workflow_run", flow.runPayload(R, "completed", { id: sent.runId, status: "completed", conclusion: "success", display_title: title }));
    await waitUntil(() => gh.calls.slice(since).some((c) => c.method === "PATCH" && /\/check-runs\/\d+$/.test(c.path) && (c.body as { conclusion?: string }).conclusion === "success"), "the verdict on the check run");
  });
});

describe("SIGTERM", () => {
  it("refuses new work, hands a running job back, and exits within its drain bound", async () => {
    const drained = await startReplica(options("drained", { HCP_DRAIN_SECONDS: "2" }));
    extra.push(drained);
    const pr = openHcpPr();
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files`), status: 500, delayMs: 120_000 });
    expect(await deliverWebhook(`${drained.url}/api/github/webhooks`, SECRET, "pull_request", pr.payload)).toBe(200);
    await waitUntil(() => gh.calls.some((c) => c.injected && c.path.includes(`/pulls/${pr.number}/files`)), "the review to reach the stalled call");
    const t0 = Date.now();
    drained.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 200));
    expect((await fetch(`${drained.url}/healthz`)).status).toBe(503);
    const other = openHcpPr();
    expect(await deliverWebhook(`${drained.url}/api/github/webhooks`, SECRET, "pull_request", other.payload)).toBe(503);
    const exit = await drained.exited;
    const seconds = (Date.now() - t0) / 1000;
    expect(exit.code).toBe(0);
    expect(seconds).toBeLessThan(2 + 5); // HCP_DRAIN_SECONDS, plus closing (generous on a loaded machine)
    expect(drained.output()).toMatch(/handed 1 unfinished job\(s\) back/);
    // The handed-back job runs on a replica still up, once.
    await reviewedOnce(pr.number);
    expect(posts(new RegExp(`/pulls/${other.number}/`))).toHaveLength(0);
  });
});
