// `/hcp smoke` end to end: signed issue_comment webhooks to the real server, a fake GitHub
// that validates every request against the OpenAPI description (dispatch inputs against
// the real workflow template), workflow_run webhooks carrying real GPU logs back, and the
// SQLite store surviving a restart.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/node/server.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { inspectGfm, visibleText } from "../support/gfm.ts";
import { appKeys, botSettings, instantClock, completeSmokeRun, deliverAndSettle, fixtureLog, PASSING_RUN_LOG, runnerFacts, runnerJobLog, SMOKE_RECIPE as RECIPE, trainingLog } from "../support/bot-harness.ts";

const root = join(import.meta.dirname, "..", "..");
const SECRET = "smoke-secret";
const OWNER = "acme";
const REPO = "mb";
const INSTALLATION = 9;
const { publicKey } = appKeys;

const RECIPE_FILE = "src/megatron/bridge/recipes/llama/llama3.py";
// Generous quotas: these tests leave many runs active; the quota refusals are tested in test/smoke/policy.test.ts.
const CONFIG = "smoke:\n  quotas: {per_user_per_day: 1000, max_queued: 1000}\n";


/** A real signed probe log of a CP=4 [2, 2] run on 4 ranks (the default plan) with two training steps added. */
const PASSING_LOG = trainingLog(PASSING_RUN_LOG);
/** A real NCCL log of a CP=2 [2, 1] run: HCP groups named by torch, but not what the plan asked for. */
const MISMATCHED_LOG = trainingLog("a_nccl_cp2_hcp2x1.log");
/** A real flat-CP log: CP worked, but not hierarchically. */
const FLAT_LOG = trainingLog("c_nccl_cp2_flat.log");

let gh: FakeGitHub;
let bot: RunningServer;
let dataDir: string;
let clock = Date.now();
let prCounter = 100;

const settings = () => botSettings({ githubUrl: gh.url, appId: 77, secret: SECRET, dataDir });

/** The server on the shared data folder; `options` replace the test defaults. */
function start(options: Parameters<typeof startServer>[1] = {}): Promise<RunningServer> {
  return startServer(settings(), { sweepIntervalMs: 0, clock: instantClock, smoke: { now: () => new Date(clock), runLookup: { attempts: 2, delayMs: 10 } }, ...options });
}

/** Stops the server and starts a new one on the same data folder; the pause lets the
 * client notice the old keep-alive sockets closed before the new server reuses the port. */
async function restart(options: Parameters<typeof startServer>[1] = {}): Promise<void> {
  await bot.stop();
  await new Promise((r) => setTimeout(r, 50));
  bot = await start(options);
}

const deliver = (event: string, payload: object, id?: string) => deliverAndSettle(bot, SECRET, event, payload, id);

const repository = () => ({ id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main" });

/** GitHub's second-precision time; by default a moment after the PR's last push (the maintainer read that head). */
const githubTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

function commentPayload(pr: number, body: string, login: string, opts: { action?: string; commentId?: number; type?: string; createdAt?: Date } = {}) {
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
function runPayload(
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
async function smokeOn(o: { pr?: { number: number; sha: string }; login?: string; text?: string } = {}) {
  const pr = o.pr ?? openPr();
  const before = dispatches().length;
  await deliver("issue_comment", commentPayload(pr.number, o.text ?? "/hcp smoke", o.login ?? "maint"));
  const sent = dispatches()[before]!;
  return { pr, before, sent, id: (sent?.inputs as Record<string, string> | undefined)?.request_id ?? "" };
}

/** The run uploads `files` as its artifact, its job log carries the runner's report, and it completes; the bot hears of it. */
async function finishRun(sent: { runId: number }, id: string, files: Record<string, string>, o: Parameters<typeof completeSmokeRun>[3] = {}) {
  await completeSmokeRun(gh, { runId: sent.runId, requestId: id }, files, o);
  const conclusion = o.conclusion ?? "success";
  await deliver("workflow_run", runPayload("completed", { id: sent.runId, status: "completed", conclusion, display_title: `hcp-smoke ${id}` }));
}

/** A PR whose author (default: a writer) and head SHA are known to the fake. */
function openPr(opts: { author?: string; fork?: string } = {}): { number: number; sha: string } {
  const number = ++prCounter;
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

function dispatches() {
  return gh.state.dispatches;
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${gh.apiUrl}${path}`, { headers: { authorization: `token ${gh.installationToken(INSTALLATION)}` } });
  return (await res.json()) as T;
}

async function comments(pr: number) {
  return api<Array<{ id: number; body: string; user: { login: string } }>>(`/repos/${OWNER}/${REPO}/issues/${pr}/comments?per_page=100`);
}

async function smokeCheck(sha: string) {
  const data = await api<{ check_runs: Array<{ id: number; status: string; conclusion: string | null; output: { title: string; summary: string } }> }>(
    `/repos/${OWNER}/${REPO}/commits/${sha}/check-runs?check_name=HCP%20smoke`,
  );
  return data.check_runs[0];
}

function workflowTemplate(): { "run-name": string; on: { workflow_dispatch: { inputs: Record<string, { required?: boolean }> } }; jobs: { smoke: { name: string } } } {
  return parse(readFileSync(join(root, "templates", "hcp-smoke.yml"), "utf8")) as ReturnType<typeof workflowTemplate>;
}

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 77, appSlug: "hcp-bot", appPublicKey: publicKey });
  gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
  gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: RECIPE, ".github/hcp-bot.yml": CONFIG } } });
  const template = workflowTemplate();
  gh.addWorkflow({ owner: OWNER, repo: REPO, path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke", inputs: template.on.workflow_dispatch.inputs, runName: template["run-name"], jobName: template.jobs.smoke.name });
  gh.setPermission("maint", "write");
  gh.setPermission("admin1", "admin");
  gh.setPermission("reader", "read");
  gh.setPermission("triager", "triage");
  gh.setPermission("team-maintainer", "maintain");
  gh.setPermission("author", "write");
  dataDir = mkdtempSync(join(tmpdir(), "hcp-smoke-data-"));
  bot = await start();
}, 60_000);

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
});

describe("/hcp smoke on a pull request", () => {
  it("dispatches the pinned SHA, follows the run, and reports a pass with HCP evidence", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const commentId = 5001;
    expect(await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint", { commentId }))).toBe(200);

    const sent = dispatches().slice(before);
    expect(sent).toHaveLength(1);
    const inputs = sent[0]!.inputs as Record<string, string>;
    expect(sent[0]!.ref).toBe("main");
    expect(inputs.sha).toBe(pr.sha);
    expect(inputs.recipe).toBe("llama32_1b_pretrain_config");
    expect(JSON.parse(inputs.overrides!)).toEqual(expect.arrayContaining(["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"]));
    expect(inputs.expect_hcp).toBe("true");

    const check = (await smokeCheck(pr.sha))!;
    expect(check.status).toBe("queued");
    expect(check.output.summary).toContain(pr.sha);
    const reply = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!;
    expect(reply.body).toMatch(/queued for a GPU runner/);
    expect(reply.body).toContain("/actions/runs/");
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/issues/comments/${commentId}/reactions`))).toBe(true);

    const runId = sent[0]!.runId;
    const title = `hcp-smoke ${inputs.request_id} (PR #${pr.number}, llama32_1b_pretrain_config)`;
    gh.updateWorkflowRun(runId, { status: "in_progress" });
    await deliver("workflow_run", runPayload("in_progress", { id: runId, status: "in_progress", conclusion: null, display_title: title }));
    expect((await smokeCheck(pr.sha))!.status).toBe("in_progress");
    expect((await comments(pr.number)).find((c) => c.id === reply.id)!.body).toMatch(/in progress/);

    await completeSmokeRun(gh, { runId, requestId: inputs.request_id! }, { "smoke.log": PASSING_LOG, "verdict.json": runnerFacts({ status: "fail" }) });
    await deliver("workflow_run", runPayload("completed", { id: runId, status: "completed", conclusion: "success", display_title: title }));
    const done = (await smokeCheck(pr.sha))!;
    expect(done.conclusion).toBe("success"); // recomputed from the log; the runner's "fail" hint is ignored
    const story = (await comments(pr.number)).find((c) => c.id === reply.id)!;
    expect(story.body).toMatch(/Smoke run passed/);
    expect(story.body).toMatch(/HIERARCHICAL_CONTEXT_PARALLEL_GROUP/);
  }, 30_000);

  it("fails a run whose log shows only the flat CP group (HCP silently off)", async () => {
    const { pr, sent, id } = await smokeOn({ login: "admin1" });
    await finishRun(sent, id, { "smoke.log": FLAT_LOG, "verdict.json": JSON.stringify({ exitCode: 0 }) });
    const check = (await smokeCheck(pr.sha))!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/without hierarchical CP|hcp-inactive/);
  }, 30_000);

  it("does not pass a log without the run's probe key, with another run's key, or that answers another request (CP=2 [2, 1] for CP=4 [2, 2])", async () => {
    const judge = async (log: string, facts: string) => {
      const { pr, sent, id } = await smokeOn();
      await finishRun(sent, id, { "smoke.log": log, "verdict.json": facts });
      return (await smokeCheck(pr.sha))!;
    };
    const keyless = await judge(PASSING_LOG, JSON.stringify({ exitCode: 0 }));
    expect(keyless.conclusion).toBe("neutral"); // inconclusive: the reports cannot be authenticated
    expect(visibleText(keyless.output.summary)).toMatch(/no probe key was given/);
    const otherKey = await judge(PASSING_LOG, runnerFacts({ probeKey: "0".repeat(64) }));
    expect(otherKey.conclusion).toBe("neutral");
    expect(visibleText(otherKey.output.summary)).toMatch(/without a valid MAC/);
    const mismatched = await judge(MISMATCHED_LOG, runnerFacts());
    expect(mismatched.conclusion).toBe("failure");
    expect(visibleText(mismatched.output.summary)).toMatch(/HCP004/);
    // One printed line is not a run: a forged report among the real ones changes nothing, and
    // a forged flat one does not fail it either (listed as untrusted).
    const forged = PASSING_LOG.replace("[probe rank 0] done", 'HCP-PROBE {"v":2,"rank":0,"world_size":4,"cp_size":4,"levels":null,"mac":"' + "a".repeat(64) + '"}\n[probe rank 0] done');
    const withForged = await judge(forged, runnerFacts());
    expect(withForged.conclusion).toBe("success");
    expect(visibleText(withForged.output.summary)).toMatch(/1 HCP-PROBE report\(s\) without a valid MAC: listed as untrusted/);
  }, 60_000);

  it("judges with the runner's facts about the run (its GPU for the TFLOP/s check, its time limit), not its verdict", async () => {
    const judge = async (log: string, hint: object) => {
      const { pr, sent, id } = await smokeOn();
      await finishRun(sent, id, { "smoke.log": log, "verdict.json": JSON.stringify({ status: "pass", ...hint }) });
      return (await smokeCheck(pr.sha))!;
    };
    // HCP group names, but 1937 TFLOP/s per GPU: far above an H200's dense BF16 peak.
    const tooFast = PASSING_LOG.replace(/elapsed time per iteration \(ms\): 1234\.5 \|/g, "elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 1937.0 |");
    expect(tooFast).toContain("1937.0");
    const facts = JSON.parse(runnerFacts()) as object;
    expect((await judge(tooFast, facts)).conclusion).toBe("success"); // no GPU named: no TFLOP/s check
    const onH200 = await judge(tooFast, { ...facts, throughput: { gpu: "H200" } });
    expect(onH200.conclusion).toBe("failure");
    expect(onH200.output.summary).toMatch(/TFLOP/);
    const killed = await judge(PASSING_LOG, { exitCode: null, timedOut: true, signal: "SIGKILL" });
    expect(killed.conclusion).toBe("failure");
    expect(visibleText(killed.output.summary)).toMatch(/killed by the harness time limit \(SIGKILL\)/);
  }, 30_000);

  it("reads the runner's own smoke.log and verdict.json from the artifact, not look-alikes, and not a huge verdict.json", async () => {
    const judge = async (files: Record<string, string>) => {
      const { pr, sent, id } = await smokeOn();
      await finishRun(sent, id, files);
      return (await smokeCheck(pr.sha))!;
    };
    const hint = runnerFacts();
    // The code under test can write files next to smoke.log: "a.log" comes first in the zip.
    expect((await judge({ "a.log": PASSING_LOG, "smoke.log": FLAT_LOG, "verdict.json": hint })).conclusion).toBe("failure");
    expect((await judge({ "smoke.log": PASSING_LOG, "verdict.json": hint })).conclusion).toBe("success");
    // Over 256 KB is not a verdict.json the runner wrote: ignored, so the exit status is unknown.
    const huge = await judge({ "smoke.log": PASSING_LOG, "verdict.json": " ".repeat(300 * 1024) + hint });
    expect(huge.conclusion).not.toBe("success");
  }, 30_000);

  it("does not download a log artifact over the size limit, and says why (inconclusive, never a pass)", async () => {
    await restart({ smoke: { now: () => new Date(clock), runLookup: { attempts: 2, delayMs: 10 }, maxArtifactBytes: 1024 } });
    try {
      const { pr, sent, id } = await smokeOn();
      await completeSmokeRun(gh, { runId: sent.runId, requestId: id }, { "smoke.log": PASSING_LOG });
      const mark = gh.calls.length;
      await deliver("workflow_run", runPayload("completed", { id: sent.runId, status: "completed", conclusion: "success", display_title: `hcp-smoke ${id}` }));
      expect(gh.calls.slice(mark).some((c) => /\/actions\/artifacts\/\d+\/zip$/.test(c.path))).toBe(false);
      const check = (await smokeCheck(pr.sha))!;
      expect(check.conclusion).not.toBe("success");
      expect(check.output.summary).toMatch(/over the 0\.0 MB the bot reads/);
    } finally {
      await restart();
    }
  }, 30_000);

  it("reads the job log when no artifact was uploaded", async () => {
    const { pr, before, sent, id } = await smokeOn();
    // As GitHub serves a job log: a timestamp before every line; the runner's own report last,
    // quoting a line the log never had (the bot judges the log, not the report).
    const report = ["HCP smoke verdict: PASS (exit 0)", "  evidence: [I1130 ProcessGroupNCCL.cpp:1068] [PG ID 5 PG GUID 10(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 0]"];
    const jobLog = `${await runnerJobLog({ "smoke.log": fixtureLog("m_oom_default.log") })}\n${report.join("\n")}`;
    await finishRun(sent, id, {}, { conclusion: "failure", artifact: false, jobLog });
    const check = (await smokeCheck(pr.sha))!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/out of memory/i);
    expect(check.output.summary).toMatch(/job log/);
    expect(visibleText(check.output.summary)).toMatch(/root cause rank 1 \(local_rank 1\), exitcode 1/);
    expect(check.output.summary).not.toMatch(/HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0/);
  }, 30_000);
});

describe("a failed or forged run never turns the check green", () => {
  /** A log that passes on its own: HCP groups, two steps, the end-of-training marker. */
  const DONE_LOG = `${PASSING_LOG}[after training is done] datetime: 2026-11-30 04:42:30 \n`;
  const hint = runnerFacts();
  const conclusionOf = async (pr: { sha: string }) => (await smokeCheck(pr.sha))!;

  it("a failed job is never green: with an artifact whose log would pass, with no artifact (job-log fallback), and with an artifact lacking verdict.json", async () => {
    const complete = await smokeOn();
    await finishRun(complete.sent, complete.id, { "smoke.log": DONE_LOG, "verdict.json": hint }, { conclusion: "failure" });
    const c = await conclusionOf(complete.pr);
    expect(c.conclusion).toBe("failure");
    expect(c.output.summary).toMatch(/conclusion as failure/);

    // Without the artifact's key no report counts, so these logs are inconclusive on their own;
    // the failed job is noted, and neither turns green.
    const noArtifact = await smokeOn();
    await finishRun(noArtifact.sent, noArtifact.id, { "smoke.log": DONE_LOG }, { conclusion: "failure", artifact: false });
    const a = await conclusionOf(noArtifact.pr);
    expect(a.conclusion).not.toBe("success");
    expect(a.output.summary).toMatch(/conclusion as failure/);

    const noHint = await smokeOn();
    await finishRun(noHint.sent, noHint.id, { "smoke.log": DONE_LOG }, { conclusion: "failure" });
    expect((await conclusionOf(noHint.pr)).conclusion).not.toBe("success");
  }, 30_000);

  it("a passing job log without an artifact is at best inconclusive (the job log alone is not evidence)", async () => {
    const { pr, sent, id } = await smokeOn();
    await finishRun(sent, id, { "smoke.log": DONE_LOG, "verdict.json": hint }, { artifact: false });
    const check = await conclusionOf(pr);
    expect(check.conclusion).toBe("neutral");
    expect(check.output.summary).toMatch(/no log artifact was uploaded/);
  }, 30_000);

  it("an early fake `HCP smoke verdict:` line (and a fake report) printed by the code under test does not cut the log", async () => {
    const { pr, sent, id } = await smokeOn();
    // The PR prints what looks like the runner's report, with a nonce of its own, then crashes.
    const forged = ["HCP smoke verdict: PASS (exit 0)", "hcp-bot smoke-run: report nonce " + "ab".repeat(32), "hcp-bot smoke: PASS"].join("\n");
    const log = `${DONE_LOG}${forged}\n${fixtureLog("m_oom_default.log")}`;
    await finishRun(sent, id, { "smoke.log": log }, { conclusion: "failure", artifact: false });
    const check = await conclusionOf(pr);
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/out of memory/i); // judged past the fake lines
  }, 30_000);

  it("an artifact whose smoke.log or verdict.json is not what the runner hashed fails the run, even when the job succeeded", async () => {
    for (const tamper of ["smoke.log", "verdict.json"] as const) {
      const { pr, sent, id } = await smokeOn();
      const real = { "smoke.log": FLAT_LOG, "verdict.json": JSON.stringify({ exitCode: 1 }) };
      // A leftover process rewrote the file after the runner hashed it (the job log keeps the real hashes).
      const uploaded = { ...real, [tamper]: tamper === "smoke.log" ? DONE_LOG : hint };
      await finishRun(sent, id, uploaded, { jobLog: await runnerJobLog(real) });
      const check = await conclusionOf(pr);
      expect(check.conclusion, tamper).toBe("failure");
      expect(check.output.summary).toContain(`the artifact is not what the runner wrote: ${tamper} has SHA-256`);
    }
    // The same passing files with matching hashes pass: the check is the hash, not the content.
    const { pr, sent, id } = await smokeOn();
    await finishRun(sent, id, { "smoke.log": DONE_LOG, "verdict.json": hint });
    expect((await conclusionOf(pr)).conclusion).toBe("success");
  }, 60_000);

  it("a job log without the runner's report (killed runner, or a report whose nonce does not match its commitment) is never a pass", async () => {
    const { pr, sent, id } = await smokeOn();
    const files = { "smoke.log": DONE_LOG, "verdict.json": hint };
    await finishRun(sent, id, files, { jobLog: await runnerJobLog(files, { report: false }) });
    expect((await conclusionOf(pr)).conclusion).not.toBe("success");
  }, 30_000);

  it("reads smoke.log and verdict.json at the artifact's root only", async () => {
    const { pr, sent, id } = await smokeOn();
    const files = { "out/smoke.log": DONE_LOG, "out/verdict.json": hint };
    await finishRun(sent, id, files, { jobLog: await runnerJobLog({ "smoke.log": DONE_LOG, "verdict.json": hint }) });
    const check = await conclusionOf(pr);
    expect(check.conclusion).not.toBe("success");
    expect(check.output.summary).toMatch(/holds no smoke\.log at its root/);
  }, 30_000);
});

describe("text from the log never becomes markup", () => {
  it("a traceback line with a link, an image pixel, raw HTML and a team mention is quoted in the PR comment and the check run", async () => {
    const { pr, sent, id } = await smokeOn();
    const payload = "see [docs](https://evil.example) ![](https://evil.example/p.png) <img src=https://evil.example/q.png> <!-- hcp-bot:summary --> cc @NVIDIA-NeMo/maintainers";
    const log = `${fixtureLog("m_oom_default.log")}[rank0]: Traceback (most recent call last):\n[rank0]:   File "train.py", line 3, in <module>\n[rank0]: RuntimeError: ${payload}\n`;
    await finishRun(sent, id, { "smoke.log": log, "verdict.json": JSON.stringify({ exitCode: 1 }) }, { conclusion: "failure" });
    const check = (await smokeCheck(pr.sha))!;
    const story = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!;
    expect(visibleText(story.body)).toContain("cc @NVIDIA-NeMo/maintainers"); // shown as text
    for (const markdown of [check.output.summary, story.body]) {
      const seen = inspectGfm(markdown);
      expect(seen).toMatchObject({ images: 0, foreignElements: [], comments: 1 }); // the bot's own marker only
      expect(seen.hrefs.filter((h) => !h.startsWith(gh.url))).toEqual([]); // its own links to the run only
      expect(seen.mentions.filter((m) => m !== "maint")).toEqual([]);
    }
  }, 30_000);
});

describe("which workflow run is the smoke run", () => {
  const artifactDownloads = (from: number) => gh.calls.slice(from).filter((c) => /\/actions\/artifacts\/\d+\/zip$/.test(c.path)).length;

  it("a run that only claims the request id in its title cannot complete it, bound or not", async () => {
    // The dispatch returns no run id and the lookup is off: the request waits for its run
    // unbound, the only time a title can bind a run.
    gh.state.dispatchReturnsRunDetails = false;
    await restart({ smoke: { now: () => new Date(clock), runLookup: { attempts: 0, delayMs: 0 } } });
    try {
      const { pr, sent, id } = await smokeOn();
      const other = gh.addWorkflow({ owner: OWNER, repo: REPO, path: ".github/workflows/other.yml", name: "other" });
      // Each impostor's artifact holds a log that would pass.
      const impostor = (o: { event: string; headBranch: string; workflowId?: number }) => {
        const run = gh.addWorkflowRun({ owner: OWNER, repo: REPO, workflowId: o.workflowId ?? sent.workflowId, event: o.event, headBranch: o.headBranch, headSha: pr.sha, displayTitle: `hcp-smoke ${id}` });
        gh.addArtifact({ runId: run.id, name: `hcp-smoke-${id}`, files: { "smoke.log": PASSING_LOG, "verdict.json": JSON.stringify({ exitCode: 0 }) } });
        return run.id;
      };
      const done = (runId: number, extra: { event?: string; head_branch?: string; path?: string } = {}, repo = repository()) =>
        deliver("workflow_run", runPayload("completed", { id: runId, status: "completed", conclusion: "success", display_title: `hcp-smoke ${id}`, ...extra }, repo));
      const mark = gh.calls.length;
      // Anybody can title a PR "hcp-smoke <id>"; its CI run carries that title.
      await done(impostor({ event: "pull_request", headBranch: "pr-evil" }), { event: "pull_request", head_branch: "pr-evil" });
      // Another workflow on the default branch with a run-name of its choosing.
      await done(impostor({ event: "workflow_dispatch", headBranch: "main", workflowId: other.id }), { path: ".github/workflows/other.yml" });
      // The smoke workflow dispatched from another branch (its file may have been changed there).
      await done(impostor({ event: "workflow_dispatch", headBranch: "feature" }), { head_branch: "feature" });
      // A repository of another installation whose run names this request.
      const foreign = { ...repository(), id: 99, name: "elsewhere", full_name: `${OWNER}/elsewhere` };
      await done(sent.runId + 5000, {}, foreign);
      expect((await smokeCheck(pr.sha))!.status).toBe("queued");
      expect(artifactDownloads(mark)).toBe(0);

      // The real run binds the request; after that, a second run of the smoke workflow titled
      // like it cannot take it over.
      gh.updateWorkflowRun(sent.runId, { status: "in_progress" });
      await deliver("workflow_run", runPayload("in_progress", { id: sent.runId, status: "in_progress", conclusion: null, display_title: `hcp-smoke ${id}` }));
      expect((await smokeCheck(pr.sha))!.status).toBe("in_progress");
      await done(impostor({ event: "workflow_dispatch", headBranch: "main" }));
      expect((await smokeCheck(pr.sha))!.status).toBe("in_progress");
      await completeSmokeRun(gh, { runId: sent.runId, requestId: id }, { "smoke.log": FLAT_LOG, "verdict.json": JSON.stringify({ exitCode: 0 }) });
      await done(sent.runId);
      expect((await smokeCheck(pr.sha))!.conclusion).toBe("failure"); // its own (flat) log, not an impostor's
    } finally {
      gh.state.dispatchReturnsRunDetails = true;
      await restart();
    }
  }, 30_000);

  it("a title binds only a run the app started, from the dispatched commit, whose job carries the request's id and SHA", async () => {
    gh.state.dispatchReturnsRunDetails = false;
    await restart({ smoke: { now: () => new Date(clock), runLookup: { attempts: 0, delayMs: 0 } } });
    try {
      const { pr, sent, id } = await smokeOn();
      const main = gh.state.workflowRuns.get(sent.runId)!.headSha;
      const title = `hcp-smoke ${id} (PR #${pr.number}, llama32_1b_pretrain_config)`;
      const impostor = (o: { actor?: string; headSha?: string; jobName?: string }) => {
        const run = gh.addWorkflowRun({
          owner: OWNER, repo: REPO, workflowId: sent.workflowId, event: "workflow_dispatch", headBranch: "main", headSha: o.headSha ?? main,
          displayTitle: title, actor: o.actor, jobName: o.jobName ?? `hcp smoke ${id} ${pr.sha}`,
        });
        gh.addArtifact({ runId: run.id, name: `hcp-smoke-${id}`, files: { "smoke.log": PASSING_LOG, "verdict.json": JSON.stringify({ exitCode: 0 }) } });
        return run.id;
      };
      const done = (runId: number) => deliver("workflow_run", runPayload("completed", { id: runId, status: "completed", conclusion: "success", display_title: title }));
      // A writer dispatches the smoke workflow by hand with this request's inputs.
      await done(impostor({ actor: "maint" }));
      // The app's own run of another commit of the workflow file, and one for another request's inputs.
      await done(impostor({ headSha: "f".repeat(40) }));
      await done(impostor({ jobName: `hcp smoke ${id} ${"d".repeat(40)}` }));
      expect((await smokeCheck(pr.sha))!.status).toBe("queued");
      // The real run binds.
      await finishRun(sent, id, { "smoke.log": FLAT_LOG, "verdict.json": JSON.stringify({ exitCode: 0 }) });
      expect((await smokeCheck(pr.sha))!.conclusion).toBe("failure"); // its own (flat) log
    } finally {
      gh.state.dispatchReturnsRunDetails = true;
      await restart();
    }
  }, 30_000);

  it("without run details from the dispatch (older GitHub Enterprise), finds the run by its run-name, or binds it when it reports", async () => {
    gh.state.dispatchReturnsRunDetails = false;
    try {
      for (const lookupFails of [false, true]) {
        // When the lookup fails (the first attempt and the bot's 3 retries), the dispatch still
        // went through: the request stays dispatched and the run binds by its run-name.
        if (lookupFails) gh.inject({ method: "GET", path: /\/actions\/workflows\/[^/]+\/runs$/, status: 500, times: 13 });
        const { pr, before, sent, id } = await smokeOn();
        expect(gh.pendingInjections()).toEqual([]);
        expect(dispatches().length - before).toBe(1);
        expect((await smokeCheck(pr.sha))!.status).toBe("queued"); // not "could not start"
        const reply = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!;
        expect(reply.body.includes(`/actions/runs/${sent.runId}`)).toBe(!lookupFails);
        await finishRun(sent, id, { "smoke.log": PASSING_LOG, "verdict.json": runnerFacts() });
        expect((await smokeCheck(pr.sha))!.conclusion).toBe("success");
      }
    } finally {
      gh.state.dispatchReturnsRunDetails = true;
    }
  }, 30_000);

  it("a run cancelled before it could be found is bound by its title (ours only) and cancelled when it shows up", async () => {
    gh.state.dispatchReturnsRunDetails = false;
    await restart({ smoke: { now: () => new Date(clock), runLookup: { attempts: 0, delayMs: 0 } } });
    try {
      const { pr, before, sent, id } = await smokeOn();
      await deliver("issue_comment", commentPayload(pr.number, "/hcp cancel", "maint"));
      expect((await smokeCheck(pr.sha))!.conclusion).toBe("cancelled");
      const cancels = () => gh.calls.filter((c) => c.method === "POST" && /\/actions\/runs\/\d+\/cancel$/.test(c.path)).map((c) => c.path);
      expect(cancels().some((p) => p.endsWith(`/${sent.runId}/cancel`))).toBe(false); // the bot did not know the run yet
      // A PR's CI run titled with the id is not ours: left alone.
      await deliver("workflow_run", runPayload("requested", { id: sent.runId + 3000, status: "queued", conclusion: null, display_title: `hcp-smoke ${id}`, event: "pull_request", head_branch: "pr-x" }));
      expect(cancels().some((p) => p.endsWith(`/${sent.runId + 3000}/cancel`))).toBe(false);
      // The real one shows up: cancelled, so no GPU time is spent on a cancelled request.
      await deliver("workflow_run", runPayload("requested", { id: sent.runId, status: "queued", conclusion: null, display_title: `hcp-smoke ${id} (PR #${pr.number}, llama32_1b_pretrain_config)` }));
      expect(cancels().some((p) => p.endsWith(`/${sent.runId}/cancel`))).toBe(true);
    } finally {
      gh.state.dispatchReturnsRunDetails = true;
      await restart();
    }
  }, 30_000);
});

describe("who may spend GPU time", () => {
  it.each([
    ["reader", false],
    ["triager", false],
    ["maint", true],
    ["team-maintainer", true],
    ["admin1", true],
  ])("%s -> dispatched %s", async (login, allowed) => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", login));
    expect(dispatches().length - before).toBe(allowed ? 1 : 0);
    if (!allowed) {
      const reply = (await comments(pr.number)).at(-1)!;
      expect(reply.body).toMatch(new RegExp(`@${login} no smoke run: .*needs write access`));
    }
  }, 30_000);

  it("refuses when GitHub cannot say what the commenter may do (fails closed)", async () => {
    const pr = openPr();
    const before = dispatches().length;
    gh.inject({ method: "GET", path: /\/collaborators\/maint\/permission$/, status: 502, times: 13, body: { message: "Bad Gateway" } });
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    expect(dispatches().length).toBe(before);
    // The reason names the person without pinging them again (a zero-width space follows the @).
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/could not read @\u200bmaint's permission/);
  }, 30_000);

  it("ignores bots, edited comments and commands inside code blocks", async () => {
    const pr = openPr();
    const mark = gh.calls.length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "renovate[bot]", { type: "Bot" }));
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint", { action: "edited" }));
    await deliver("issue_comment", commentPayload(pr.number, "Try this:\n```\n/hcp smoke\n```\n> /hcp smoke", "maint"));
    expect(gh.calls.slice(mark).filter((c) => c.method !== "GET" && !c.path.includes("access_tokens"))).toEqual([]);
  }, 30_000);

  it("never dispatches a command GitHub would not show: a collapsed <details>, an <img alt>, a <div hidden>", async () => {
    const pr = openPr();
    const before = dispatches().length;
    for (const body of [
      "Logs below.\n\n<details>\n<summary>full log</summary>\n\n/hcp smoke\n\n</details>",
      '<img alt="diagram\n/hcp smoke\n" src="https://example.invalid/x.png">',
      "<div hidden>\n\n/hcp smoke\n\n</div>",
    ]) {
      await deliver("issue_comment", commentPayload(pr.number, body, "maint"));
    }
    expect(dispatches().length).toBe(before);
    await deliver("issue_comment", commentPayload(pr.number, "<details><summary>x</summary>\n\nnothing\n\n</details>\n\n/hcp smoke", "maint"));
    expect(dispatches().length - before).toBe(1); // visible text still counts
  }, 30_000);

  it("runs one smoke per PR at a time, and never dispatches the same comment twice, even after a restart", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const payload = commentPayload(pr.number, "/hcp smoke", "maint", { commentId: 7001 });
    await deliver("issue_comment", payload);
    await deliver("issue_comment", payload); // GitHub redelivery: same comment, new delivery id
    await restart(); // only the SQLite file remembers
    await deliver("issue_comment", payload);
    expect(dispatches().length - before).toBe(1);
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "admin1"));
    expect(dispatches().length - before).toBe(1);
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/already under way/);
    const store = SqliteStore.open(dataDir);
    const audit = await store.auditLog({ repo: `${OWNER}/${REPO}`, limit: 50 });
    await store.close();
    expect(audit.filter((a) => a.pr === pr.number).map((a) => a.decision)).toEqual(expect.arrayContaining(["allowed", "denied"]));
  }, 60_000);

  it("quotas are per installation and repository: another installation's runs and requests do not count; only the operator's cap spans them", async () => {
    // This file's installation has many runs active and many requests by maint (its quotas are generous).
    const store = SqliteStore.open(dataDir);
    const active = await store.countActive();
    await store.close();
    expect(active).toBeGreaterThan(2);
    const other = { id: 2001, name: "mb2", full_name: "globex/mb2", owner: { login: "globex", id: 3, type: "Organization" }, default_branch: "main" };
    gh.addInstallation({ id: 10, account: "globex", accountType: "Organization" });
    gh.addRepo({ owner: "globex", repo: "mb2", defaultBranch: "main", files: { main: { [RECIPE_FILE]: RECIPE, ".github/hcp-bot.yml": "smoke:\n  quotas: {per_user_per_day: 1, max_queued: 1}\n" } } });
    const template = workflowTemplate();
    gh.addWorkflow({ owner: "globex", repo: "mb2", path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke", inputs: template.on.workflow_dispatch.inputs, runName: template["run-name"], jobName: template.jobs.smoke.name });
    const prOn = (number: number) => {
      const sha = number.toString(16).padStart(40, "c");
      gh.addCommit({ owner: "globex", repo: "mb2", branch: `pr-${number}`, base: "main", sha, files: { [RECIPE_FILE]: RECIPE } });
      gh.addPullRequest({ owner: "globex", repo: "mb2", number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: RECIPE_FILE, contents: RECIPE, status: "modified" }] });
    };
    const ask = (number: number, url: string) =>
      deliverAndSettle({ url, idle: () => bot.idle() }, SECRET, "issue_comment", { ...commentPayload(number, "/hcp smoke", "maint"), installation: { id: 10 }, repository: other });
    prOn(1);
    const before = dispatches().length;
    await ask(1, bot.url);
    expect(dispatches().length - before).toBe(1); // its own cap (1) and maint's own quota there (1) were free
    prOn(2);
    await ask(2, bot.url); // now they are used up: its own limits hold
    expect(dispatches().length - before).toBe(1);

    // The operator's cap (HCP_SMOKE_MAX_ACTIVE) counts every installation's active runs.
    const capped = await startServer(botSettings({ githubUrl: gh.url, appId: 77, secret: SECRET, dataDir, extra: { HCP_SMOKE_MAX_ACTIVE: "2" } }), { sweepIntervalMs: 0, clock: instantClock, smoke: { runLookup: { attempts: 2, delayMs: 10 } } });
    try {
      const pr = openPr();
      await deliverAndSettle(capped, SECRET, "issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
      expect(dispatches().length - before).toBe(1);
      expect((await comments(pr.number)).at(-1)!.body).toMatch(/the operator's limit is 2/);
    } finally {
      await capped.stop();
    }
  }, 60_000);

  it("runs a fork's PR (even by a writer) only once copy-pr-bot mirrored the pinned SHA, when required", async () => {
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": `${CONFIG}  require_copy_pr_bot: true\n` } });
    try {
      const pr = openPr({ author: "maint", fork: "maint/mb" });
      const before = dispatches().length;
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "admin1"));
      expect(dispatches().length).toBe(before);
      expect((await comments(pr.number)).at(-1)!.body).toMatch(/comes from a fork/);
      gh.addCommit({ owner: OWNER, repo: REPO, branch: `pull-request/${pr.number}`, base: `pr-${pr.number}`, sha: pr.sha, files: {} });
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "admin1"));
      expect(dispatches().length - before).toBe(1);
    } finally {
      gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": CONFIG } });
    }
  }, 30_000);

  it("runs a fork's PR without copy-pr-bot when not required, because an allowed person asked", async () => {
    const pr = openPr({ author: "outsider", fork: "outsider/mb" });
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    expect(dispatches().length - before).toBe(1);
  }, 30_000);

  it("runs an untrusted author's PR only once copy-pr-bot mirrored the pinned SHA, when required", async () => {
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": `${CONFIG}  require_copy_pr_bot: true\n` } });
    try {
      const pr = openPr({ author: "outsider" });
      const before = dispatches().length;
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
      expect(dispatches().length).toBe(before);
      expect((await comments(pr.number)).at(-1)!.body).toMatch(new RegExp(`/ok to test ${pr.sha}`));
      gh.addCommit({ owner: OWNER, repo: REPO, branch: `pull-request/${pr.number}`, base: `pr-${pr.number}`, sha: pr.sha, files: {} });
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
      expect(dispatches().length - before).toBe(1);
    } finally {
      gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": CONFIG } });
    }
  }, 30_000);
});

describe("the commit as of the comment", () => {
  it("refuses when the PR's branch moved after the comment, unless the command names the head; a short SHA only as the head's prefix", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const wrote = new Date();
    // The fork pushes a new commit after the maintainer's comment, before the bot handles it.
    const pushed = gh.addCommit({ owner: OWNER, repo: REPO, branch: `pr-${pr.number}`, base: `pr-${pr.number}`, files: { "evil.py": "import os" }, pushedAt: new Date(wrote.getTime() + 5000) });
    gh.state.pull(`${OWNER}/${REPO}`.toLowerCase(), pr.number)!.head.sha = pushed;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint", { createdAt: wrote }));
    expect(dispatches().length).toBe(before);
    expect(visibleText((await comments(pr.number)).at(-1)!.body)).toMatch(/pushed to after your comment.*\/hcp smoke sha=/);
    // Naming another commit (the one reviewed, no longer the head) or a prefix that is not the head's: refused.
    for (const named of [pr.sha.slice(0, 7), pr.sha, "abcdef1"]) {
      await deliver("issue_comment", commentPayload(pr.number, `/hcp smoke sha=${named}`, "maint", { createdAt: wrote }));
    }
    expect(dispatches().length).toBe(before);
    expect(visibleText((await comments(pr.number)).at(-1)!.body)).toMatch(/is not this PR's head commit/);
    // Naming the head runs exactly it.
    await deliver("issue_comment", commentPayload(pr.number, `/hcp smoke sha=${pushed.slice(0, 7)}`, "maint", { createdAt: wrote }));
    expect(dispatches().length - before).toBe(1);
    expect((dispatches().at(-1)!.inputs as Record<string, string>).sha).toBe(pushed);
  }, 30_000);
});

describe("pre-flight, cancel, help and queue timeouts", () => {
  it("refuses a configuration the analyzer knows cannot work, with the findings and no dispatch", async () => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke cp=4 sizes=2,2 dataset.seq_length=8190", "maint"));
    expect(dispatches().length).toBe(before);
    const reply = (await comments(pr.number)).at(-1)!.body;
    expect(reply).toMatch(/pre-flight check found/);
    expect(reply).toMatch(/HCP007/);
  }, 30_000);

  it("dispatches a recipe the pre-flight cannot find (run_recipe.py knows better), and says what was not checked", async () => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke recipe=qwen3_dynamic_pretrain_config", "maint"));
    expect(dispatches().length - before).toBe(1);
    const reply = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke") && c.body.includes("qwen3_dynamic_pretrain_config"))!;
    expect(visibleText(reply.body)).toContain(`The pre-flight did not find recipe qwen3_dynamic_pretrain_config at ${pr.sha.slice(0, 12)}, so it checked the overrides alone.`);
  }, 30_000);

  it("follows a builder the recipe imports from outside the recipe folders, read at the pinned SHA", async () => {
    const BUILDER = "src/megatron/bridge/training/shared_builders.py";
    const RECIPE_WITH_IMPORT = `from megatron.bridge.training.shared_builders import _long_context_common


def imported_builder_pretrain_config():
    cfg = _long_context_common()
    cfg.model.tensor_model_parallel_size = 1
    return cfg
`;
    const builder = (seq: number) =>
      `def _long_context_common():\n    cfg = ConfigContainer(model=GPTModelProvider(), dataset=GPTDatasetConfig(seq_length=${seq}))\n    cfg.model.seq_length = ${seq}\n    return cfg\n`;
    const open = (seq: number) => {
      const number = ++prCounter;
      const sha = number.toString(16).padStart(40, "e");
      gh.addCommit({ owner: OWNER, repo: REPO, branch: `pr-${number}`, base: "main", sha, files: { [RECIPE_FILE]: RECIPE_WITH_IMPORT, [BUILDER]: builder(seq) } });
      gh.addPullRequest({ owner: OWNER, repo: REPO, number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: RECIPE_FILE, contents: RECIPE_WITH_IMPORT, status: "modified" }, { filename: BUILDER, contents: builder(seq), status: "added" }] });
      return { number, sha };
    };
    // 8190 is not a multiple of 2 × CP 4: only the builder (outside recipes/**) says so.
    const bad = open(8190);
    const before = dispatches().length;
    const mark = gh.calls.length;
    await deliver("issue_comment", commentPayload(bad.number, "/hcp smoke recipe=imported_builder_pretrain_config", "maint"));
    expect(dispatches().length).toBe(before);
    const reply = (await comments(bad.number)).at(-1)!.body;
    expect(reply).toMatch(/pre-flight check found/);
    expect(reply).toMatch(/HCP007/);
    const reads = gh.calls.slice(mark).filter((c) => c.method === "POST" && /graphql$/.test(c.path)).map((c) => JSON.stringify(c.body));
    expect(reads.some((q) => q.includes(`${bad.sha}:${BUILDER}`))).toBe(true);
    // Counter-example: the same recipe over a builder with a length CP can split is dispatched.
    const good = open(8192);
    await deliver("issue_comment", commentPayload(good.number, "/hcp smoke recipe=imported_builder_pretrain_config", "maint"));
    expect(dispatches().length - before).toBe(1);
  }, 60_000);

  it("answers a grammar error with what is allowed", async () => {
    const pr = openPr();
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke cp=4; rm -rf /", "maint"));
    const reply = (await comments(pr.number)).at(-1)!.body;
    expect(reply).toMatch(/line 1/);
    expect(dispatches().every((d) => !JSON.stringify(d.inputs).includes("rm -rf"))).toBe(true);
  }, 30_000);

  it("cancels the run with /hcp cancel", async () => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    const sent = dispatches()[before]!;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp cancel", "maint"));
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/actions/runs/${sent.runId}/cancel`))).toBe(true);
    expect((await smokeCheck(pr.sha))!.conclusion).toBe("cancelled");
    expect((await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!.body).toMatch(/cancelled by @maint/);
  }, 30_000);

  it("starts a smoke run from the button on the HCP review check run, with the same checks", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const action = (login: string) => ({
      action: "requested_action",
      installation: { id: INSTALLATION },
      repository: repository(),
      sender: { login, id: 51, type: "User" },
      requested_action: { identifier: "hcp-smoke" },
      check_run: { id: 1, name: "HCP review", head_sha: pr.sha, pull_requests: [{ number: pr.number, head: { sha: pr.sha, ref: `pr-${pr.number}` }, base: { sha: "b".repeat(40), ref: "main" } }] },
    });
    await deliver("check_run", action("reader"));
    expect(dispatches().length).toBe(before);
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/needs write access/);
    await deliver("check_run", action("maint"), "button-delivery-1");
    expect(dispatches().length - before).toBe(1);
    const sent = dispatches()[before]!;
    expect((sent.inputs as Record<string, string>).sha).toBe(pr.sha);
    // The run ends; then the same delivery comes again after a restart: nothing runs twice.
    gh.updateWorkflowRun(sent.runId, { status: "completed", conclusion: "cancelled" });
    await deliver("workflow_run", runPayload("completed", { id: sent.runId, status: "completed", conclusion: "cancelled", display_title: "x" }));
    await restart();
    await deliver("check_run", action("maint"), "button-delivery-1");
    expect(dispatches().length - before).toBe(1);
  }, 30_000);

  it("a comment whose handling failed before dispatch (GitHub down) runs when GitHub redelivers it", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const payload = commentPayload(pr.number, "/hcp smoke", "maint", { commentId: 7002 });
    // 502 for the first attempt and the bot's 12 retries of it.
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}$`), status: 502, times: 13 });
    await deliver("issue_comment", payload, "comment-delivery-1");
    expect(gh.pendingInjections()).toEqual([]);
    expect(dispatches().length).toBe(before);
    await deliver("issue_comment", payload, "comment-delivery-2"); // GitHub's redelivery
    expect(dispatches().length - before).toBe(1);
    await deliver("issue_comment", payload, "comment-delivery-3");
    expect(dispatches().length - before).toBe(1);
  }, 30_000);

  it("a dispatch or reply GitHub did but answered 502 happens once: the bot looks (runs by run-name, comments by marker) before it sends again", async () => {
    const smokeComments = async (pr: number) => (await comments(pr)).filter((c) => c.body.includes("hcp-bot:smoke"));
    // Processed, then the answer is lost.
    gh.inject({ method: "POST", path: /\/actions\/workflows\/[^/]+\/dispatches$/, status: 502, afterProcessing: true });
    gh.inject({ method: "POST", path: /\/issues\/\d+\/comments$/, status: 502, afterProcessing: true });
    const lost = await smokeOn();
    expect(gh.pendingInjections()).toEqual([]);
    expect(dispatches().length - lost.before).toBe(1);
    const story = await smokeComments(lost.pr.number);
    expect(story).toHaveLength(1);
    expect(story[0]!.body).toContain(`/actions/runs/${lost.sent.runId}`); // the run it found is the one that ran
    expect((await smokeCheck(lost.pr.sha))!.status).toBe("queued");

    // Not processed at all: nothing is found, so the bot sends it again, once.
    gh.inject({ method: "POST", path: /\/actions\/workflows\/[^/]+\/dispatches$/, status: 502 });
    gh.inject({ method: "POST", path: /\/issues\/\d+\/comments$/, status: 502 });
    const dropped = await smokeOn();
    expect(gh.pendingInjections()).toEqual([]);
    expect(dispatches().length - dropped.before).toBe(1);
    expect(await smokeComments(dropped.pr.number)).toHaveLength(1);
  }, 60_000);

  it("a reply GitHub posted but answered 502 is posted once", async () => {
    const pr = openPr();
    gh.inject({ method: "POST", path: new RegExp(`/issues/${pr.number}/comments$`), status: 502, afterProcessing: true });
    await deliver("issue_comment", commentPayload(pr.number, "/hcp help", "reader"));
    expect(gh.pendingInjections()).toEqual([]);
    expect((await comments(pr.number)).filter((c) => c.body.includes("/hcp smoke"))).toHaveLength(1);
  }, 30_000);

  it("answers /hcp help", async () => {
    const pr = openPr();
    await deliver("issue_comment", commentPayload(pr.number, "/hcp help", "reader"));
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/\/hcp smoke/);
  }, 30_000);

  it("ends a run no GPU runner picked up as timed_out, and cancels it", async () => {
    await restart({ sweepIntervalMs: 50 });
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    const sent = dispatches()[before]!;
    clock += 31 * 60_000; // past the default 30-minute queue limit
    await new Promise((r) => setTimeout(r, 300));
    await bot.idle();
    const check = (await smokeCheck(pr.sha))!;
    expect(check.conclusion).toBe("timed_out");
    expect(check.output.summary).toMatch(/No self-hosted runner with the labels `self-hosted, linux, gpu-4`/);
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/actions/runs/${sent.runId}/cancel`))).toBe(true);
  }, 30_000);
});
