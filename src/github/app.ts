// The GitHub App's handlers: which events start a review, which comments are commands (answered
// by src/github/comments.ts), which go to the smoke service (src/github/smoke/: the check run's
// button, the workflow events that finish a smoke run). Written against a small host interface
// (src/github/host.ts) that Probot satisfies on Node and an @octokit/app adapter on edge
// runtimes, so the same handlers run on both.
import type { Analyzer } from "../core/analyze/analyzer.ts";
import type { AdviseReplies } from "../core/render/layout/advice.ts";
import type { AppHost, BotOctokit, HostLog } from "./host.ts";
import { KeyedQueue } from "./queue.ts";
import { reportReviewNotDone, reviewPullRequest, type PullTarget, type ReviewDeps } from "./review.ts";
import { ROUTES } from "./routes.ts";
import { commentCommands } from "./comments.ts";
import { createSmokeService, type RepoRef, type SmokeService } from "./smoke/index.ts";
import type { Store } from "../store/types.ts";

export interface AppDeps {
  /** The analysis (src/core/analyze/analyzer.ts): in this thread, or on the Node server's worker thread. */
  analyze: Analyzer;
  /** Fixed bot login (`slug[bot]`); looked up once through GET /app when absent. */
  botLogin?: string;
  /** Called after each review, for tests and metrics. */
  onReviewed?: (outcome: Awaited<ReturnType<typeof reviewPullRequest>>) => void;
  /**
   * Runs each delivery's work after the answer. Default: in this process, a redelivery
   * ignored, one job at a time per PR (the Node server). Edge hosts make it durable.
   */
  runner?: WorkRunner;
  /** Idempotency keys, smoke requests, audit log. */
  store: Store;
  /** Registers the periodic sweep for queue timeouts; the server owns the timer. */
  schedule?: (sweep: () => Promise<void>) => void;
  /**
   * The smoke service (src/github/smoke/), made once by the host and handed to Slack too.
   * Default: one of its own over this host's GitHub access (tests that need no other front door).
   */
  smoke?: SmokeService;
  /** Renders `/hcp advise` replies: in this thread by default, on a worker thread on the Node server. */
  advise?: AdviseReplies;
}

/**
 * How the host runs the work a delivery asks for. The app calls `run` at most once per
 * delivery, from inside its handler, with the key that orders work (a PR, a workflow run).
 */
export interface WorkRunner {
  /**
   * A durable runner records the delivery before the answer (so the handler awaits this, and
   * a rejection, such as a store that is down, fails the delivery for GitHub to redeliver).
   */
  run(context: RunnerContext, key: string, work: () => Promise<void>): void | Promise<void>;
  /**
   * Who holds the claims this delivery's work makes: a durable job, so that the same job,
   * run again after an interruption, may take them again. Undefined: nobody in particular.
   */
  claimOwner?(context: RunnerContext): string | undefined;
}

/** What a runner sees of a delivery: enough to record it and receive it again. */
export interface RunnerContext {
  id: string;
  name: string;
  payload: unknown;
}

/** An in-process runner (a single process that may lose queued work on a crash): a redelivery ignored, one job at a time per key. */
export function inProcessRunner(queue: KeyedQueue, log: HostLog): WorkRunner {
  const deliveries = new DeliveryLog();
  return {
    run(context, key, work) {
      if (!deliveries.claim(context.id)) {
        log.info({ delivery: context.id }, "delivery already handled; ignoring the redelivery");
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
    },
  };
}

// A comment id (or a button's delivery id) is claimed for a month: long enough that no
// redelivery can dispatch twice.
const COMMENT_CLAIM_SECONDS = 30 * 24 * 60 * 60;

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

/** What a review needs to know about a pull request, from a webhook's or the API's PR object. */
function pullTarget(
  repository: { owner: { login: string }; name: string; default_branch: string },
  pr: { number: number; head: { sha: string }; draft?: boolean | null; html_url: string },
): PullTarget {
  return {
    owner: repository.owner.login,
    repo: repository.name,
    number: pr.number,
    headSha: pr.head.sha,
    draft: pr.draft ?? false,
    defaultBranch: repository.default_branch,
    htmlUrl: pr.html_url,
  };
}

/**
 * A review that GitHub kept failing leaves a check run saying so (best effort: one try), then
 * fails, so the delivery is released: a redelivery, the next push or the check's Re-run runs it.
 */
function reviewer(reviewDeps: ReviewDeps, onReviewed: AppDeps["onReviewed"]): (octokit: BotOctokit, target: PullTarget) => Promise<void> {
  return async (octokit, target) => {
    let outcome: Awaited<ReturnType<typeof reviewPullRequest>>;
    try {
      outcome = await reviewPullRequest(octokit, target, reviewDeps);
    } catch (error) {
      await reportReviewNotDone(octokit, target, error, reviewDeps.log);
      throw error;
    }
    onReviewed?.(outcome);
  };
}

export function createApp(deps: AppDeps): (app: AppHost) => void {
  return (app: AppHost) => {
    const runner = deps.runner ?? inProcessRunner(new KeyedQueue(4, app.log), app.log);
    const smoke = deps.smoke ?? createSmokeService({ store: deps.store, analyze: deps.analyze, github: app, log: app.log, ...(deps.botLogin ? { botLogin: deps.botLogin } : {}) });
    const reviewDeps: ReviewDeps = { analyze: deps.analyze, botLogin: (octokit) => smoke.botLogin(octokit), log: app.log };

    /** The work runs after the answer, one job at a time per PR; a durable runner records it first. */
    async function once(context: RunnerContext, key: string, work: () => Promise<void>): Promise<void> {
      await runner.run(context, key, work);
    }

    /**
     * Runs work that may start a GPU run at most once per key, across redeliveries and restarts.
     * When it fails (GitHub down mid-way) the key is given up, so GitHub's redelivery or the
     * user's retry runs it; a run already dispatched is then found by the one-run-per-PR rule.
     */
    async function claimed(context: RunnerContext, key: string, work: () => Promise<void>): Promise<void> {
      const owner = runner.claimOwner?.(context);
      if (!(await deps.store.claim(key, COMMENT_CLAIM_SECONDS, owner))) return;
      try {
        await work();
      } catch (error) {
        await deps.store.release(key).catch((e: unknown) => app.log.warn({ err: e, key }, "could not release a claim"));
        throw error;
      }
    }

    const review = reviewer(reviewDeps, deps.onReviewed);
    const comments = commentCommands({ smoke, store: deps.store, analyze: deps.analyze, review, ...(deps.advise ? { advise: deps.advise } : {}) });

    // Each handler's key (and whether it acts at all) comes from src/github/routes.ts, which an
    // edge host also routes deliveries with before loading this module.
    app.on([...ROUTES.review.events], async (context) => {
      const key = ROUTES.review.key(context.payload);
      if (key === undefined) return;
      const { pull_request: pr, repository } = context.payload;
      await once(context, key, () => review(context.octokit, { ...pullTarget(repository, pr), opened: context.payload.action === "opened" }));
    });

    app.on([...ROUTES.rerequest.events], async (context) => {
      const key = ROUTES.rerequest.key(context.payload);
      if (key === undefined) return;
      const { check_run: run, repository } = context.payload;
      await once(context, key, async () => {
        for (const ref of run.pull_requests) {
          const { data: pr } = await context.octokit.rest.pulls.get({ owner: repository.owner.login, repo: repository.name, pull_number: ref.number });
          if (pr.head.sha !== run.head_sha || pr.state !== "open") continue;
          await review(context.octokit, pullTarget(repository, pr));
        }
      });
    });

    app.on([...ROUTES.comment.events], async (context) => {
      const key = ROUTES.comment.key(context.payload);
      if (key === undefined) return;
      const { comment, issue, repository, sender } = context.payload;
      const r: RepoRef = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch, installationId: context.payload.installation!.id };
      await once(context, key, async () => {
        await claimed(context, `comment:${comment.id}`, () =>
          comments.run({ octokit: context.octokit, deliveryId: context.id, ref: r, pr: issue.number, requester: { login: sender.login, isBot: false }, comment: { id: comment.id, createdAt: new Date(comment.created_at) }, body: comment.body }),
        );
      });
    });

    app.on([...ROUTES.button.events], async (context) => {
      const key = ROUTES.button.key(context.payload);
      if (key === undefined) return;
      const { check_run: run, repository, sender } = context.payload;
      const pr = run.pull_requests[0]!;
      const r: RepoRef = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch, installationId: context.payload.installation!.id };
      await once(context, key, () => claimed(context, `delivery:${context.id}`, () => smoke.button({ octokit: context.octokit, ref: r, pr: pr.number, login: sender.login, deliveryId: context.id })));
    });

    app.on([...ROUTES.run.events], async (context) => {
      const key = ROUTES.run.key(context.payload)!;
      const { workflow_run: run, repository } = context.payload;
      await once(context, key, () => smoke.followRun(context.octokit, repository, run));
    });

    app.on([...ROUTES.job.events], async (context) => {
      const key = ROUTES.job.key(context.payload)!;
      const { workflow_job: job, repository } = context.payload;
      await once(context, key, () => smoke.followJob(context.octokit, repository, job));
    });

    deps.schedule?.(() => smoke.sweep());
  };
}
