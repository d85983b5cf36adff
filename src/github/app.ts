// The GitHub App's behaviour: which events start a review. Written against Probot's
// context so it runs behind any Probot server (ours, a serverless adapter, tests).
import type { ApplicationFunction, Context, Probot, ProbotOctokit } from "probot";
import type { Language } from "web-tree-sitter";
import { CHECK_NAME } from "../core/review/plan.ts";
import { KeyedQueue } from "./queue.ts";
import { reviewPullRequest, type PullTarget, type ReviewDeps } from "./review.ts";

export interface AppDeps {
  python: () => Promise<Language>;
  /** Fixed bot login (`slug[bot]`); looked up once through GET /app when absent. */
  botLogin?: string;
  /** Called after each review, for tests and metrics. */
  onReviewed?: (outcome: Awaited<ReturnType<typeof reviewPullRequest>>) => void;
  /** Background work; the server exposes its idle() for graceful shutdown and tests. */
  queue?: KeyedQueue;
}

/** Remembers recent delivery ids so a redelivered webhook does no work twice. */
export class DeliveryLog {
  private readonly ids = new Set<string>();
  constructor(private readonly capacity = 10_000) {}

  /** False when the id was seen; otherwise records it. */
  claim(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value!);
    return true;
  }

  release(id: string): void {
    this.ids.delete(id);
  }
}

function loginResolver(app: Probot, fixed: string | undefined): (octokit: ProbotOctokit) => Promise<string> {
  let cached: Promise<string> | undefined = fixed ? Promise.resolve(fixed) : undefined;
  return async () => {
    cached ??= (async () => {
      const appOctokit = await app.auth();
      const { data } = await appOctokit.rest.apps.getAuthenticated();
      return `${data?.slug ?? "hcp-bot"}[bot]`;
    })().catch((error: unknown) => {
      cached = undefined;
      throw error;
    });
    return cached;
  };
}

const PR_EVENTS = ["pull_request.opened", "pull_request.synchronize", "pull_request.reopened", "pull_request.ready_for_review"] as const;

export function createApp(deps: AppDeps): ApplicationFunction {
  return (app: Probot) => {
    const deliveries = new DeliveryLog();
    const queue = deps.queue ?? new KeyedQueue(4, app.log);
    const reviewDeps: ReviewDeps = { python: deps.python, botLogin: loginResolver(app, deps.botLogin), log: app.log };

    /** Answers the webhook at once; the work runs in the background, one job at a time per PR. */
    function once(context: Context, key: string, work: () => Promise<void>): void {
      if (!deliveries.claim(context.id)) {
        app.log.info({ delivery: context.id }, "delivery already handled; ignoring the redelivery");
        return;
      }
      void queue.enqueue(key, async () => {
        try {
          await work();
        } catch (error) {
          deliveries.release(context.id); // a failed delivery may be redelivered and must run then
          throw error;
        }
      });
    }

    function prKey(repository: { owner: { login: string }; name: string }, number: number): string {
      return `${repository.owner.login}/${repository.name}#${number}`;
    }

    async function review(context: Context, target: PullTarget): Promise<void> {
      const outcome = await reviewPullRequest(context.octokit, target, reviewDeps);
      deps.onReviewed?.(outcome);
    }

    app.on([...PR_EVENTS], async (context) => {
      const { pull_request: pr, repository } = context.payload;
      once(context, prKey(repository, pr.number), () =>
        review(context, {
          owner: repository.owner.login,
          repo: repository.name,
          number: pr.number,
          headSha: pr.head.sha,
          draft: pr.draft ?? false,
          defaultBranch: repository.default_branch,
          htmlUrl: pr.html_url,
          opened: context.payload.action === "opened",
        }),
      );
    });

    app.on("check_run.rerequested", async (context) => {
      const { check_run: run, repository } = context.payload;
      if (run.name !== CHECK_NAME) return;
      once(context, prKey(repository, run.pull_requests[0]?.number ?? 0), async () => {
        for (const ref of run.pull_requests) {
          const { data: pr } = await context.octokit.rest.pulls.get({ owner: repository.owner.login, repo: repository.name, pull_number: ref.number });
          if (pr.head.sha !== run.head_sha || pr.state !== "open") continue;
          await review(context, {
            owner: repository.owner.login,
            repo: repository.name,
            number: pr.number,
            headSha: pr.head.sha,
            draft: pr.draft ?? false,
            defaultBranch: repository.default_branch,
            htmlUrl: pr.html_url,
          });
        }
      });
    });
  };
}
