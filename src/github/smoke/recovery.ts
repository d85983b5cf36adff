// Smoke requests a crash left half-made, found and resolved. requestSmoke writes, in this
// order: (1) the request, `requested`; (2) the "HCP smoke" check run, queued, its external_id
// naming the request; (3) the workflow dispatch; (4) `dispatched` with the run id and the
// check run id; (5) the story comment and its id. A process killed between two steps leaves
// one of these states, each resolved here from what GitHub itself shows:
//
//  A. `requested`, no check run: nothing ran -> `failed` ("nothing ran; ask again").
//  B. `requested`, a queued check run, no workflow run: nothing ran -> `failed`, and the
//     check run completed saying so (it would otherwise stay queued for ever).
//  C. `requested`, a check run, and a run GitHub created whose answer never arrived: the run
//     is bound only when GitHub's facts say it is ours (binding.ts) -> `dispatched` with
//     the run id and the check run id; the run's current state is followed at once (a run
//     that started or finished meanwhile is caught up: its events were ignored while the
//     request was `requested`), and the story comment is posted.
//  D. `dispatched` without a run id (the dispatch answered, the lookup failed): bound by its
//     title when its first event arrives (followRun), or timed out by the queue sweep.
//  E. `dispatched` without a story comment: the run goes on; the verdict still reaches the
//     check run, Slack and the audit log (only the PR comment is missing).
//
// When: a request of the same origin (the same delivery run again by its durable job after a
// crash) is resolved before anything else is asked, so the retry neither dispatches twice
// nor leaves the first half-made; any other `requested` request of the PR counts as a run
// under way until it is STUCK_AFTER_MS old, after which the new command and the periodic
// sweep resolve it. A live dispatch takes seconds, so a request that old has no process.
import { SMOKE_CHECK_NAME } from "../../core/render/smoke.ts";
import { untrusted } from "../../core/render/markdown.ts";
import type { SmokeRequest } from "../../store/types.ts";
import type { BotOctokit } from "../host.ts";
import { findRun } from "./binding.ts";
import { followRun } from "./follow.ts";
import { requestSmoke } from "./request.ts";
import { postStory } from "./story.ts";
import type { RepoRef, SmokeAsk, SmokeDeps, SmokeOutcome } from "./types.ts";

type Octokit = BotOctokit;

export const STUCK_AFTER_MS = 5 * 60_000;

const NOTHING_RAN = "the bot stopped before the workflow dispatch went through, so nothing ran; ask again";

/** The request's check run, by the request id its external_id starts with. */
async function checkRunOf(octokit: Octokit, r: RepoRef, request: SmokeRequest): Promise<{ id: number; status: string } | undefined> {
  const { data } = await octokit.rest.checks.listForRef({ owner: r.owner, repo: r.repo, ref: request.sha, check_name: SMOKE_CHECK_NAME, filter: "all", per_page: 100 });
  const found = data.check_runs.find((c) => (c.external_id ?? "").split(" ")[0] === request.id);
  return found ? { id: found.id, status: found.status } : undefined;
}

/** Resolves one `requested` request (states A, B, C above); returns it as it ends up. */
export async function resolveStuck(octokit: Octokit, r: RepoRef, workflow: string, request: SmokeRequest, deps: SmokeDeps): Promise<SmokeRequest> {
  const now = deps.now ?? (() => new Date());
  const check = await checkRunOf(octokit, r, request);
  const botLogin = deps.botLogin ? await deps.botLogin(octokit) : "hcp-bot[bot]";
  const run = check ? await findRun(octokit, { ...r, workflow, botLogin }, { ...request, checkRunId: check.id }, { attempts: 1, delayMs: 0 }) : undefined;
  if (check && run) {
    const bound = await deps.store.updateSmokeRequest(request.id, { status: "dispatched", runId: run.id, runUrl: run.url, checkRunId: check.id, dispatchedAt: now() });
    if (!bound.ok) return bound.reason === "not-found" ? request : bound.request;
    deps.log.warn({ request: request.id, run: run.id }, "a smoke request a crash left `requested` had dispatched: bound to its run");
    await deps.store.audit({ action: "recover", decision: "allowed", reason: "bound to the run its dispatch created before a crash", githubLogin: request.githubLogin, repo: request.repo, pr: request.pr, sha: request.sha, requestId: request.id, runId: run.id });
    const told = await postStory(octokit, r, bound.request, { kind: "dispatched" }, deps);
    const { data } = await octokit.rest.actions.getWorkflowRun({ owner: r.owner, repo: r.repo, run_id: run.id });
    const followed = await followRun(octokit, { owner: r.owner, repo: r.repo, defaultBranch: r.defaultBranch, smokeWorkflow: async () => workflow }, data, deps);
    return followed ?? told;
  }
  const failed = await deps.store.updateSmokeRequest(request.id, { status: "failed", reason: NOTHING_RAN, ...(check ? { checkRunId: check.id } : {}) });
  if (check && check.status !== "completed") {
    await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: check.id, status: "completed", conclusion: "failure", completed_at: now().toISOString(), output: { title: "Smoke run did not start", summary: untrusted(NOTHING_RAN) } });
  }
  deps.log.warn({ request: request.id, checkRun: check?.id ?? null }, "a smoke request a crash left `requested` never dispatched: marked failed");
  await deps.store.audit({ action: "recover", decision: "denied", reason: NOTHING_RAN, githubLogin: request.githubLogin, repo: request.repo, pr: request.pr, sha: request.sha, requestId: request.id });
  return failed.ok ? failed.request : request;
}

async function requestedForPr(deps: SmokeDeps, repo: string, pr: number): Promise<SmokeRequest[]> {
  return deps.store.listSmokeRequests({ repos: [repo], pr, status: "requested", limit: 200 });
}

/**
 * requestSmoke, after the PR's half-made requests are resolved: the same origin's at once (its
 * job runs again after a crash), others once they are STUCK_AFTER_MS old. A younger one of
 * another origin is a dispatch under way: the new command waits for it.
 */
export async function requestSmokeAfterCrashes(ask: SmokeAsk, deps: SmokeDeps): Promise<SmokeOutcome> {
  const { octokit, repo: r, origin } = ask;
  const workflow = ask.config.smoke.workflow;
  const now = (deps.now ?? (() => new Date()))().getTime();
  for (const request of await requestedForPr(deps, `${r.owner}/${r.repo}`, ask.pr)) {
    const sameOrigin = origin.deliveryId !== null && request.deliveryId === origin.deliveryId;
    if (!sameOrigin && now - request.createdAt.getTime() < STUCK_AFTER_MS) {
      return { kind: "refused", reason: `smoke request \`${request.id}\` for this PR is being dispatched; wait for it (or for its check run) before asking again` };
    }
    const resolved = await resolveStuck(octokit, r, workflow, request, deps);
    if (sameOrigin && resolved.status !== "failed") return { kind: "dispatched", request: resolved };
    if (resolved.status === "dispatched" || resolved.status === "queued" || resolved.status === "running") {
      return { kind: "refused", reason: `smoke run \`${resolved.id}\` is already under way for this PR${resolved.runUrl ? ` (${resolved.runUrl})` : ""}` };
    }
  }
  return requestSmoke(ask, deps);
}

/** The periodic sweep: every `requested` request older than STUCK_AFTER_MS, resolved. */
export async function sweepStuck(
  octokitFor: (installationId: number) => Promise<Octokit>,
  repoFor: (octokit: Octokit, request: SmokeRequest) => Promise<{ ref: RepoRef; workflow: string }>,
  deps: SmokeDeps,
): Promise<number> {
  const now = (deps.now ?? (() => new Date()))().getTime();
  const repos = await deps.store.listSmokeRepos();
  const stuck = (await deps.store.listSmokeRequests({ repos, status: "requested", limit: 200 })).filter((q) => now - q.createdAt.getTime() >= STUCK_AFTER_MS && q.installationId !== null);
  for (const request of stuck) {
    const octokit = await octokitFor(request.installationId!);
    const { ref, workflow } = await repoFor(octokit, request);
    await resolveStuck(octokit, ref, workflow, request, deps);
  }
  return stuck.length;
}
