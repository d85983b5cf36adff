// The world of the `/hcp smoke` end-to-end suites (test/github/smoke*.e2e.test.ts): the real
// server on a SQLite data folder, a fake GitHub that validates every request against the
// OpenAPI description (dispatch inputs against the workflow file on the default branch, as init-workflow renders it), and
// helpers that deliver signed webhooks and read what the bot wrote. Each suite calls
// `useSmokeE2E()` once; `gh`, `bot` and `dataDir` are then live for its tests.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { startFakeGitHub, type FakeGitHub } from "./fake-github/index.ts";
import { appKeys, botSettings, instantClock, completeSmokeRun, deliverAndSettle, PASSING_RUN_LOG, SMOKE_RECIPE, smokeWorkflowFile, trainingLog } from "./bot-harness.ts";
import { PATIENCE_MS } from "./patience.ts";

export const SECRET = "smoke-secret";
export const OWNER = "acme";
export const REPO = "mb";
export const INSTALLATION = 9;
const { publicKey } = appKeys;

export const RECIPE = SMOKE_RECIPE;
export const RECIPE_FILE = "src/megatron/bridge/recipes/llama/llama3.py";
// Generous quotas: these tests leave many runs active; the quota refusals are tested in test/smoke/policy.test.ts.
export const CONFIG = "smoke:\n  quotas: {per_user_per_day: 1000, max_queued: 1000}\n";

/** A real signed probe log of a CP=4 [2, 2] run on 4 ranks (the default plan) with two training steps added. */
export const PASSING_LOG = trainingLog(PASSING_RUN_LOG);
/** A real NCCL log of a CP=2 [2, 1] run: HCP groups named by torch, but not what the plan asked for. */
export const MISMATCHED_LOG = trainingLog("a_nccl_cp2_hcp2x1.log");
/** A real flat-CP log: CP worked, but not hierarchically. */
export const FLAT_LOG = trainingLog("c_nccl_cp2_flat.log");

export let gh: FakeGitHub;
export let bot: RunningServer;
export let dataDir: string;
let clock = Date.now();
let prCounter = 100;

/** Moves the bot's clock (queue timeouts) forward. */
export function advanceClock(ms: number): void {
  clock += ms;
}

/** The next unused PR number of this suite. */
export function nextPrNumber(): number {
  return ++prCounter;
}

type ServerOptions = NonNullable<Parameters<typeof startServer>[1]>;

/** The smoke tuning of these suites (the suite's clock, a short run lookup), with `extra` on top. */
export function smokeTuning(extra: NonNullable<ServerOptions["smoke"]> = {}): NonNullable<ServerOptions["smoke"]> {
  return { now: () => new Date(clock), runLookup: { attempts: 2, delayMs: 10 }, ...extra };
}

// A failed job retries after a second (HCP_JOB_RETRY_SECONDS), not the production ten.
export const settings = () => botSettings({ githubUrl: gh.url, appId: 77, secret: SECRET, dataDir, extra: { HCP_JOB_RETRY_SECONDS: "1" } });

export async function waitFor(check: () => boolean, what: string, ms = PATIENCE_MS): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The server on the shared data folder; `options` replace the test defaults. */
function start(options: ServerOptions = {}): Promise<RunningServer> {
  return startServer(settings(), { sweepIntervalMs: 0, clock: instantClock, smoke: smokeTuning(), ...options });
}

/** Stops the server and starts a new one on the same data folder; the pause lets the
 * client notice the old keep-alive sockets closed before the new server reuses the port. */
export async function restart(options: ServerOptions = {}): Promise<void> {
  await bot.stop();
  await new Promise((r) => setTimeout(r, 50));
  bot = await start(options);
}

export const deliver = (event: string, payload: object, id?: string) => deliverAndSettle(bot, SECRET, event, payload, id);

export const repository = () => ({ id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main" });

/** GitHub's second-precision time; by default a moment after the PR's last push (the maintainer read that head). */
const githubTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

export function commentPayload(pr: number, body: string, login: string, opts: { action?: string; commentId?: number; type?: string; createdAt?: Date } = {}) {
  return {
    action: opts.action ?? "created",
    installation: { id: INSTALLATION },
    repository: repository(),
    sender: { login, id: 50, type: opts.type ?? "User" },
    issue: { number: pr, pull_request: { url: `${gh.apiUrl}/repos/${OWNER}/${REPO}/pulls/${pr}` }, user: { login: "author" } },
    comment: { id: opts.commentId ?? Math.floor(Math.random() * 1e9), body, user: { login, id: 50, type: opts.type ?? "User" }, created_at: githubTime(opts.createdAt ?? new Date(Date.now() + 1500)) },
  };
}

/** A workflow_run event; by default for a run dispatched on the default branch, as the bot's are. */
export function runPayload(
  action: string,
  run: { id: number; status: string; conclusion: string | null; display_title: string; event?: string; head_branch?: string; path?: string },
  repo: ReturnType<typeof repository> = repository(),
) {
  return {
    action,
    installation: { id: INSTALLATION },
    repository: repo,
    sender: { login: "github-actions[bot]", id: 41898282, type: "Bot" },
    workflow_run: {
      event: "workflow_dispatch",
      head_branch: "main",
      path: ".github/workflows/hcp-smoke.yml",
      ...run,
      name: "hcp-smoke",
      html_url: `${gh.url}/${repo.owner.login}/${repo.name}/actions/runs/${run.id}`,
    },
  };
}

/** `/hcp smoke` (or `text`) on a new PR by a writer (or `login`): the PR and what was dispatched. */
export async function smokeOn(o: { pr?: { number: number; sha: string }; login?: string; text?: string } = {}) {
  const pr = o.pr ?? openPr();
  const before = dispatches().length;
  await deliver("issue_comment", commentPayload(pr.number, o.text ?? "/hcp smoke", o.login ?? "maint"));
  const sent = dispatches()[before]!;
  return { pr, before, sent, id: (sent?.inputs as Record<string, string> | undefined)?.request_id ?? "" };
}

/** The run uploads `files` as its artifact, its job log carries the runner's report, and it completes; the bot hears of it. */
export async function finishRun(sent: { runId: number }, id: string, files: Record<string, string>, o: Parameters<typeof completeSmokeRun>[3] = {}) {
  await completeSmokeRun(gh, { runId: sent.runId, requestId: id }, files, o);
  const conclusion = o.conclusion ?? "success";
  await deliver("workflow_run", runPayload("completed", { id: sent.runId, status: "completed", conclusion, display_title: `hcp-smoke ${id}` }));
}

/** A PR whose author (default: a writer) and head SHA are known to the fake. */
export function openPr(opts: { author?: string; fork?: string } = {}): { number: number; sha: string } {
  const number = nextPrNumber();
  const sha = number.toString(16).padStart(40, "e");
  gh.addCommit({ owner: OWNER, repo: REPO, branch: `pr-${number}`, base: "main", sha, files: { [RECIPE_FILE]: RECIPE } });
  gh.addPullRequest({
    owner: OWNER,
    repo: REPO,
    number,
    user: opts.author ?? "author",
    head: { sha, ref: `pr-${number}` },
    files: [{ filename: RECIPE_FILE, contents: RECIPE, status: "modified" }],
    ...(opts.fork ? { headRepo: opts.fork } : {}),
  });
  return { number, sha };
}

export function dispatches() {
  return gh.state.dispatches;
}

export async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${gh.apiUrl}${path}`, { headers: { authorization: `token ${gh.installationToken(INSTALLATION)}` } });
  return (await res.json()) as T;
}

export async function comments(pr: number) {
  return api<Array<{ id: number; body: string; user: { login: string } }>>(`/repos/${OWNER}/${REPO}/issues/${pr}/comments?per_page=100`);
}

export async function smokeCheck(sha: string) {
  const data = await api<{ check_runs: Array<{ id: number; status: string; conclusion: string | null; output: { title: string; summary: string } }> }>(
    `/repos/${OWNER}/${REPO}/commits/${sha}/check-runs?check_name=HCP%20smoke`,
  );
  return data.check_runs[0];
}


/** Registers the suite's hooks: the fake GitHub and the bot before all tests, no fake-GitHub violation after each. */
export function useSmokeE2E(): void {
  beforeAll(async () => {
    gh = await startFakeGitHub({ appId: 77, appSlug: "hcp-bot", appPublicKey: publicKey });
    gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
    gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: RECIPE, ".github/hcp-bot.yml": CONFIG } } });
    gh.addWorkflow({ owner: OWNER, repo: REPO, path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke", content: smokeWorkflowFile() });
    gh.setPermission("maint", "write");
    gh.setPermission("admin1", "admin");
    gh.setPermission("reader", "read");
    gh.setPermission("triager", "triage");
    gh.setPermission("team-maintainer", "maintain");
    gh.setPermission("author", "write");
    dataDir = mkdtempSync(join(tmpdir(), "hcp-smoke-data-"));
    bot = await start();
  });

  afterAll(async () => {
    await bot?.stop();
    await gh?.close();
  });

  afterEach(() => {
    expect(gh.violations).toEqual([]);
  });
}
