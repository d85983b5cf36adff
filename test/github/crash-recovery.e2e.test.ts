// The states a crash mid-dispatch can leave (src/github/smoke/recovery.ts), each made as the
// crash leaves it (the store's record, and on the fake GitHub the check run the dead process
// had created), then resolved through the real server: by the next command on the PR or by
// the periodic sweep. State C (a run GitHub created, answer lost) is tested with a real
// process killed mid-dispatch in test/replicas/replicas.test.ts.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { STUCK_AFTER_MS } from "../../src/github/smoke/recovery.ts";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { SqliteStore, type SmokeRequest } from "../../src/store/index.ts";
import { appKeys, botSettings, deliverAndSettle } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { addSmokeRepo, SmokeFlow, type FlowRepo } from "../support/smoke-flow.ts";
import { request } from "../store/helpers.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const SECRET = "crash-secret";
const APP_ID = 7373;
const R: FlowRepo = { owner: "acme", repo: "mb", installation: 21 };

let gh: FakeGitHub;
let bot: RunningServer;
let store: SqliteStore;
let flow: SmokeFlow;
let clock = Date.parse("2026-06-01T10:00:00Z");

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: APP_ID, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: R.installation, account: R.owner, accountType: "Organization" });
  addSmokeRepo(gh, R);
  gh.setPermission("maint", "write");
  const dataDir = mkdtempSync(join(tmpdir(), "hcp-crash-"));
  store = SqliteStore.open(dataDir, { now: () => new Date(clock) });
  bot = await startServer(botSettings({ githubUrl: gh.url, appId: APP_ID, secret: SECRET, dataDir }), { store, sweepIntervalMs: 100, smoke: { now: () => new Date(clock), runLookup: { attempts: 2, delayMs: 10 } } });
  flow = new SmokeFlow({ gh, bot: () => bot, secret: SECRET });
});

afterAll(async () => {
  await bot?.stop();
  await store?.close();
  await gh?.close();
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
});

/** A request as step (1) of requestSmoke leaves it: `requested`, from a delivery that died. */
async function halfMade(pr: { number: number; sha: string }, deliveryId = `dead-${pr.number}`): Promise<SmokeRequest> {
  return store.createSmokeRequest(request({ repo: `${R.owner}/${R.repo}`, pr: pr.number, sha: pr.sha, githubLogin: "maint", deliveryId, installationId: R.installation }));
}

/** Step (2): the queued check run the dead process created, found by its external_id. */
async function checkRunFor(request: SmokeRequest): Promise<number> {
  const res = await fetch(`${gh.apiUrl}/repos/${R.owner}/${R.repo}/check-runs`, {
    method: "POST",
    headers: { authorization: `token ${gh.installationToken(R.installation)}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "HCP smoke", head_sha: request.sha, status: "queued", external_id: request.id, output: { title: "Smoke run requested by @maint", summary: "plan" } }),
  });
  return ((await res.json()) as { id: number }).id;
}

async function checkRun(id: number): Promise<{ status: string; conclusion: string | null; output: { title: string } }> {
  const res = await fetch(`${gh.apiUrl}/repos/${R.owner}/${R.repo}/check-runs/${id}`, { headers: { authorization: `token ${gh.installationToken(R.installation)}` } });
  return (await res.json()) as { status: string; conclusion: string | null; output: { title: string } };
}

async function waitFor(check: () => Promise<boolean>, what: string, ms = PATIENCE_MS): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const comment = (pr: number) => flow.deliver("issue_comment", flow.commentPayload(R, pr, "/hcp smoke", "maint"));

describe("a request a crash left `requested`", () => {
  it("counts as a dispatch under way while it is young: a new command on the PR starts nothing", async () => {
    const pr = flow.openPr(R);
    const stuck = await halfMade(pr);
    const before = gh.state.dispatches.length;
    await comment(pr.number);
    expect(gh.state.dispatches.length).toBe(before);
    const replies = [...gh.state.issueComments.values()].filter((c) => c.body.includes(stuck.id));
    expect(replies.map((c) => c.body).join("\n")).toMatch(/is being dispatched/);
    expect((await store.getSmokeRequest(stuck.id))?.status).toBe("requested");
  });

  it("state A (no check run): the next command marks it failed (nothing ran) and dispatches once", async () => {
    const pr = flow.openPr(R);
    const stuck = await halfMade(pr);
    clock += STUCK_AFTER_MS + 1000;
    const before = gh.state.dispatches.length;
    await comment(pr.number);
    expect(await store.getSmokeRequest(stuck.id)).toMatchObject({ status: "failed", reason: expect.stringMatching(/nothing ran/) });
    expect(gh.state.dispatches.length - before).toBe(1);
    expect((gh.state.dispatches[before]!.inputs as Record<string, string>).request_id).not.toBe(stuck.id);
    expect((await store.auditLog({ requestId: stuck.id }))[0]).toMatchObject({ action: "recover", decision: "denied" });
  });

  it("state B (a queued check run, no run): the sweep marks it failed and completes the check run, which would stay queued", async () => {
    const pr = flow.openPr(R);
    const stuck = await halfMade(pr);
    const check = await checkRunFor(stuck);
    expect((await checkRun(check)).status).toBe("queued");
    clock += STUCK_AFTER_MS + 1000;
    await waitFor(async () => (await store.getSmokeRequest(stuck.id))?.status === "failed", "the sweep");
    expect(await store.getSmokeRequest(stuck.id)).toMatchObject({ status: "failed", checkRunId: check });
    await waitFor(async () => (await checkRun(check)).status === "completed", "the check run to complete");
    expect(await checkRun(check)).toMatchObject({ status: "completed", conclusion: "failure", output: { title: "Smoke run did not start" } });
  });

  it("the same delivery run again (its durable job after a crash) resolves its own request at once, without waiting", async () => {
    const pr = flow.openPr(R);
    const stuck = await halfMade(pr, "the-same-delivery");
    await checkRunFor(stuck);
    const before = gh.state.dispatches.length;
    // Another delivery is refused (the request is young and not its own) ...
    await deliverAndSettle(bot, SECRET, "issue_comment", flow.commentPayload(R, pr.number, "/hcp smoke", "maint"), "another-delivery");
    expect(gh.state.dispatches.length).toBe(before);
    // ... the delivery that made it (its job run again) resolves it: nothing ran, so it dispatches now, once.
    await deliverAndSettle(bot, SECRET, "issue_comment", flow.commentPayload(R, pr.number, "/hcp smoke", "maint"), "the-same-delivery");
    expect((await store.getSmokeRequest(stuck.id))?.status).toBe("failed");
    expect(gh.state.dispatches.length - before).toBe(1);
  });
});
