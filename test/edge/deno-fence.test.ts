// The lease fence on the edge (src/jobs/fence.ts, the code Node runs too): two Deno processes
// on one KV file, one of them paused (SIGSTOP: an isolate frozen, so nobody renews its lease)
// while its review waits on GitHub. Once the lease passes, the other process takes the job;
// when the paused one wakes, its GitHub call answers and it would go on to write. The fence
// checks the lease's owner at the store before that write, so the PR gets one check run, one
// review and one summary comment, from the process that holds the lease.
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appKeys, hcpRecipe } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { startEdge, until, type EdgeProcess } from "./runtimes.ts";

const SECRET = "deno-fence-secret";
const RECIPE_FILE = "src/megatron/bridge/recipes/llama/llama3.py";
const SHA = "6".repeat(40);
let gh: FakeGitHub;
let paused: EdgeProcess;
let other: EdgeProcess;

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 79, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: 5, account: "acme", accountType: "Organization" });
  gh.addRepo({ owner: "acme", repo: "mb", defaultBranch: "main", installationId: 5, files: { main: { [RECIPE_FILE]: hcpRecipe("llama3_8b", { sizes: true }) } } });
  const files = { [RECIPE_FILE]: hcpRecipe("llama3_8b", { sizes: false }) };
  gh.addCommit({ owner: "acme", repo: "mb", branch: "pr-1", base: "main", sha: SHA, files });
  gh.addPullRequest({ owner: "acme", repo: "mb", number: 1, user: "author", head: { sha: SHA, ref: "pr-1" }, files: [{ filename: RECIPE_FILE, contents: files[RECIPE_FILE], status: "added" }] });
  const env = {
    APP_ID: "79",
    PRIVATE_KEY: appKeys.privateKey,
    WEBHOOK_SECRET: SECRET,
    GHE_HOST: new URL(gh.url).host,
    GHE_PROTOCOL: "http",
    // One KV file for both processes: two replicas of one store.
    HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-deno-fence-")),
    LOG_LEVEL: "warn",
    HCP_JOB_LEASE_SECONDS: "3",
    HCP_JOB_RETRY_SECONDS: "1",
  };
  [paused, other] = await Promise.all([startEdge("deno", env), startEdge("deno", env)]);
});

afterAll(async () => {
  if (paused?.pid) process.kill(paused.pid, "SIGCONT");
  await Promise.all([paused?.stop(), other?.stop()]);
  await gh?.close();
});

const posts = (pattern: RegExp) => gh.calls.filter((c) => c.method === "POST" && pattern.test(c.path) && !c.injected);

/** Waits until the fake GitHub saw no new call for a while (both processes' work has settled). */
async function quiet(ms = 3000): Promise<void> {
  let last = -1;
  let since = Date.now();
  await until(
    "the fake GitHub to go quiet",
    () => {
      if (gh.calls.length !== last) {
        last = gh.calls.length;
        since = Date.now();
      }
      return Date.now() - since >= ms;
    },
    PATIENCE_MS,
  );
}

describe("a Deno process paused past its job's lease", () => {
  it("writes nothing when it wakes: the process that took the job writes one check run, one review, one summary", async () => {
    // GitHub holds its answer to the review's look for an existing check run (the last read
    // before the check run is written; the answer is "none"): the review waits on GitHub. The
    // run that takes the job after the lease passes is held there too, and both are let go
    // together: each has read "none", so without the fence both create a check run.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const lookup = new RegExp(`/commits/${SHA}/check-runs`);
    gh.inject({ method: "GET", path: lookup, status: 200, body: { total_count: 0, check_runs: [] }, until: held, times: 2 });
    const stalled = () => gh.calls.filter((c) => c.injected && lookup.test(c.path)).length;
    const payload = { action: "opened", number: 1, installation: { id: 5 }, repository: { id: 1, name: "mb", full_name: "acme/mb", owner: { login: "acme", id: 2, type: "Organization" }, default_branch: "main" }, sender: { login: "author", id: 3, type: "User" }, pull_request: { number: 1, head: { sha: SHA, ref: "pr-1" }, draft: false, state: "open" } };
    const body = JSON.stringify(payload);
    const res = await fetch(`${paused.url}/api/github/webhooks`, { method: "POST", headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": randomUUID(), "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}` }, body });
    expect(res.status).toBe(202);
    await until("the review to reach the held call", () => stalled() === 1);
    process.kill(paused.pid!, "SIGSTOP");
    try {
      // The lease (3 s) passes unrenewed; the other process's recovery takes the job.
      await until("the other process to take the job whose lease passed", () => stalled() === 2, PATIENCE_MS);
    } finally {
      process.kill(paused.pid!, "SIGCONT");
      letGo();
    }
    await until("the summary comment", () => posts(/\/issues\/1\/comments$/).length > 0, PATIENCE_MS);
    await quiet();
    const written = { checkRuns: posts(/\/check-runs$/).length, reviews: posts(/\/pulls\/1\/reviews$/).length, summaries: posts(/\/issues\/1\/comments$/).length };
    expect(written).toEqual({ checkRuns: 1, reviews: 1, summaries: 1 });
    expect(paused.output()).toMatch(/lease was lost/);
  });
});
