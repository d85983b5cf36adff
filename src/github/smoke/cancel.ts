// `/hcp cancel`, and the cancelling a run's end shares with it: the workflow run stopped, the
// request, its check run and its story marked cancelled.
import { untrusted } from "../../core/render/markdown.ts";
import type { SmokeState } from "../../core/render/smoke.ts";
import { roleRank } from "../../core/smoke/policy.ts";
import type { SmokeRequest } from "../../store/types.ts";
import type { BotOctokit } from "../host.ts";
import { refusalBudget } from "../refusals.ts";
import { repositoryRole } from "./request.ts";
import { updateStory } from "./story.ts";
import type { CancelAsk, SmokeDeps } from "./types.ts";

type Octokit = BotOctokit;

const repoName = (r: { owner: string; repo: string }) => `${r.owner}/${r.repo}`;

export async function cancelRun(octokit: Octokit, r: { owner: string; repo: string }, runId: number): Promise<void> {
  await octokit.rest.actions.cancelWorkflowRun({ owner: r.owner, repo: r.repo, run_id: runId }).catch((error: { status?: number }) => {
    if (error.status !== 409) throw error; // 409: already finished
  });
}

export async function finishCancelled(octokit: Octokit, r: { owner: string; repo: string }, request: SmokeRequest, deps: SmokeDeps, by?: string): Promise<SmokeRequest> {
  const now = deps.now ?? (() => new Date());
  const updated = await deps.store.updateSmokeRequest(request.id, { status: "cancelled", finishedAt: now() });
  if (request.checkRunId) {
    await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: request.checkRunId, status: "completed", conclusion: "cancelled", completed_at: now().toISOString() });
  }
  const state: SmokeState = by ? { kind: "cancelled", by } : { kind: "cancelled" };
  await updateStory(octokit, r, updated.ok ? updated.request : request, state, deps);
  return updated.ok ? updated.request : request;
}

/** `/hcp cancel`: the same permission as starting one. Empty: a refusal past REFUSAL_LIMITS (no reply). */
export async function cancelSmoke(ask: CancelAsk, deps: SmokeDeps): Promise<string> {
  const { octokit, repo: r, config, pr: prNumber, requester } = ask;
  const role = await repositoryRole(octokit, r, requester.login);
  if (role === undefined || roleRank(role) < roleRank(config.smoke.permission)) {
    // A role GitHub could not tell is not the asker's doing: answered and kept, as before.
    const expiry = role === undefined ? undefined : await refusalBudget(deps.store, { installationId: r.installationId, login: requester.login, repo: repoName(r), pr: prNumber }, (deps.now ?? (() => new Date()))());
    if (role !== undefined && !expiry) return "";
    await deps.store.audit({ action: "cancel", decision: "denied", reason: `role ${role ?? "unknown"}`, githubLogin: requester.login, repo: repoName(r), pr: prNumber, ...expiry });
    return `@${untrusted(requester.login)} cancelling a smoke run needs ${config.smoke.permission} access.`;
  }
  const active = await deps.store.activeForPr(repoName(r), prNumber);
  if (active.length === 0) return "No smoke run is under way for this PR.";
  for (const request of active) {
    if (request.runId) await cancelRun(octokit, r, request.runId);
    await finishCancelled(octokit, r, request, deps, requester.login);
    await deps.store.audit({ action: "cancel", decision: "allowed", githubLogin: requester.login, repo: repoName(r), pr: prNumber, sha: request.sha, requestId: request.id, runId: request.runId });
  }
  return `Cancelled ${active.length} smoke run(s).`;
}

