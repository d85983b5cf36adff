// Deno Deploy sends SIGINT before it shuts an isolate down: the job running there goes back
// to the store, and the next process reviews the PR at once, not after the job's lease
// (two minutes here, as by default) has passed.
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appKeys, hcpRecipe } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { startEdge, until, type EdgeProcess } from "./runtimes.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const SECRET = "deno-signal-secret";
const RECIPE_FILE = "src/megatron/bridge/recipes/llama/llama3.py";
let gh: FakeGitHub;
let bot: EdgeProcess;

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 78, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: 5, account: "acme", accountType: "Organization" });
  gh.addRepo({ owner: "acme", repo: "mb", defaultBranch: "main", installationId: 5, files: { main: { [RECIPE_FILE]: hcpRecipe("llama3_8b", { sizes: true }) } } });
  bot = await startEdge("deno", {
    APP_ID: "78",
    PRIVATE_KEY: appKeys.privateKey,
    WEBHOOK_SECRET: SECRET,
    GHE_HOST: new URL(gh.url).host,
    GHE_PROTOCOL: "http",
    HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-deno-signal-")),
    LOG_LEVEL: "error",
    HCP_JOB_LEASE_SECONDS: "120",
  });
});

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
});

describe("Deno on SIGINT", () => {
  it("hands its running job back, so the restarted process reviews within seconds, not after the lease", async () => {
    const sha = "5".repeat(40);
    const files = { [RECIPE_FILE]: hcpRecipe("llama3_8b", { sizes: false }) };
    gh.addCommit({ owner: "acme", repo: "mb", branch: "pr-1", base: "main", sha, files });
    gh.addPullRequest({ owner: "acme", repo: "mb", number: 1, user: "author", head: { sha, ref: "pr-1" }, files: [{ filename: RECIPE_FILE, contents: files[RECIPE_FILE], status: "added" }] });
    // The first run hangs on its check-run post when the signal comes.
    gh.inject({ method: "POST", path: /\/check-runs$/, status: 500, delayMs: 60_000 });
    const payload = { action: "opened", number: 1, installation: { id: 5 }, repository: { id: 1, name: "mb", full_name: "acme/mb", owner: { login: "acme", id: 2, type: "Organization" }, default_branch: "main" }, sender: { login: "author", id: 3, type: "User" }, pull_request: { number: 1, head: { sha, ref: "pr-1" }, draft: false, state: "open" } };
    const body = JSON.stringify(payload);
    const res = await fetch(`${bot.url}/api/github/webhooks`, { method: "POST", headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": randomUUID(), "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}` }, body });
    expect(res.status).toBe(202);
    await until("the first run to reach the check-run post", () => gh.calls.find((c) => c.injected && c.path.endsWith("/check-runs")));
    const signalled = Date.now();
    await bot.interrupt(0, "SIGINT");
    await until("the summary comment", () => [...gh.state.issueComments.values()].find((c) => c.issueNumber === 1 && c.body.includes("HCP001")), PATIENCE_MS);
    expect(Date.now() - signalled).toBeLessThan(30_000);
    expect([...gh.state.checkRuns.values()].filter((c) => c.headSha === sha && c.name === "HCP review")).toHaveLength(1);
  });
});
