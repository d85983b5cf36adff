// `/hcp smoke` end to end: which workflow run is a request's (a title alone binds nothing),
// and the commit as of the comment.
import { describe, expect, it } from "vitest";
import { completeSmokeRun, runnerFacts } from "../support/bot-harness.ts";
import { visibleText } from "../support/gfm.ts";
import {
  FLAT_LOG, OWNER, PASSING_LOG, REPO, bot, commentPayload, comments, deliver, dispatches, finishRun, gh, openPr, repository, restart, runPayload, smokeCheck, smokeOn, smokeTuning, useSmokeE2E,
} from "../support/smoke-e2e.ts";

useSmokeE2E();

describe("which workflow run is the smoke run", () => {
  const artifactDownloads = (from: number) => gh.calls.slice(from).filter((c) => /\/actions\/artifacts\/\d+\/zip$/.test(c.path)).length;

  it("a run that only claims the request id in its title cannot complete it, bound or not", async () => {
    // The dispatch returns no run id and the lookup is off: the request waits for its run
    // unbound, the only time a title can bind a run.
    gh.state.dispatchReturnsRunDetails = false;
    await restart({ smoke: smokeTuning({ runLookup: { attempts: 0, delayMs: 0 } }) });
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
  });

  it("a title binds only a run the app started, from the dispatched commit, whose job carries the request's id and SHA", async () => {
    gh.state.dispatchReturnsRunDetails = false;
    await restart({ smoke: smokeTuning({ runLookup: { attempts: 0, delayMs: 0 } }) });
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
  });

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
  });

  it("a run cancelled before it could be found is bound by its title (ours only) and cancelled when it shows up", async () => {
    gh.state.dispatchReturnsRunDetails = false;
    await restart({ smoke: smokeTuning({ runLookup: { attempts: 0, delayMs: 0 } }) });
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
  });
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
  });
});
