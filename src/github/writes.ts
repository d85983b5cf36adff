// Writes that create something on GitHub, made at most once. After an answer that leaves it
// open whether GitHub did the work (a 5xx, a dropped connection), the bot looks for the thing
// first (a comment by its marker, a check run by its external_id, a run by its run-name) and
// only sends the request again when it is not there. The retry plugin never repeats these
// requests blindly (octokit.ts).
import type { BotOctokit } from "./host.ts";
import { isAmbiguousFailure } from "./failures.ts";

type Octokit = BotOctokit;

/** How many times a creating request is sent in all, each after a look that found nothing. */
const SENDS = 3;

/**
 * `create`, or after an ambiguous failure whatever `find` finds; when it finds nothing,
 * GitHub did not do it and `create` is sent again (at most SENDS times in all).
 */
export async function createOnce<T>(create: () => Promise<T>, find: () => Promise<T | undefined>): Promise<T> {
  for (let sent = 1; ; sent++) {
    try {
      return await create();
    } catch (error) {
      if (!isAmbiguousFailure(error) || sent >= SENDS) throw error;
      const found = await find().catch(() => undefined);
      if (found !== undefined) return found;
    }
  }
}

/** A hidden line that lets the bot find its own reply again. */
export function replyMarker(key: string): string {
  return `<!-- hcp-bot:reply ${key.replace(/[^A-Za-z0-9:._-]/g, "_")} -->`;
}

/**
 * Posts a PR comment whose body holds `marker` once: after an ambiguous failure the bot's
 * recent comments are searched for the marker (its own only: anybody can copy a marker).
 */
export async function commentOnce(octokit: Octokit, r: { owner: string; repo: string }, pr: number, body: string, marker: string, botLogin: string): Promise<number> {
  const since = new Date(Date.now() - 10 * 60_000).toISOString();
  return createOnce(
    async () => (await octokit.rest.issues.createComment({ owner: r.owner, repo: r.repo, issue_number: pr, body: body.includes(marker) ? body : `${body}\n\n${marker}` })).data.id,
    async () => {
      const { data } = await octokit.rest.issues.listComments({ owner: r.owner, repo: r.repo, issue_number: pr, since, per_page: 100 });
      return data.find((c) => c.user?.login === botLogin && (c.body ?? "").includes(marker))?.id;
    },
  );
}

/**
 * Replies to a PR for one triggering event (`key`: the comment or delivery it answers), each
 * reply posted once: the n-th reply carries the marker `key:n`.
 */
export function replier(octokit: Octokit, r: { owner: string; repo: string }, pr: number, key: string, botLogin: () => Promise<string>): (text: string) => Promise<number> {
  let n = 0;
  return async (text) => commentOnce(octokit, r, pr, text, replyMarker(`${key}:${++n}`), await botLogin());
}
