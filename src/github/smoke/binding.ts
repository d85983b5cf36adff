// Which workflow run belongs to a smoke request when GitHub did not say (a dispatch without
// `return_run_details`). A run-name is anybody's to write, and any writer may dispatch the
// smoke workflow by hand with inputs of their choice, so a title alone binds nothing. A run is
// the request's only when GitHub itself says all of this about it:
// - a `workflow_dispatch` of the smoke workflow file, on the default branch, at the commit the
//   bot dispatched against (recorded in the check run's external_id before the dispatch);
// - started by the app (`triggering_actor` is the bot's login), not by a person;
// - its job carries the dispatched inputs: templates/hcp-smoke.yml names the job
//   `hcp smoke <request_id> <sha>`, and the jobs API shows that name.
import type { BotOctokit } from "../host.ts";
import type { SmokeRequest } from "../../store/types.ts";

type Octokit = BotOctokit;

/** The check run's external_id: the request id, and the default branch's commit the dispatch ran against. */
export function externalId(requestId: string, workflowSha: string | null): string {
  return workflowSha ? `${requestId} ${workflowSha}` : requestId;
}

function workflowShaOf(externalIdText: string | null | undefined): string | null {
  const sha = (externalIdText ?? "").split(" ")[1];
  return sha && /^[0-9a-f]{40}$/.test(sha) ? sha : null;
}

/** The default branch's head right before a dispatch (the commit GitHub runs the workflow file from). */
export async function defaultBranchSha(octokit: Octokit, r: { owner: string; repo: string; defaultBranch: string }): Promise<string | null> {
  try {
    const { data } = await octokit.rest.git.getRef({ owner: r.owner, repo: r.repo, ref: `heads/${r.defaultBranch}` });
    return data.object.sha;
  } catch {
    return null; // unknown: no run can then be bound by its title (the run id from the dispatch still binds)
  }
}

/** templates/hcp-smoke.yml: `name: "hcp smoke ${{ inputs.request_id }} ${{ inputs.sha }}"`. */
export function smokeJobName(request: Pick<SmokeRequest, "id" | "sha">): string {
  return `hcp smoke ${request.id} ${request.sha}`;
}

export interface BindContext {
  owner: string;
  repo: string;
  defaultBranch: string;
  /** The smoke workflow's file name (`hcp-smoke.yml`). */
  workflow: string;
  /** The app's login, `slug[bot]`. */
  botLogin: string;
}

/** Null when the run is the request's by GitHub's own facts; otherwise why not. */
export async function whyNotOurRun(octokit: Octokit, c: BindContext, request: SmokeRequest, runId: number): Promise<string | null> {
  const { data: run } = await octokit.rest.actions.getWorkflowRun({ owner: c.owner, repo: c.repo, run_id: runId });
  if (run.event !== "workflow_dispatch") return `started by ${run.event}, not by a dispatch`;
  if (run.head_branch !== c.defaultBranch) return `dispatched on ${run.head_branch ?? "no branch"}, not on ${c.defaultBranch}`;
  if (run.path.replace(/@[^@]*$/, "") !== `.github/workflows/${c.workflow}`) return `a run of ${run.path}, not of the smoke workflow`;
  const actor = run.triggering_actor?.login ?? run.actor?.login;
  if (actor !== c.botLogin) return `started by ${actor ?? "nobody known"}, not by ${c.botLogin}`;
  const workflowSha = request.checkRunId
    ? workflowShaOf((await octokit.rest.checks.get({ owner: c.owner, repo: c.repo, check_run_id: request.checkRunId })).data.external_id)
    : null;
  if (!workflowSha || run.head_sha !== workflowSha) return `its workflow comes from ${run.head_sha.slice(0, 12)}, not from the commit the bot dispatched against`;
  const { data: jobs } = await octokit.rest.actions.listJobsForWorkflowRun({ owner: c.owner, repo: c.repo, run_id: runId, per_page: 100 });
  if (!jobs.jobs.some((j) => j.name === smokeJobName(request))) return "its job does not carry this request's id and commit";
  return null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Finds the run a dispatch created (when GitHub returned no id): by the request id in its
 * run-name, then only if GitHub's facts about it say it is ours (whyNotOurRun above).
 */
export async function findRun(octokit: Octokit, c: BindContext, request: SmokeRequest, lookup: { attempts: number; delayMs: number }) {
  for (let attempt = 0; attempt < lookup.attempts; attempt++) {
    const { data } = await octokit.rest.actions.listWorkflowRuns({ owner: c.owner, repo: c.repo, workflow_id: c.workflow, event: "workflow_dispatch", branch: c.defaultBranch, per_page: 30 });
    for (const run of data.workflow_runs.filter((w) => (w.display_title ?? w.name ?? "").includes(request.id))) {
      if ((await whyNotOurRun(octokit, c, request, run.id)) === null) return { id: run.id, url: run.html_url };
    }
    await sleep(lookup.delayMs);
  }
  return undefined;
}
