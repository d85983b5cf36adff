// The REST endpoints the bot calls, under the names @octokit/plugin-rest-endpoint-methods
// gives them. The table is the type of `octokit.rest` (src/github/host.ts), so calling an
// endpoint that is not listed here fails the typecheck, on every host. Node's Probot Octokit
// carries the whole plugin; the edge builds `rest` from this table instead (restFromTable):
// the plugin's table of ~1,000 routes is a sixth of the worker's JavaScript, and workerd
// compiles all of it at every cold start. test/github/rest.test.ts checks each route
// against the plugin's own.
import type { Octokit as CoreOctokit } from "@octokit/core";
import type { Api } from "@octokit/plugin-rest-endpoint-methods";

export const REST_ROUTES = {
  actions: {
    cancelWorkflowRun: "POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel",
    downloadArtifact: "GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}",
    getWorkflowRun: "GET /repos/{owner}/{repo}/actions/runs/{run_id}",
    listJobsForWorkflowRun: "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
    listWorkflowRunArtifacts: "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts",
    listWorkflowRuns: "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
  },
  apps: {
    getAuthenticated: "GET /app",
    getRepoInstallation: "GET /repos/{owner}/{repo}/installation",
  },
  checks: {
    create: "POST /repos/{owner}/{repo}/check-runs",
    get: "GET /repos/{owner}/{repo}/check-runs/{check_run_id}",
    listForRef: "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
    update: "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
  },
  git: {
    getRef: "GET /repos/{owner}/{repo}/git/ref/{ref}",
    getTree: "GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
  },
  issues: {
    createComment: "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    listComments: "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
    updateComment: "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
  },
  pulls: {
    createReview: "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
    get: "GET /repos/{owner}/{repo}/pulls/{pull_number}",
    listFiles: "GET /repos/{owner}/{repo}/pulls/{pull_number}/files",
    listReviewComments: "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments",
    listReviews: "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  },
  reactions: {
    createForIssueComment: "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
  },
  repos: {
    get: "GET /repos/{owner}/{repo}",
    getCollaboratorPermissionLevel: "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
    getContent: "GET /repos/{owner}/{repo}/contents/{path}",
  },
} as const;

type Routes = typeof REST_ROUTES;
type PluginRest = Api["rest"];

/** `octokit.rest` as the bot uses it: the plugin's own method types, for the listed endpoints only. */
export type BotRest = { [S in keyof Routes & keyof PluginRest]: Pick<PluginRest[S], keyof Routes[S] & keyof PluginRest[S]> };

/** `octokit.rest` from the table: each method is `octokit.request` with its route bound (so `paginate` takes it too). */
export function restFromTable(octokit: Pick<CoreOctokit, "request">): { rest: BotRest } {
  const rest: Record<string, Record<string, unknown>> = {};
  for (const [scope, methods] of Object.entries(REST_ROUTES)) {
    rest[scope] = {};
    for (const [name, route] of Object.entries(methods)) {
      const [method, url] = route.split(" ");
      rest[scope]![name] = octokit.request.defaults({ method, url });
    }
  }
  return { rest: rest as BotRest };
}
