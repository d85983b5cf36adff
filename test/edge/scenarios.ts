// The edge deployment's behaviour, the same scenarios on workerd and on Deno: the built
// bundle, driven over loopback with real signatures against the fake GitHub (validated by
// GitHub's OpenAPI description, App JWTs checked) and the fake Slack, polling the fakes'
// state (the answer comes before the work, so there is nothing to wait on but the fakes).
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appKeys, completeSmokeRun, hcpRecipe, PASSING_RUN_LOG, runnerFacts, SMOKE_RECIPE, smokeWorkflowFile, trainingLog } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { startFakeSlack, type FakeSlack } from "../support/fake-slack/index.ts";
import { postWholeThenRead } from "../support/raw-http.ts";
import { slashCommandForm } from "../support/slack-form.ts";
import { MAX_WEBHOOK_BYTES } from "../../src/edge/webhook.ts";
import { startEdge, until, type EdgeProcess, type RuntimeName } from "./runtimes.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const SECRET = "edge-webhook-secret";
const SLACK_SECRET = "edge-slack-secret";
const HEALTH_TOKEN = "edge-operator-health-token";
const OWNER = "acme";
const REPO = "mb";
const INSTALLATION = 9;
const RECIPE_FILE = "src/megatron/bridge/recipes/llama/llama3.py";
const CONFIG = `smoke:
  quotas: {per_user_per_day: 1000, max_queued: 1000}
slack:
  users: {T0TEAM/U0MAINT: maint}
  channels: [C0SMOKE]
`;
/** A repository whose smoke runs may wait one minute (the shortest limit) for a GPU runner. */
const QUEUE_REPO = "mb-queue";
const QUEUE_CONFIG = `smoke:
  quotas: {per_user_per_day: 1000, max_queued: 1000}
  timeouts: {queue_minutes: 1}
`;
/** The retry horizon the scenarios run under (HCP_GITHUB_WAIT_HORIZON_SECONDS). */
const HORIZON_SECONDS = 3;
const SECONDARY = { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" };
const NOT_DONE = "HCP review not done: GitHub kept failing";
/** The state a smoke message shows (its Status field), in the order a run goes through them. */
const STATES = ["queued", "running", "finished"];
const stateOf = (body: Record<string, unknown>) => STATES.indexOf(/\*Status\*\\n(\w+)/.exec(JSON.stringify(body.blocks))?.[1] ?? "");
/** a2a+p2p without hierarchical_context_parallel_sizes: HCP001 with a one-click fix. */
const BROKEN_RECIPE = hcpRecipe("llama3_8b", { sizes: false });

export function defineEdgeScenarios(runtime: RuntimeName): void {
  let gh: FakeGitHub;
  let slack: FakeSlack;
  let bot: EdgeProcess;
  let env: Record<string, string>;
  let prCounter = 0;
  /** A smoke run asked for at start-up in QUEUE_REPO, which no runner ever picks up. */
  let unpicked: { sha: string; runId: number; at: number };

  const repository = () => ({ id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main" });
  const repoKey = `${OWNER}/${REPO}`;

  async function deliver(event: string, payload: object, o: { id?: string; signature?: string | null; body?: string } = {}): Promise<number> {
    const body = o.body ?? JSON.stringify(payload);
    const signature = o.signature === undefined ? `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}` : o.signature;
    const res = await fetch(`${bot.url}/api/github/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": event, "x-github-delivery": o.id ?? randomUUID(), ...(signature === null ? {} : { "x-hub-signature-256": signature }) },
      body,
    });
    await res.text();
    return res.status;
  }

  function openPr(files: Record<string, string>, author = "author"): { number: number; sha: string } {
    const number = ++prCounter;
    const sha = (0x5000 + number).toString(16).padStart(40, "c");
    gh.addCommit({ owner: OWNER, repo: REPO, branch: `pr-${number}`, base: "main", sha, files });
    gh.addPullRequest({ owner: OWNER, repo: REPO, number, user: author, head: { sha, ref: `pr-${number}` }, files: Object.entries(files).map(([filename, contents]) => ({ filename, contents, status: "added" as const })) });
    return { number, sha };
  }

  const prPayload = (pr: { number: number; sha: string }, action = "opened") => ({
    action,
    number: pr.number,
    installation: { id: INSTALLATION },
    repository: repository(),
    sender: { login: "author", id: 3, type: "User" },
    pull_request: { number: pr.number, head: { sha: pr.sha, ref: `pr-${pr.number}` }, draft: false, html_url: `${gh.url}/${OWNER}/${REPO}/pull/${pr.number}`, state: "open" },
  });

  const commentPayload = (pr: number, body: string, login: string) => ({
    action: "created",
    installation: { id: INSTALLATION },
    repository: repository(),
    sender: { login, id: 50, type: "User" },
    issue: { number: pr, pull_request: { url: `${gh.apiUrl}/repos/${OWNER}/${REPO}/pulls/${pr}` }, user: { login: "author" } },
    comment: { id: Math.floor(Math.random() * 1e9), body, user: { login, id: 50, type: "User" } },
  });

  const runPayload = (run: { id: number; status: string; conclusion: string | null; requestId: string }) => ({
    action: run.status === "completed" ? "completed" : "in_progress",
    installation: { id: INSTALLATION },
    repository: repository(),
    sender: { login: "github-actions[bot]", id: 41898282, type: "Bot" },
    workflow_run: {
      id: run.id,
      status: run.status,
      conclusion: run.conclusion,
      display_title: `hcp-smoke ${run.requestId}`,
      name: "hcp-smoke",
      event: "workflow_dispatch",
      head_branch: "main",
      path: ".github/workflows/hcp-smoke.yml",
      html_url: `${gh.url}/${OWNER}/${REPO}/actions/runs/${run.id}`,
    },
  });

  const checkRuns = (sha: string, name: string) => [...gh.state.checkRuns.values()].filter((c) => c.headSha === sha && c.name === name);
  const reviews = (pr: number) => [...gh.state.reviews.values()].filter((r) => r.pullNumber === pr);
  const comments = (pr: number) => [...gh.state.issueComments.values()].filter((c) => c.issueNumber === pr);
  const dispatchesFor = (sha: string) => gh.state.dispatches.filter((d) => d.inputs.sha === sha);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

  /** A signed `/hcp TEXT` from U0MAINT in C0SMOKE; each call of the result sends the same request again (a Slack retry). */
  function slashCommand(text: string, responseId: string): () => Promise<Response> {
    const body = slashCommandForm(text, { channel_id: "C0SMOKE", user_id: "U0MAINT", response_url: slack.responseUrl(responseId), trigger_id: `t.${randomUUID()}` });
    const ts = Math.floor(Date.now() / 1000);
    return () =>
      fetch(`${bot.url}/slack/events`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(ts), "x-slack-signature": `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${body}`).digest("hex")}` },
        body,
      });
  }

  const filesCalls = (pr: number) => gh.calls.filter((c) => c.method === "GET" && c.path.endsWith(`/pulls/${pr}/files`));
  const reviewed = (sha: string) => checkRuns(sha, "HCP review").find((c) => /^\d+ error\(s\)/.test(c.output.title ?? ""));

  /** The run uploads `log` as its artifact and completes; the bot hears of it. */
  async function finishRun(sha: string, log: string, facts = runnerFacts()) {
    const sent = await until("the dispatch", () => dispatchesFor(sha)[0]);
    const requestId = String(sent.inputs.request_id);
    await completeSmokeRun(gh, { runId: sent.runId, requestId }, { "smoke.log": log, "verdict.json": facts });
    expect(await deliver("workflow_run", runPayload({ id: sent.runId, status: "completed", conclusion: "success", requestId }))).toBe(202);
    return until("the smoke check run to complete", () => checkRuns(sha, "HCP smoke").find((c) => c.status === "completed"), PATIENCE_MS);
  }

  beforeAll(async () => {
    gh = await startFakeGitHub({ appId: 77, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
    slack = await startFakeSlack({ token: "xoxb-test" });
    gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
    gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: SMOKE_RECIPE, ".github/hcp-bot.yml": CONFIG } } });
    gh.addRepo({ owner: OWNER, repo: QUEUE_REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: SMOKE_RECIPE, ".github/hcp-bot.yml": QUEUE_CONFIG } } });
    for (const repo of [REPO, QUEUE_REPO]) {
      gh.addWorkflow({ owner: OWNER, repo, path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke", content: smokeWorkflowFile() });
    }
    gh.setPermission("maint", "write");
    gh.setPermission("reader", "read");
    gh.setPermission("author", "write");
    env = {
      APP_ID: "77",
      // PKCS#1, as GitHub hands it out: the edge host wraps it for WebCrypto.
      PRIVATE_KEY: appKeys.privateKey,
      WEBHOOK_SECRET: SECRET,
      GHE_HOST: new URL(gh.url).host,
      GHE_PROTOCOL: "http",
      SLACK_SIGNING_SECRET: SLACK_SECRET,
      SLACK_BOT_TOKEN: "xoxb-test",
      SLACK_API_URL: slack.apiUrl,
      HCP_DATA_DIR: mkdtempSync(join(tmpdir(), `hcp-edge-${runtime}-`)),
      LOG_LEVEL: "error",
      HCP_JOB_LEASE_SECONDS: "3",
      HCP_JOB_RETRY_SECONDS: "1",
      HCP_JOB_UNLEASED_SECONDS: "2",
      HCP_HEALTH_TOKEN: HEALTH_TOKEN,
      // The GitHub retry policy as on the edge, with its horizon (ten minutes) and first
      // secondary-limit wait (a minute) made seconds, so the scenarios past them take seconds.
      HCP_GITHUB_WAIT_HORIZON_SECONDS: String(HORIZON_SECONDS),
      HCP_GITHUB_SECONDARY_WAIT_SECONDS: "1",
    };
    bot = await startEdge(runtime, env);

    // The queue-timeout sweep needs a request older than its one-minute limit, and the
    // runtimes run on the real clock: the request is made here, so the minute passes while
    // the other scenarios run, and the last scenario checks the sweep.
    // PR 901: no number the other scenarios use (they look PRs up by number alone).
    const sha = "9".repeat(40);
    gh.addCommit({ owner: OWNER, repo: QUEUE_REPO, branch: "pr-901", base: "main", sha, files: { [RECIPE_FILE]: SMOKE_RECIPE } });
    gh.addPullRequest({ owner: OWNER, repo: QUEUE_REPO, number: 901, user: "author", head: { sha, ref: "pr-901" }, files: [{ filename: RECIPE_FILE, contents: SMOKE_RECIPE, status: "added" }] });
    const queueRepository = { ...repository(), id: 11, name: QUEUE_REPO, full_name: `${OWNER}/${QUEUE_REPO}` };
    const comment = { ...commentPayload(901, "/hcp smoke", "maint"), repository: queueRepository, issue: { number: 901, pull_request: { url: `${gh.apiUrl}/repos/${OWNER}/${QUEUE_REPO}/pulls/901` }, user: { login: "author" } } };
    expect(await deliver("issue_comment", comment)).toBe(202);
    const sent = await until("the dispatch in the queue-limit repository", () => gh.state.dispatches.find((d) => d.inputs.sha === sha));
    await until("its smoke check run", () => checkRuns(sha, "HCP smoke")[0]);
    unpicked = { sha, runId: sent.runId, at: Date.now() };
  });

  afterAll(async () => {
    if (process.env.EDGE_DEBUG) console.log(bot?.output());
    await bot?.stop();
    await gh?.close();
    await slack?.close();
  });

  afterEach(() => {
    expect(gh.violations).toEqual([]);
    expect(slack.violations).toEqual([]);
  });

  describe(`the bot on ${runtime}`, () => {
    it("says in /healthz which runtime, store and verdict scanner it has, to the operator's token only", async () => {
      const anyone = await fetch(`${bot.url}/healthz`);
      expect(anyone.status).toBe(200);
      expect(await anyone.json()).toEqual({ status: "ok" });
      const wrong = await fetch(`${bot.url}/healthz`, { headers: { authorization: `Bearer ${HEALTH_TOKEN.replace(/.$/, "x")}` } });
      expect(await wrong.json()).toEqual({ status: "ok" });
      const res = await fetch(`${bot.url}/healthz`, { headers: { authorization: `Bearer ${HEALTH_TOKEN}` } });
      const health = (await res.json()) as { status: string; runtime: string; store: { kind: string; ok: boolean }; slack: string; verdictScanner: string };
      expect(res.status).toBe(200);
      expect(health).toMatchObject({ status: "ok", runtime, store: { kind: runtime === "workerd" ? "durable-object" : "deno-kv", ok: true }, slack: "on", verdictScanner: "webassembly" });
    });

    it("answers HEAD /healthz as GET without a body, and Slack's signed ssl_check=1 with 200", async () => {
      const head = await fetch(`${bot.url}/healthz`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await head.text()).toBe("");
      const body = "ssl_check=1&token=legacy-verification-token";
      const ts = Math.floor(Date.now() / 1000);
      const signature = `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`;
      const check = await fetch(`${bot.url}/slack/events`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(ts), "x-slack-signature": signature }, body });
      expect(check.status).toBe(200);
      expect(await check.text()).toBe("");
    });

    it("reviews an opened PR once: check run, inline suggestion, summary; a redelivery does nothing", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      const id = randomUUID();
      expect(await deliver("pull_request", prPayload(pr), { id })).toBe(202);
      const summary = await until("the summary comment", () => comments(pr.number).find((c) => c.body.includes("HCP001")));
      expect(checkRuns(pr.sha, "HCP review")).toMatchObject([{ status: "completed", conclusion: "failure" }]);
      expect(reviews(pr.number)).toHaveLength(1);
      const inline = [...gh.state.reviewComments.values()].filter((c) => c.pullNumber === pr.number);
      expect(inline.some((c) => c.body.includes("```suggestion"))).toBe(true);
      expect(summary.user.login).toBe("hcp-bot[bot]");

      expect(await deliver("pull_request", prPayload(pr), { id })).toBe(200);
      await settle();
      expect(reviews(pr.number)).toHaveLength(1);
      expect(comments(pr.number)).toHaveLength(1);
      expect(checkRuns(pr.sha, "HCP review")).toHaveLength(1);
    });

    it("refuses a missing, malformed or forged signature with 401 and calls nothing; 413 for a huge body; 400 for a signed body that is not its event", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      const before = gh.calls.length;
      expect(await deliver("pull_request", prPayload(pr), { signature: null })).toBe(401);
      expect(await deliver("pull_request", prPayload(pr), { signature: "sha256=zz" })).toBe(401);
      expect(await deliver("pull_request", prPayload(pr), { signature: "" })).toBe(401);
      expect(await deliver("pull_request", prPayload(pr), { signature: `sha256=${"0".repeat(64)}` })).toBe(401);
      // Signed, but not what its event carries: 400, not a 500 or a job that fails later.
      const { pull_request: _, ...noPr } = prPayload(pr);
      expect(await deliver("pull_request", noPr)).toBe(400);
      // Without the head, the PR's number or the installation the job could only fail, five times.
      const { head: _head, ...noHead } = prPayload(pr).pull_request;
      expect(await deliver("pull_request", { ...prPayload(pr), pull_request: noHead })).toBe(400);
      const { number: _number, ...noNumber } = prPayload(pr).pull_request;
      expect(await deliver("pull_request", { ...prPayload(pr), pull_request: noNumber })).toBe(400);
      const { installation: _installation, ...noInstallation } = prPayload(pr);
      expect(await deliver("pull_request", noInstallation)).toBe(400);
      expect(await deliver("pull_request", prPayload(pr), { body: "[1,2]" })).toBe(400);
      expect(await deliver("pull_request", prPayload(pr), { body: "{not json" })).toBe(400);
      expect(await deliver("pull_request", prPayload(pr), { body: JSON.stringify({ ...prPayload(pr), pad: "x".repeat(MAX_WEBHOOK_BYTES) }) })).toBe(413);
      // Signed and well formed, but nothing the app acts on: answered without a job.
      expect(await deliver("pull_request", { ...prPayload(pr), action: "labeled" })).toBe(200);
      await settle();
      // Nothing for this repository (the start-up smoke run in QUEUE_REPO may still be settling).
      expect(gh.calls.slice(before).filter((c) => c.path.startsWith(`/repos/${OWNER}/${REPO}/`))).toEqual([]);
      expect(checkRuns(pr.sha, "HCP review")).toEqual([]);
    });

    it("takes deliveries up to GitHub's 25 MB as Node does: a 1.5 MB and a 3 MB issue_comment are answered 202 and acted on", async () => {
      expect(MAX_WEBHOOK_BYTES).toBe(25 * 1024 * 1024);
      for (const size of [1_500_000, 3_000_000]) {
        const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
        // The issue's own text makes the size (an issue_comment carries the whole issue), as a long PR description does.
        const payload = commentPayload(pr.number, "/hcp help", "author");
        const body = JSON.stringify({ ...payload, issue: { ...payload.issue, body: `${"long description ".repeat(size / 17)}` } });
        expect(body.length).toBeGreaterThan(size - 100);
        expect(await deliver("issue_comment", payload, { body })).toBe(202);
        await until(`the /hcp help reply to the ${size}-byte delivery`, () => comments(pr.number).find((c) => c.body.includes("/hcp smoke")));
      }
    });

    it("answers 413 to a client that writes a whole body over the cap before it reads, as GitHub's does", async () => {
      // Declared by content-length and signed (the cap is checked before the signature).
      const bytes = Math.floor(MAX_WEBHOOK_BYTES * 1.5); // within the bound of what is read and dropped
      const headers = { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": randomUUID(), "x-hub-signature-256": `sha256=${"0".repeat(64)}` };
      for (let i = 0; i < 3; i++) expect(await postWholeThenRead({ url: `${bot.url}/api/github/webhooks`, headers, prefix: '{"pad":"', bytes })).toEqual({ status: 413 });
    });

    it("dispatches /hcp smoke by a writer once, on the default branch with the pinned SHA; refuses a reader", async () => {
      const pr = openPr({ [RECIPE_FILE]: SMOKE_RECIPE });
      expect(await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"))).toBe(202);
      const sent = await until("the dispatch", () => dispatchesFor(pr.sha)[0]);
      expect(sent).toMatchObject({ ref: "main", inputs: { sha: pr.sha, recipe: "llama32_1b_pretrain_config", expect_hcp: "true" } });
      await until("the smoke reply", () => comments(pr.number).find((c) => c.body.includes("hcp-bot:smoke")));
      expect(checkRuns(pr.sha, "HCP smoke")).toMatchObject([{ status: "queued" }]);
      // The runner's job starts: the check run follows.
      const job = { action: "in_progress", installation: { id: INSTALLATION }, repository: repository(), sender: { login: "github-actions[bot]", id: 41898282, type: "Bot" }, workflow_job: { id: 77, run_id: sent.runId, status: "in_progress", html_url: `${gh.url}/${OWNER}/${REPO}/actions/runs/${sent.runId}/job/77` } };
      expect(await deliver("workflow_job", job)).toBe(202);
      await until("the smoke check run to be in progress", () => checkRuns(pr.sha, "HCP smoke").find((c) => c.status === "in_progress"));

      const other = openPr({ [RECIPE_FILE]: SMOKE_RECIPE });
      expect(await deliver("issue_comment", commentPayload(other.number, "/hcp smoke", "reader"))).toBe(202);
      const refusal = await until("the refusal", () => comments(other.number).find((c) => c.body.includes("no smoke run")));
      expect(refusal.body).toMatch(/@reader no smoke run: .*write/);
      expect(dispatchesFor(other.sha)).toEqual([]);
      expect(dispatchesFor(pr.sha)).toHaveLength(1);
    });

    it("judges completed runs from their log artifact: a passing HCP log succeeds, a flat one fails", async () => {
      const good = openPr({ [RECIPE_FILE]: SMOKE_RECIPE });
      expect(await deliver("issue_comment", commentPayload(good.number, "/hcp smoke", "maint"))).toBe(202);
      expect(await finishRun(good.sha, trainingLog(PASSING_RUN_LOG))).toMatchObject({ conclusion: "success" });

      const flat = openPr({ [RECIPE_FILE]: SMOKE_RECIPE });
      expect(await deliver("issue_comment", commentPayload(flat.number, "/hcp smoke", "maint"))).toBe(202);
      const done = await finishRun(flat.sha, trainingLog("c_nccl_cp2_flat.log"), JSON.stringify({ exitCode: 0 }));
      expect(done.conclusion).toBe("failure");
      await until("the PR comment to show the verdict", () => comments(flat.number).find((c) => /hcp.inactive|HCP.*(inactive|off)/i.test(c.body)));
    });

    it("starts a smoke run from the check run's button", async () => {
      const pr = openPr({ [RECIPE_FILE]: SMOKE_RECIPE });
      const payload = {
        action: "requested_action",
        installation: { id: INSTALLATION },
        repository: repository(),
        sender: { login: "maint", id: 50, type: "User" },
        requested_action: { identifier: "hcp-smoke" },
        check_run: { id: 1, name: "HCP review", head_sha: pr.sha, pull_requests: [{ number: pr.number, head: { sha: pr.sha } }] },
      };
      expect(await deliver("check_run", payload)).toBe(202);
      expect(await until("the dispatch", () => dispatchesFor(pr.sha)[0])).toMatchObject({ ref: "main", inputs: { sha: pr.sha } });
    });

    it("runs Slack /hcp smoke: the ack at once, the dispatch, and the channel message follows the run to its verdict", async () => {
      const pr = openPr({ [RECIPE_FILE]: SMOKE_RECIPE });
      const responseId = randomUUID();
      const post = slashCommand(`smoke ${OWNER}/${REPO}#${pr.number}`, responseId);
      const ack = await post();
      expect(ack.status).toBe(200);
      expect(((await ack.json()) as { text: string }).text).toMatch(/Smoke run on acme\/mb#/);
      expect(((await (await post()).json()) as { text: string }).text).toMatch(/already received/);
      await until("the dispatch", () => dispatchesFor(pr.sha)[0]);
      const message = await until("the channel message", () => [...slack.messages.values()].find((m) => m.channel === "C0SMOKE" && m.text.includes(`#${pr.number}`)));
      await finishRun(pr.sha, trainingLog(PASSING_RUN_LOG));
      await until("the message to show the verdict", () => {
        const now = slack.messages.get(`${message.channel}:${message.ts}`);
        return now && now.updates > 0 && /PASS|pass/.test(JSON.stringify(now.blocks)) ? now : undefined;
      });
      expect(dispatchesFor(pr.sha)).toHaveLength(1);
      await until("the ephemeral follow-up", () => slack.responses(responseId).find((r) => JSON.stringify(r).includes("dispatched")));
    });

    it("retries a job whose GitHub calls failed, after a delay, and posts once", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      // Four 500s outlast the Octokit retries of the first run; the job's own retry succeeds.
      gh.inject({ method: "POST", path: /\/check-runs$/, status: 500, times: 4 });
      expect(await deliver("pull_request", prPayload(pr))).toBe(202);
      await until("the summary comment", () => comments(pr.number).find((c) => c.body.includes("HCP001")));
      expect(gh.calls.filter((c) => c.injected && c.path.endsWith("/check-runs"))).toHaveLength(4);
      expect(checkRuns(pr.sha, "HCP review")).toHaveLength(1);
      expect(reviews(pr.number)).toHaveLength(1);
    });

    it("completes a job cut off after the answer exactly once, when the runtime comes back", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      // The first run hangs on its check-run post; the runtime dies while it waits.
      gh.inject({ method: "POST", path: /\/check-runs$/, status: 500, delayMs: 60_000 });
      const before = gh.calls.length;
      expect(await deliver("pull_request", prPayload(pr))).toBe(202);
      await until("the first run to reach GitHub's check-run post", () => gh.calls.slice(before).find((c) => c.injected && c.path.endsWith("/check-runs")));
      await bot.interrupt(3500); // past the 3 s lease nobody renews any more
      await bot.scheduled();
      await until("the summary comment", () => comments(pr.number).find((c) => c.body.includes("HCP001")), PATIENCE_MS);
      await settle();
      expect(checkRuns(pr.sha, "HCP review")).toHaveLength(1);
      expect(reviews(pr.number)).toHaveLength(1);
      expect(comments(pr.number)).toHaveLength(1);
    });

    it("waits out a 429 with retry-after: 1 and a secondary rate limit inside the job, then reviews exactly once", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      const files = new RegExp(`/pulls/${pr.number}/files$`);
      gh.inject({ method: "GET", path: files, status: 429, headers: { "retry-after": "1" }, body: { message: "" } });
      gh.inject({ method: "GET", path: files, status: 403, body: SECONDARY });
      expect(await deliver("pull_request", prPayload(pr))).toBe(202);
      await until("the summary comment", () => comments(pr.number).find((c) => c.body.includes("HCP001")));
      const calls = filesCalls(pr.number);
      expect(calls.map((c) => c.status)).toEqual([429, 403, 200]);
      // retry-after's second, then the (shortened) minute of a secondary limit without one.
      expect(calls[1]!.timestamp - calls[0]!.timestamp).toBeGreaterThanOrEqual(950);
      expect(calls[2]!.timestamp - calls[1]!.timestamp).toBeGreaterThanOrEqual(950);
      await settle();
      // Waited, not given up: no trace was left, the job did not run twice.
      const posts = gh.calls.filter((c) => c.method === "POST" && c.path.endsWith("/check-runs") && c.body && (c.body as { head_sha?: string }).head_sha === pr.sha);
      expect(posts).toHaveLength(1);
      expect(checkRuns(pr.sha, "HCP review")).toMatchObject([{ status: "completed", conclusion: "failure", output: { title: expect.stringMatching(/^1 error\(s\)/) } }]);
      expect(reviews(pr.number)).toHaveLength(1);
      expect(comments(pr.number)).toHaveLength(1);
      expect(filesCalls(pr.number)).toHaveLength(3);
    });

    it("gives up at once on a retry-after past the edge's horizon: a check run says why, and nothing calls GitHub again sooner than it asked", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      // Longer than the job queued behind it can wait on Queue retries alone (max_retries 10, a second apart).
      const asked = 12;
      gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 403, headers: { "retry-after": String(asked) }, body: SECONDARY });
      const id = randomUUID();
      expect(await deliver("pull_request", prPayload(pr), { id })).toBe(202);
      const trace = await until("the check run saying the review was not done", () => checkRuns(pr.sha, "HCP review").find((c) => c.output.title === NOT_DONE));
      const limited = filesCalls(pr.number)[0]!;
      // Given up, not slept on: the trace is there well before the wait GitHub asked for is over.
      expect(Date.now() - limited.timestamp).toBeLessThan(asked * 1000);
      expect(trace).toMatchObject({ status: "completed", conclusion: "failure" });
      expect(trace.output.summary).toContain("kept answering 403 with retry-after after 1 try and 0 s of waiting; it asked to wait until");
      expect(trace.output.summary).toContain("Re-run");
      // A redelivery adds nothing; the next event waits behind the job GitHub asked to hold back.
      expect(await deliver("pull_request", prPayload(pr), { id })).toBe(200);
      expect(await deliver("pull_request", prPayload(pr, "synchronize"))).toBe(202);
      await until("the review", () => reviewed(pr.sha), PATIENCE_MS);
      const calls = filesCalls(pr.number);
      expect(calls[1]!.timestamp - limited.timestamp).toBeGreaterThanOrEqual(asked * 1000 - 50);
      await until("the synchronize's review too", () => filesCalls(pr.number).length >= 3 && filesCalls(pr.number));
      await settle();
      expect(checkRuns(pr.sha, "HCP review")).toHaveLength(1); // the trace was updated into the review
      expect(reviews(pr.number)).toHaveLength(1);
      expect(comments(pr.number)).toHaveLength(1);
    });

    it("bounds a job's waits in all, not only each request's: a second wait past the horizon is a later retry, not a longer sleep", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      // Each wait fits the 3 s horizon alone; together they would not.
      gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 429, headers: { "retry-after": "2" }, body: { message: "" } });
      gh.inject({ method: "POST", path: /\/check-runs$/, status: 429, headers: { "retry-after": "2" }, body: { message: "" } });
      expect(await deliver("pull_request", prPayload(pr))).toBe(202);
      const trace = await until("the check run saying the review was not done", () => checkRuns(pr.sha, "HCP review").find((c) => c.output.title === NOT_DONE));
      expect(trace.output.summary).toContain("kept answering 429 with retry-after after 1 try and 2 s of waiting");
      const limited = gh.calls.find((c) => c.injected && c.method === "POST" && c.path.endsWith("/check-runs"))!;
      await until("the review", () => reviewed(pr.sha), PATIENCE_MS);
      // The job's retry comes no sooner than the check-run post's retry-after.
      const again = gh.calls.find((c) => c.timestamp > limited.timestamp && c.method === "PATCH" && c.path.includes("/check-runs/"))!;
      expect(again.timestamp - limited.timestamp).toBeGreaterThanOrEqual(1950);
      await settle();
      expect(checkRuns(pr.sha, "HCP review")).toHaveLength(1);
      expect(reviews(pr.number)).toHaveLength(1);
    });

    it("gives up when 5xx outlast the edge's horizon, says so, and the job's retry reviews", async () => {
      const pr = openPr({ [RECIPE_FILE]: BROKEN_RECIPE });
      // 1 s, then 2 s of backoff fill the 3 s horizon; the third 502 would need 4 s more.
      gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}/files$`), status: 502, times: 3 });
      expect(await deliver("pull_request", prPayload(pr))).toBe(202);
      const trace = await until("the check run saying the review was not done", () => checkRuns(pr.sha, "HCP review").find((c) => c.output.title === NOT_DONE));
      expect(trace.output.summary).toContain("kept answering 502 after 3 tries and 3 s of waiting");
      await until("the review", () => reviewed(pr.sha), PATIENCE_MS);
      expect(filesCalls(pr.number).map((c) => c.status)).toEqual([502, 502, 502, 200]);
      await settle();
      expect(checkRuns(pr.sha, "HCP review")).toHaveLength(1);
      expect(reviews(pr.number)).toHaveLength(1);
    });

    it("keeps a smoke run's Slack message when chat.update answers 429 with Retry-After: 1: it arrives, in order", async () => {
      const pr = openPr({ [RECIPE_FILE]: SMOKE_RECIPE });
      expect((await slashCommand(`smoke ${OWNER}/${REPO}#${pr.number}`, randomUUID())()).status).toBe(200);
      const sent = await until("the dispatch", () => dispatchesFor(pr.sha)[0]);
      const message = await until("the channel message", () => [...slack.messages.values()].find((m) => m.channel === "C0SMOKE" && m.text.includes(`#${pr.number}`)));
      const updates = () => slack.calls.filter((c) => c.method === "chat.update" && c.body.ts === message.ts);
      slack.inject({ method: "chat.update", status: 429, retryAfter: 1 });
      const job = { action: "in_progress", installation: { id: INSTALLATION }, repository: repository(), sender: { login: "github-actions[bot]", id: 41898282, type: "Bot" }, workflow_job: { id: 78, run_id: sent.runId, status: "in_progress", html_url: `${gh.url}/${OWNER}/${REPO}/actions/runs/${sent.runId}/job/78` } };
      expect(await deliver("workflow_job", job)).toBe(202);
      await until("Slack's 429", () => updates().find((c) => c.injected));
      // The run ends while the running state still waits out its Retry-After.
      await finishRun(pr.sha, trainingLog(PASSING_RUN_LOG));
      await until("the message to show the verdict", () => {
        const now = slack.messages.get(`${message.channel}:${message.ts}`);
        return now && /\*Status\*\\nfinished/.test(JSON.stringify(now.blocks)) && /PASS|pass/.test(now.text) ? now : undefined;
      });
      await settle();
      const [limited, ...rest] = updates();
      expect(limited).toMatchObject({ injected: true });
      expect(stateOf(limited!.body)).toBe(STATES.indexOf("running"));
      const delivered = rest.filter((c) => !c.injected);
      expect(delivered[0]!.at - limited!.at).toBeGreaterThanOrEqual(950);
      // Never an older state after a newer one; the last one is the verdict.
      const states = delivered.map((c) => stateOf(c.body));
      expect(states).toEqual([...states].sort((a, b) => a - b));
      expect(states.at(-1)).toBe(STATES.indexOf("finished"));
      expect(slack.messages.get(`${message.channel}:${message.ts}`)!.text).toMatch(/PASS|pass/);
      expect([...slack.messages.values()].filter((m) => m.text.includes(`#${pr.number}`))).toHaveLength(1);
    });

    it("ends a smoke run no GPU runner picked up within the repository's queue limit as timed_out, and cancels it", async () => {
      expect(checkRuns(unpicked.sha, "HCP smoke")).toMatchObject([{ status: "queued" }]);
      // Past the one-minute limit (and the sweep's own one-minute floor) since the dispatch.
      const wait = unpicked.at + 62_000 - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      // workerd: the cron trigger, fired by Miniflare; Deno: Deno.cron's next minute.
      await bot.scheduled();
      const check = await until("the smoke check run to time out", () => checkRuns(unpicked.sha, "HCP smoke").find((c) => c.status === "completed"), PATIENCE_MS);
      expect(check.conclusion).toBe("timed_out");
      expect(check.output.summary).toMatch(/No self-hosted runner with the labels `self-hosted, linux, gpu-4`/);
      expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/repos/${OWNER}/${QUEUE_REPO}/actions/runs/${unpicked.runId}/cancel`))).toBe(true);
      expect(gh.state.dispatches.filter((d) => d.inputs.sha === unpicked.sha)).toHaveLength(1);
    });
  });
}
