// A smoke request's story: the PR comment that follows it (posted once, then edited), the
// replies to refused and dry-run requests, GitHub's `/hcp status` line, and the listeners
// (Slack, the metrics) told of every state change.
import { findingsTable, untrusted } from "../../core/render/markdown.ts";
import { planMarkdown, planOfRequest, smokeCommentBody, smokeMarker, type SmokeState, type SmokeView } from "../../core/render/smoke.ts";
import type { SmokeRequest } from "../../store/types.ts";
import type { BotOctokit } from "../host.ts";
import { commentOnce } from "../writes.ts";
import type { RepoRef, SmokeDeps, SmokeOutcome } from "./types.ts";

type Octokit = BotOctokit;

export function view(request: SmokeRequest, plan?: SmokeView["plan"]): SmokeView {
  return {
    requestId: request.id,
    requester: request.githubLogin,
    sha: request.sha,
    plan: plan ?? planOfRequest(request),
    runUrl: request.runUrl,
  };
}

/** The request's story comment, posted once (found again by its marker after an ambiguous failure). */
export async function reply(octokit: Octokit, r: RepoRef, pr: number, body: string, requestId: string, deps: SmokeDeps): Promise<number> {
  return commentOnce(octokit, r, pr, body, smokeMarker(requestId), await botLoginOf(octokit, deps));
}

export async function botLoginOf(octokit: Octokit, deps: SmokeDeps): Promise<string> {
  return deps.botLogin ? deps.botLogin(octokit) : "hcp-bot[bot]";
}

/** Text for a refused or dry-run smoke request, as a PR reply. */
export function smokeReply(outcome: SmokeOutcome, requester: string): string | undefined {
  switch (outcome.kind) {
    case "refused": {
      if (outcome.silent) return undefined;
      const table = outcome.findings?.length ? `\n\n${findingsTable(outcome.findings)}\n\nFix these (\`hcp-bot explain RULE\` documents each rule) or change the overrides, then ask again.` : "";
      return `@${untrusted(requester)} no smoke run: ${untrusted(outcome.reason)}.${table}`;
    }
    case "dry-run":
      return `**Dry run**: this is what \`/hcp smoke\` would start (nothing was dispatched).\n\n${planMarkdown({ requestId: "dry-run", requester, sha: outcome.sha, plan: outcome.plan })}${outcome.workflowNote ? `\n\n${outcome.workflowNote}` : ""}`;
    case "failed":
      return outcome.request ? undefined : `No smoke run: ${untrusted(outcome.reason)}`;
    case "dispatched":
      return undefined;
  }
}

/** Posts a request's story comment (once, by its marker) and tells Slack; for a request the sweep bound to its run. */
export async function postStory(octokit: Octokit, r: RepoRef, request: SmokeRequest, state: SmokeState, deps: SmokeDeps): Promise<SmokeRequest> {
  const commentId = await reply(octokit, r, request.pr, smokeCommentBody({ ...view(request), runUrl: request.runUrl }, state), request.id, deps);
  const updated = await deps.store.updateSmokeRequest(request.id, { commentId });
  await tell(updated.ok ? updated.request : request, state, deps);
  return updated.ok ? updated.request : request;
}

export async function updateStory(octokit: Octokit, r: { owner: string; repo: string }, request: SmokeRequest, state: SmokeState, deps: SmokeDeps): Promise<void> {
  if (request.commentId) {
    await octokit.rest.issues.updateComment({ owner: r.owner, repo: r.repo, comment_id: request.commentId, body: smokeCommentBody(view(request), state) });
  }
  await tell(request, state, deps);
}

/** Tells every listener, in order; one that fails is logged and the next is still told. */
export async function tell(request: SmokeRequest, state: SmokeState, deps: SmokeDeps): Promise<void> {
  for (const listener of deps.notify ?? []) {
    try {
      await listener(request, state);
    } catch (error) {
      deps.log.warn({ err: error, request: request.id }, "notifying about a smoke run failed; GitHub is up to date");
    }
  }
}

/** `/hcp status` on GitHub: the latest smoke request of this PR. */
export function statusText(latest: SmokeRequest | undefined): string {
  if (!latest) return "No smoke run has been requested for this PR.";
  const verdict = latest.verdictStatus ? `, verdict **${latest.verdictStatus}**${latest.verdictSummary ? `: ${untrusted(latest.verdictSummary)}` : ""}` : "";
  return `Latest smoke request \`${latest.id}\` by @${untrusted(latest.githubLogin)} on \`${latest.sha.slice(0, 12)}\`: **${latest.status}**${verdict}${latest.runUrl ? ` ([run](${latest.runUrl}))` : ""}.`;
}
