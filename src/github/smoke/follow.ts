// Following a dispatched run: the workflow_run and workflow_job events bind it to its request
// (by run id, or by the request id in its title when GitHub's facts say it is ours: binding.ts),
// mark it running, and judge it when it completes (verdict.ts); the queue sweep ends runs no
// GPU runner picked up.
import { defaultRepoConfig, type RepoConfig } from "../../core/config/repo-config.ts";
import { applyComparison } from "../../core/ab/index.ts";
import { conclusionForVerdict, smokeCommentBody, stateHeadline, type SmokeState } from "../../core/render/smoke.ts";
import type { SmokeRequest } from "../../store/types.ts";
import type { BotOctokit } from "../host.ts";
import { whyNotOurRun } from "./binding.ts";
import { cancelRun, finishCancelled } from "./cancel.ts";
import { botLoginOf, updateStory, view } from "./story.ts";
import type { RunRepo, SmokeDeps, WorkflowRunEvent } from "./types.ts";
import { verdictForRun } from "./verdict.ts";

type Octokit = BotOctokit;

const repoName = (r: { owner: string; repo: string }) => `${r.owner}/${r.repo}`;

// templates/hcp-smoke.yml: run-name "hcp-smoke <request id> (PR #n, recipe)".
const REQUEST_IN_TITLE = /hcp-smoke ([A-Za-z0-9_-]{6,})/;

/**
 * The request a run belongs to: the one bound to its id, else (when the dispatch did not
 * return the run id) the one its title names, only while that request has no run (the store
 * sets a run id once) and only when GitHub's facts about the run say it is ours: who started
 * it, from which commit of which workflow file, with which inputs (binding.ts). The event's
 * own fields screen out the obvious others before any API call.
 */
async function requestForRun(octokit: Octokit, r: RunRepo, run: WorkflowRunEvent, deps: SmokeDeps): Promise<SmokeRequest | undefined> {
  const repo = repoName(r);
  const byId = await deps.store.findByRunId(run.id);
  if (byId) return byId.repo === repo ? byId : undefined;
  if (run.event !== "workflow_dispatch" || !r.defaultBranch || run.head_branch !== r.defaultBranch) return undefined;
  const m = REQUEST_IN_TITLE.exec(run.display_title ?? run.name ?? "");
  if (!m) return undefined;
  const request = await deps.store.getSmokeRequest(m[1]!);
  if (!request || request.repo !== repo || request.runId !== null) return undefined;
  const workflow = r.smokeWorkflow ? await r.smokeWorkflow() : defaultRepoConfig().smoke.workflow;
  const why = await whyNotOurRun(octokit, { owner: r.owner, repo: r.repo, defaultBranch: r.defaultBranch, workflow, botLogin: await botLoginOf(octokit, deps) }, request, run.id);
  if (why) {
    deps.log.warn({ run: run.id, request: request.id, why }, "a run titled after a smoke request is not its run");
    return undefined;
  }
  const updated = await deps.store.updateSmokeRequest(request.id, { runId: run.id, runUrl: run.html_url });
  return updated.ok ? updated.request : undefined;
}

/** workflow_run / workflow_job events: follow the run, and judge it when it completes. */
export async function followRun(octokit: Octokit, r: RunRepo, run: WorkflowRunEvent, deps: SmokeDeps): Promise<SmokeRequest | undefined> {
  const now = deps.now ?? (() => new Date());
  const request = await requestForRun(octokit, r, run, deps);
  if (request && (request.status === "cancelled" || request.status === "timed_out") && run.status !== "completed") {
    // Cancelled (or expired) before the dispatch's run could be found: stop the run now it shows up.
    await cancelRun(octokit, r, run.id);
    return request;
  }
  if (!request || !["dispatched", "queued", "running"].includes(request.status)) return request;
  if (run.status === "in_progress" && request.status !== "running") {
    const updated = await deps.store.updateSmokeRequest(request.id, { status: "running", startedAt: now() });
    if (request.checkRunId) await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: request.checkRunId, status: "in_progress", started_at: now().toISOString() });
    if (updated.ok) await updateStory(octokit, r, updated.request, { kind: "running" }, deps);
    return updated.ok ? updated.request : request;
  }
  if (run.status !== "completed") return request;
  if (run.conclusion === "cancelled") return finishCancelled(octokit, r, request, deps);
  const judged = await verdictForRun(octokit, r, request, run.id, { maxArtifactBytes: deps.maxArtifactBytes, artifactCaps: deps.artifactCaps, judgeArtifact: deps.judgeArtifact });
  const { note, comparison } = judged;
  // An A/B run's implausible speedup (AB001) makes the HCP leg's verdict worse, never better.
  const verdict = comparison ? applyComparison(judged.verdict, comparison) : judged.verdict;
  const state: SmokeState = { kind: "finished", verdict, ...(note ? { note } : {}), ...(comparison ? { comparison } : {}) };
  if (request.checkRunId) {
    await octokit.rest.checks.update({
      owner: r.owner,
      repo: r.repo,
      check_run_id: request.checkRunId,
      status: "completed",
      conclusion: conclusionForVerdict(verdict),
      completed_at: now().toISOString(),
      details_url: run.html_url,
      output: { title: stateHeadline(state).replace(/^\S+\s/, ""), summary: smokeCommentBody(view(request), state).slice(0, 65_000) },
    });
  }
  const summary = verdict.cause ? `${verdict.status}: ${verdict.cause.message}` : verdict.status;
  const withComparison = comparison ? `${summary}; A/B: ${comparison.summary}` : summary;
  const updated = await deps.store.updateSmokeRequest(request.id, { status: "completed", verdictStatus: verdict.status, verdictSummary: withComparison.slice(0, 4000), verdict, ...(comparison ? { comparison } : {}), finishedAt: now() });
  await updateStory(octokit, r, updated.ok ? updated.request : request, state, deps);
  await deps.store.audit({ action: "verdict", decision: "allowed", githubLogin: request.githubLogin, repo: request.repo, pr: request.pr, sha: request.sha, recipe: request.recipe, requestId: request.id, runId: run.id, verdict: verdict.status });
  return updated.ok ? updated.request : request;
}

/**
 * Runs still queued after the configured limit (no GPU runner online) end timed_out:
 * the workflow run is cancelled and the check run says why.
 */
export async function expireQueued(octokitFor: (installationId: number) => Promise<Octokit>, configFor: (octokit: Octokit, request: SmokeRequest) => Promise<RepoConfig>, deps: SmokeDeps): Promise<number> {
  const now = deps.now ?? (() => new Date());
  // The shortest sensible limit is a minute; each request is then checked against its repo's own limit.
  const candidates = await deps.store.listQueuedOlderThan(new Date(now().getTime() - 60_000));
  let expired = 0;
  for (const request of candidates) {
    if (!request.installationId) continue;
    const octokit = await octokitFor(request.installationId);
    const config = await configFor(octokit, request);
    const since = request.dispatchedAt ?? request.createdAt;
    if (now().getTime() - since.getTime() < config.smoke.timeouts.queue_minutes * 60_000) continue;
    const [owner, repo] = request.repo.split("/") as [string, string];
    if (request.runId) {
      await octokit.rest.actions.cancelWorkflowRun({ owner, repo, run_id: request.runId }).catch(() => undefined);
    }
    const updated = await deps.store.updateSmokeRequest(request.id, { status: "timed_out", finishedAt: now(), reason: "no GPU runner picked the job up in time" });
    const state: SmokeState = { kind: "timed_out", minutes: config.smoke.timeouts.queue_minutes, labels: config.smoke.runner_labels };
    if (request.checkRunId) {
      await octokit.rest.checks.update({
        owner,
        repo,
        check_run_id: request.checkRunId,
        status: "completed",
        conclusion: "timed_out",
        completed_at: now().toISOString(),
        output: { title: "No GPU runner picked the smoke run up", summary: smokeCommentBody(view(request), state) },
      });
    }
    await updateStory(octokit, { owner, repo }, updated.ok ? updated.request : request, state, deps);
    await deps.store.audit({ action: "timeout", decision: "denied", reason: "queued too long", repo: request.repo, pr: request.pr, sha: request.sha, requestId: request.id, runId: request.runId });
    expired++;
  }
  return expired;
}

