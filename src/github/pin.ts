// Which commit a `/hcp smoke` comment asked for. The maintainer reviewed the PR as it was when
// they wrote the comment; a fork may push between that moment and the bot's handling. So the
// head the bot sees is run only when nothing was pushed to the PR's branch since the comment
// was created, by GitHub's own clock: the repository activity API's push times (git commit
// dates are written by whoever pushes, so they prove nothing). When that history cannot be
// read, or shows a push at or after the comment, the command must name the commit
// (`sha=abc1234`), and a named commit runs only when it is the head.
import type { BotOctokit } from "./host.ts";

type Octokit = BotOctokit;

export type Pinned = { ok: true; sha: string } | { ok: false; reason: string };

interface PullHead {
  sha: string;
  ref: string;
  /** "owner/name" of the repository the head branch lives in (a fork's, or the base). */
  repo: string;
}

/** Pushes to the head branch at or after `since`; undefined when GitHub would not say. */
async function pushesSince(octokit: Octokit, head: PullHead, since: Date): Promise<number | undefined> {
  const [owner, repo] = head.repo.split("/") as [string, string];
  try {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/activity", { owner, repo, ref: `refs/heads/${head.ref}`, direction: "desc", per_page: 100 });
    // Second precision on both sides: a push in the comment's own second counts as after it.
    return data.filter((a) => Date.parse(a.timestamp) >= Math.floor(since.getTime() / 1000) * 1000 && a.activity_type !== "branch_deletion").length;
  } catch {
    return undefined;
  }
}

/**
 * The SHA to run: the named one when it is the head (a short SHA only as a prefix of it), else
 * the head when it has not moved since `since` (the comment's creation; absent for requests
 * made now, from Slack or a button).
 */
export async function pinHead(octokit: Octokit, head: PullHead, named: string | undefined, since: Date | undefined): Promise<Pinned> {
  const short = head.sha.slice(0, 12);
  if (named) {
    if (named.length === 40 ? named === head.sha : head.sha.startsWith(named)) return { ok: true, sha: head.sha };
    return { ok: false, reason: `sha=${named} is not this PR's head commit (${short}); name the head, or leave sha= out` };
  }
  if (!since) return { ok: true, sha: head.sha };
  const pushes = await pushesSince(octokit, head, since);
  if (pushes === 0) return { ok: true, sha: head.sha };
  const why = pushes === undefined ? `GitHub could not show whether ${head.repo}'s branch ${head.ref} moved after your comment` : "the PR's branch was pushed to after your comment";
  return { ok: false, reason: `${why}, so the commit you reviewed is not known; if ${short} is the one, ask again with \`/hcp smoke sha=${head.sha.slice(0, 7)}\`` };
}
