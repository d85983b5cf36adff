// `/hcp smoke` against the workflow a repository really has installed: an older six-input
// rendering (dispatched with its declared inputs only, the rest said in the reply and the check
// run, the verdict still coming back), a workflow without `workflow_dispatch`, none at all, one
// that requires an input the bot cannot fill, and the version in `/hcp status` and /healthz.
// The fake GitHub reads each workflow file at the dispatched ref and answers GitHub's 422 to
// undeclared inputs, so a bot that sent them would fail here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../../src/server/server.ts";
import { WORKFLOW_TEMPLATE_VERSION } from "../../src/core/smoke/workflow.ts";
import { botSettings, completeSmokeRun, deliverAndSettle, runnerFacts, smokeWorkflowFile } from "../support/bot-harness.ts";
import { visibleText } from "../support/gfm.ts";
import {
  CONFIG, INSTALLATION, OWNER, PASSING_LOG, RECIPE, RECIPE_FILE, SECRET, api, bot, commentPayload, dataDir, deliver, gh, nextPrNumber, repository, runPayload, useSmokeE2E,
} from "../support/smoke-e2e.ts";

useSmokeE2E();

const SIX_INPUTS = readFileSync(join(import.meta.dirname, "fixtures", "hcp-smoke-six-inputs.yml"), "utf8");
const WORKFLOW = ".github/workflows/hcp-smoke.yml";

/** A repository of the suite's installation with `workflow` installed (none when null). */
function repoWith(name: string, workflow: string | null) {
  gh.addRepo({ owner: OWNER, repo: name, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: RECIPE, ".github/hcp-bot.yml": CONFIG } } });
  const wf = gh.addWorkflow({ owner: OWNER, repo: name, path: WORKFLOW, name: "hcp-smoke", ...(workflow === null ? {} : { content: workflow }) });
  const payloadRepo = { ...repository(), id: 1000 + nextPrNumber(), name, full_name: `${OWNER}/${name}` };
  const openPr = () => {
    const number = nextPrNumber();
    const sha = number.toString(16).padStart(40, "a");
    gh.addCommit({ owner: OWNER, repo: name, branch: `pr-${number}`, base: "main", sha, files: { [RECIPE_FILE]: RECIPE } });
    gh.addPullRequest({ owner: OWNER, repo: name, number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: RECIPE_FILE, contents: RECIPE, status: "modified" }] });
    return { number, sha };
  };
  const say = (pr: number, text: string) => deliver("issue_comment", { ...commentPayload(pr, text, "maint"), repository: payloadRepo });
  const comments = (pr: number) => api<Array<{ body: string }>>(`/repos/${OWNER}/${name}/issues/${pr}/comments?per_page=100`);
  const checks = (sha: string) => api<{ check_runs: Array<{ status: string; conclusion: string | null; output: { summary: string } }> }>(`/repos/${OWNER}/${name}/commits/${sha}/check-runs?check_name=HCP%20smoke`);
  const dispatches = () => gh.state.dispatches.filter((d) => d.workflowId === wf.id);
  return { wf, payloadRepo, openPr, say, comments, checks, dispatches };
}

describe("an older installed workflow", () => {
  it("the fake answers GitHub's 422 to inputs the six-input workflow does not declare", async () => {
    const r = repoWith("legacy-422", SIX_INPUTS);
    const res = await fetch(`${gh.apiUrl}/repos/${OWNER}/legacy-422/actions/workflows/hcp-smoke.yml/dispatches`, {
      method: "POST",
      headers: { authorization: `token ${gh.installationToken(INSTALLATION)}`, "content-type": "application/json" },
      body: JSON.stringify({ ref: "main", inputs: { sha: "a".repeat(40), pr: "1", recipe: "x", request_id: "abcdef", nproc: "4", iters: "2", expect_hcp: "true" } }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toBe('Unexpected inputs provided: ["nproc", "iters", "expect_hcp"]');
    expect(r.dispatches()).toHaveLength(0);
  });

  it("is dispatched with its six declared inputs only, says what it could not send and how to upgrade, and the verdict comes back", async () => {
    const r = repoWith("legacy", SIX_INPUTS);
    const pr = r.openPr();
    await r.say(pr.number, "/hcp smoke");
    const sent = r.dispatches();
    expect(sent).toHaveLength(1);
    expect(Object.keys(sent[0]!.inputs as object).sort()).toEqual(["check_run_id", "overrides", "pr", "recipe", "request_id", "sha"]);
    const inputs = sent[0]!.inputs as Record<string, string>;
    expect(inputs.sha).toBe(pr.sha);

    const reply = visibleText((await r.comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!.body);
    expect(reply).toMatch(/queued for a GPU runner/);
    expect(reply).toContain("does not take nproc, iters, expect_hcp");
    expect(reply).toContain("nproc=4: it runs smoke-run's default of 4 GPUs (the same as asked)");
    expect(reply).toContain("npx hcp-bot init-workflow --force");
    expect(reply).toContain(`template v1; hcp-bot renders v${WORKFLOW_TEMPLATE_VERSION}`);
    const check = (await r.checks(pr.sha)).check_runs[0]!;
    expect(check.status).toBe("queued");
    expect(check.output.summary).toContain("npx hcp-bot init-workflow --force");
    expect(check.output.summary).toContain("`expect_hcp=true`");

    // The old workflow's run reports like any other; the bot's verdict is its own.
    const title = `hcp-smoke ${inputs.request_id} (PR #${pr.number}, llama32_1b_pretrain_config)`;
    await completeSmokeRun(gh, { runId: sent[0]!.runId, requestId: inputs.request_id! }, { "smoke.log": PASSING_LOG, "verdict.json": runnerFacts() });
    await deliver("workflow_run", runPayload("completed", { id: sent[0]!.runId, status: "completed", conclusion: "success", display_title: title }, r.payloadRepo));
    const done = (await r.checks(pr.sha)).check_runs[0]!;
    expect(done.conclusion).toBe("success");
  });

  it("asks for what the old workflow cannot do (8 GPUs, 5 iterations): the reply says it runs its defaults instead", async () => {
    const r = repoWith("legacy-asks", SIX_INPUTS);
    const pr = r.openPr();
    await r.say(pr.number, "/hcp smoke gpus=8 cp=8 sizes=4,2 iters=5");
    expect(r.dispatches()).toHaveLength(1);
    const reply = visibleText((await r.comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!.body);
    expect(reply).toContain("nproc=8: it runs smoke-run's default of 4 GPUs, not the 8 asked for");
    expect(reply).toContain("iters=5: it runs smoke-run's default of 2 iterations, not the 5 asked for");
  });

  it("once upgraded (a new commit of the file), every input is sent and nothing is said about the workflow", async () => {
    const r = repoWith("upgraded", SIX_INPUTS);
    const first = r.openPr();
    await r.say(first.number, "/hcp smoke");
    gh.addCommit({ owner: OWNER, repo: "upgraded", branch: "main", base: "main", files: { [WORKFLOW]: smokeWorkflowFile() } });
    const pr = r.openPr();
    await r.say(pr.number, "/hcp smoke");
    const sent = r.dispatches();
    expect(sent).toHaveLength(2);
    expect(Object.keys(sent[1]!.inputs as object)).toEqual(expect.arrayContaining(["nproc", "iters", "expect_hcp"]));
    const reply = visibleText((await r.comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!.body);
    expect(reply).not.toContain("init-workflow");
  });

  it("`/hcp status` and /healthz say the installed workflow is older than the bot", async () => {
    const r = repoWith("legacy-status", SIX_INPUTS);
    const pr = r.openPr();
    await r.say(pr.number, "/hcp status");
    const answer = visibleText((await r.comments(pr.number)).at(-1)!.body);
    expect(answer).toContain(`The installed smoke workflow ${WORKFLOW} is template v1, older than this hcp-bot's v${WORKFLOW_TEMPLATE_VERSION}: upgrade it with npx hcp-bot init-workflow --force.`);

    const token = "health-token-for-workflows";
    const watched = await startServer(botSettings({ githubUrl: gh.url, appId: 77, secret: SECRET, dataDir, extra: { HCP_HEALTH_TOKEN: token } }), { sweepIntervalMs: 0 });
    try {
      const health = (await (await fetch(`${watched.url}/healthz`, { headers: { authorization: `Bearer ${token}` } })).json()) as { workflows: { template: number; outdated: Array<{ repo: string; version: number | null }> } };
      expect(health.workflows.template).toBe(WORKFLOW_TEMPLATE_VERSION);
      expect(health.workflows.outdated).toEqual(expect.arrayContaining([expect.objectContaining({ repo: `${OWNER}/legacy-status`, version: 1 })]));
      expect(health.workflows.outdated.some((w) => w.repo === `${OWNER}/upgraded`)).toBe(false);
      const anonymous = (await (await fetch(`${watched.url}/healthz`)).json()) as Record<string, unknown>;
      expect(anonymous.workflows).toBeUndefined();
    } finally {
      await watched.stop();
    }
    // The current workflow is not reported as older.
    const current = repoWith("current-status", smokeWorkflowFile());
    const other = current.openPr();
    await current.say(other.number, "/hcp status");
    expect(visibleText((await current.comments(other.number)).at(-1)!.body)).not.toContain("older");
  });
});

describe("a workflow the bot cannot dispatch is refused before anything is queued", () => {
  const refusedBefore = async (workflow: string | null, repo: string, reason: RegExp) => {
    const r = repoWith(repo, workflow);
    const pr = r.openPr();
    const mark = gh.calls.length;
    await r.say(pr.number, "/hcp smoke");
    expect(r.dispatches()).toHaveLength(0);
    expect(gh.calls.slice(mark).some((c) => c.method === "POST" && (/\/check-runs$/.test(c.path) || /\/dispatches$/.test(c.path)))).toBe(false);
    expect((await r.checks(pr.sha)).check_runs).toHaveLength(0);
    expect(visibleText((await r.comments(pr.number)).at(-1)!.body)).toMatch(reason);
  };

  it("no `workflow_dispatch` trigger", async () => {
    const pushOnly = smokeWorkflowFile().replace(/^on:\n {2}workflow_dispatch:\n/m, "on:\n  push:\n    branches: [main]\n  workflow_call:\n");
    expect(pushOnly).not.toContain("workflow_dispatch:");
    await refusedBefore(pushOnly, "no-dispatch", /no smoke run: \.github\/workflows\/hcp-smoke\.yml has no workflow_dispatch trigger, so hcp-bot cannot start it; render it again with npx hcp-bot init-workflow --force/);
  });

  it("no workflow file on the default branch", async () => {
    await refusedBefore(null, "no-workflow", /no smoke run: the workflow \.github\/workflows\/hcp-smoke\.yml was not found on main: add it with npx hcp-bot init-workflow/);
  });

  it("a required input the bot cannot fill", async () => {
    const extra = smokeWorkflowFile().replace("    inputs:\n", '    inputs:\n      cluster:\n        description: "Which cluster"\n        required: true\n        type: string\n');
    await refusedBefore(extra, "needs-cluster", /requires the input\(s\) cluster, which hcp-bot does not know how to fill/);
  });

  it("a workflow without the sha input (a run that could not be tied to the pinned commit)", async () => {
    const noSha = SIX_INPUTS.replace(/ {6}sha:\n( {8}.*\n)+/, "");
    expect(noSha).not.toMatch(/^ {6}sha:/m);
    await refusedBefore(noSha, "no-sha", /does not declare the input\(s\) sha/);
  });

  it("the check-run button gets the same refusal", async () => {
    const r = repoWith("button-no-workflow", null);
    const pr = r.openPr();
    await deliverAndSettle(bot, SECRET, "check_run", {
      action: "requested_action",
      installation: { id: INSTALLATION },
      repository: r.payloadRepo,
      sender: { login: "maint", id: 51, type: "User" },
      requested_action: { identifier: "hcp-smoke" },
      check_run: { id: 1, name: "HCP review", head_sha: pr.sha, pull_requests: [{ number: pr.number, head: { sha: pr.sha, ref: `pr-${pr.number}` }, base: { sha: "b".repeat(40), ref: "main" } }] },
    });
    expect(r.dispatches()).toHaveLength(0);
    expect(visibleText((await r.comments(pr.number)).at(-1)!.body)).toMatch(/was not found on main/);
  });
});
