// GitHub misbehaving for long, through the real front door: signed webhooks to the real
// server, whose Octokit talks HTTP to the fake GitHub with injected faults. Only time is
// not real: the retry policy's clock is handed in, so a two-hour rate limit takes no time
// while every request and answer still crosses the loopback.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "../../src/github/octokit.ts";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { appKeys, botSettings, deliverAndSettle, pullRequestPayload } from "../support/bot-harness.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const SECRET = "webhook-secret-for-fault-tests";
const OWNER = "acme";
const REPO = "megatron-bridge";
const INSTALLATION = 7;
const RECIPE_PATH = "src/megatron/bridge/recipes/llama/h100/llama3.py";
const RECIPE = `from megatron.bridge.recipes.common import _pretrain_common


def llama3_8b_pretrain_config():
    cfg = _pretrain_common()
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    return cfg
`;
const SECONDARY = { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" };

/** Time that moves only when the policy sleeps; each wait is recorded. */
function virtualClock(): Clock & { waits: number[] } {
  let offset = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => Date.now() + offset,
    sleep: async (ms) => {
      waits.push(ms);
      offset += ms;
    },
  };
}

let gh: FakeGitHub;
let bot: RunningServer;
const clock = virtualClock();
let prNumber = 0;

function payload(action: string, number: number, head: string) {
  return pullRequestPayload({ githubUrl: gh.url, owner: OWNER, repo: REPO, installation: INSTALLATION, action, number, head });
}

function openPr(): { number: number; head: string } {
  const number = ++prNumber;
  const head = number.toString(16).padStart(40, "c");
  gh.addCommit({ owner: OWNER, repo: REPO, branch: `feature-${number}`, base: "main", sha: head, files: { [RECIPE_PATH]: RECIPE } });
  gh.addPullRequest({ owner: OWNER, repo: REPO, number, head: { sha: head, ref: `feature-${number}` }, files: [{ filename: RECIPE_PATH, contents: RECIPE, status: "added" }] });
  return { number, head };
}

const deliver = (action: string, pr: { number: number; head: string }, id: string = randomUUID()) => deliverAndSettle(bot, SECRET, "pull_request", payload(action, pr.number, pr.head), id);

/** Until the head's check run holds a review (the durable retry runs it after its delay). */
async function reviewed(head: string, ms = PATIENCE_MS): Promise<void> {
  const until = Date.now() + ms;
  while (!checkRunsFor(head).some((r) => /^\d+ error\(s\)/.test(r.output.title ?? ""))) {
    if (Date.now() > until) throw new Error(`no review on ${head} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function checkRunsFor(head: string) {
  return [...gh.state.checkRuns.values()].filter((c) => c.headSha === head);
}

function filesCalls(number: number) {
  return gh.calls.filter((c) => c.method === "GET" && c.path.endsWith(`/pulls/${number}/files`));
}

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 4343, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
  gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { "README.md": "# repo\n" } } });
  // A failed job (a review given up) is retried by the durable runner after a second, not the production ten.
  bot = await startServer(botSettings({ githubUrl: gh.url, appId: 4343, secret: SECRET, extra: { HCP_JOB_RETRY_SECONDS: "1" } }), { clock });
});

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
});

beforeEach(() => {
  clock.waits.length = 0;
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
  expect(gh.pendingInjections()).toEqual([]);
});

describe("GitHub failing for long", () => {
  it("/pulls/N/files answering 500 ten times: backs off 1 s doubling to a minute, then reviews", async () => {
    const pr = openPr();
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 500, times: 10 });
    expect(await deliver("opened", pr)).toBe(200);
    expect(filesCalls(pr.number).map((c) => c.status)).toEqual([...Array(10).fill(500), 200]);
    expect(clock.waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60, 60].map((s) => s * 1000));
    const runs = checkRunsFor(pr.head);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(runs[0]!.output.title).toMatch(/^1 error\(s\)/);
  });

  it("a secondary rate limit five times (no retry-after): waits a minute, doubling each time, then reviews", async () => {
    const pr = openPr();
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 403, times: 5, body: SECONDARY });
    expect(await deliver("opened", pr)).toBe(200);
    expect(clock.waits).toEqual([60, 120, 240, 480, 960].map((s) => s * 1000));
    expect(checkRunsFor(pr.head)).toHaveLength(1);
  });

  it("retry-after: 120 is waited out in full; a bare 429 waits a minute", async () => {
    const pr = openPr();
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 403, headers: { "retry-after": "120" }, body: SECONDARY });
    gh.inject({ method: "POST", path: /\/check-runs$/, status: 429, body: { message: "" } });
    expect(await deliver("opened", pr)).toBe(200);
    expect(clock.waits).toEqual([120_000, 60_000]);
    expect(checkRunsFor(pr.head)).toHaveLength(1);
  });

  it("an exhausted primary limit: waits until x-ratelimit-reset, 50 minutes away", async () => {
    const pr = openPr();
    const reset = Math.floor(clock.now() / 1000) + 50 * 60;
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) }, body: { message: "API rate limit exceeded for installation ID 7." } });
    expect(await deliver("opened", pr)).toBe(200);
    expect(clock.waits).toHaveLength(1);
    expect(clock.waits[0]).toBeGreaterThan(49 * 60_000);
    expect(clock.waits[0]).toBeLessThanOrEqual(50 * 60_000 + 2000);
    expect(checkRunsFor(pr.head)).toHaveLength(1);
  });

  it("gives up past the horizon with a check run saying why; the next delivery reviews", async () => {
    const pr = openPr();
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 502, times: 13 });
    const first = randomUUID();
    expect(await deliver("opened", pr, first)).toBe(200);
    expect(filesCalls(pr.number)).toHaveLength(13); // 12 retries, then the policy gives up
    const [trace] = checkRunsFor(pr.head);
    expect(trace).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(trace!.output.title).toBe("HCP review not done: GitHub kept failing");
    expect(trace!.output.summary).toContain("kept answering 502 after 13 tries");
    expect(trace!.output.summary).toContain("Re-run");
    // The failed job is retried (a redelivery of the same delivery adds nothing beside it).
    expect(await deliver("opened", pr, first)).toBe(200);
    await reviewed(pr.head);
    const runs = checkRunsFor(pr.head);
    expect(runs).toHaveLength(1); // the trace is updated into the review, not left beside it
    expect(runs[0]!.output.title).toMatch(/^1 error\(s\)/);
  });

  it("a primary limit resetting past the horizon: gives up at once (no hour of waiting), says until when, and retries no sooner", async () => {
    const pr = openPr();
    const reset = Math.floor(clock.now() / 1000) + 2 * 3600;
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) }, body: { message: "API rate limit exceeded for installation ID 7." } });
    expect(await deliver("opened", pr)).toBe(200);
    expect(clock.waits).toEqual([]);
    const [trace] = checkRunsFor(pr.head);
    expect(trace!.output.summary).toContain("rate limit is used up");
    expect(trace!.output.summary).toContain(new Date((reset + 1) * 1000).toISOString().slice(0, 16));
    // The job's retry, and the next event queued behind it on the same PR, wait for the reset:
    // nothing calls GitHub sooner than it asked.
    const calls = filesCalls(pr.number).length;
    expect(await deliver("synchronize", pr)).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect(filesCalls(pr.number)).toHaveLength(calls);
    expect(checkRunsFor(pr.head)[0]!.output.title).toBe("HCP review not done: GitHub kept failing");
  });
});
