// The `/hcp` lines of a PR comment: parsed with the repository's own override keys, then each
// answered in the thread. `/hcp smoke`, `/hcp cancel` and `/hcp status` are the smoke
// service's (src/github/smoke/); help, advise and check are answered here.
import type { Analyzer } from "../core/analyze/analyzer.ts";
import { checkSource, helpText, parseCommentCommands, type Command } from "../core/commands/index.ts";
import type { RepoConfig } from "../core/config/repo-config.ts";
import { inThreadAdvise, type AdviseReplies } from "../core/render/layout/advice.ts";
import { findingsTable, untrusted } from "../core/render/markdown.ts";
import type { Store } from "../store/types.ts";
import type { BotOctokit } from "./host.ts";
import { adviseBudget } from "./refusals.ts";
import { readRepoConfig, type PullTarget } from "./review.ts";
import { smokeReply, type RepoRef, type Requester, type SmokeService } from "./smoke/index.ts";
import { replier } from "./writes.ts";

export interface CommentCommandDeps {
  smoke: SmokeService;
  store: Store;
  analyze: Analyzer;
  /** `/hcp check` with no input reviews the PR as a push would. */
  review(octokit: BotOctokit, target: PullTarget): Promise<void>;
  /** Renders `/hcp advise` replies: in this thread by default, on a worker thread on the Node server. */
  advise?: AdviseReplies;
}

/** One PR comment with `/hcp` lines, as its delivery brings it. */
export interface CommentDelivery {
  octokit: BotOctokit;
  deliveryId: string;
  ref: RepoRef;
  pr: number;
  requester: Requester;
  comment: { id: number; createdAt: Date };
  body: string;
}

type Say = (text: string) => Promise<unknown>;

export function commentCommands(deps: CommentCommandDeps): { run(delivery: CommentDelivery): Promise<void> } {
  async function run(c: CommentDelivery): Promise<void> {
    const say = replier(c.octokit, c.ref, c.pr, `comment:${c.comment.id}`, () => deps.smoke.botLogin(c.octokit));
    const configResult = await readRepoConfig(c.octokit, c.ref);
    if (!configResult.ok) {
      await say(`hcp-bot cannot act on commands here: ${untrusted(configResult.problem)}`);
      return;
    }
    const config = configResult.config;
    for (const parsed of parseCommentCommands(c.body, { allowedKeys: config.smoke.allowed_keys })) {
      if (!parsed.ok) {
        await say(`@${untrusted(c.requester.login)} line ${parsed.line}: ${untrusted(parsed.error)}`);
        continue;
      }
      await runCommand(c, config, parsed.command, say);
    }
  }

  async function runCommand(c: CommentDelivery, config: RepoConfig, command: Command, say: Say): Promise<void> {
    const { octokit, ref: r, pr, requester } = c;
    switch (command.kind) {
      case "help":
        await say(helpText({ surface: "github", smoke: config.smoke }));
        return;
      case "advise":
        // Anyone who may comment may ask (nothing is read or run), within ADVISE_LIMITS; past them, silence.
        if (!(await adviseBudget(deps.store, { installationId: r.installationId, login: requester.login, repo: `${r.owner}/${r.repo}`, pr }))) return;
        await say(await (deps.advise ?? inThreadAdvise).markdown(command));
        return;
      case "smoke": {
        const origin = { source: "github-comment", deliveryId: c.deliveryId, commentId: c.comment.id, commentCreatedAt: c.comment.createdAt } as const;
        const text = smokeReply(await deps.smoke.request({ octokit, repo: r, config, pr, requester, command, origin }), requester.login);
        if (text) await say(text);
        return;
      }
      case "cancel": {
        const text = await deps.smoke.cancel({ octokit, repo: r, config, pr, requester });
        if (text) await say(text); // empty: a refusal past REFUSAL_LIMITS
        return;
      }
      case "status":
        await say(await deps.smoke.statusReply(octokit, r, config, pr));
        return;
      case "check":
        return check(c, config, command, say);
    }
  }

  async function check(c: CommentDelivery, config: RepoConfig, command: Command & { kind: "check" }, say: Say): Promise<void> {
    const { octokit, ref: r } = c;
    if (command.input.form === "pr") {
      const { data } = await octokit.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number: c.pr });
      await deps.review(octokit, { owner: r.owner, repo: r.repo, number: data.number, headSha: data.head.sha, draft: data.draft ?? false, defaultBranch: r.defaultBranch, htmlUrl: data.html_url });
      return;
    }
    const source = checkSource(command.input);
    if (!source) return;
    const report = await deps.analyze([source], { gpusPerNode: config.gpus_per_node });
    await say(
      report.findings.length
        ? `hcp-bot checked that configuration:\n\n${findingsTable(report.findings)}`
        : "hcp-bot checked that configuration: no HCP problems found (settings the recipe itself sets were not visible to this check).",
    );
  }

  return { run };
}
