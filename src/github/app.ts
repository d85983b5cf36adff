// The GitHub App's handlers, one per route of src/github/routes.ts: which events start a
// review, which comments are commands (answered by src/github/comments.ts), which go to the
// smoke service (src/github/smoke/: the check run's button, the workflow events that finish a
// smoke run). Written against a small host interface (src/github/host.ts) that Probot
// satisfies on Node and an @octokit/app adapter on edge runtimes, so the same handlers run on
// both. A delivery's work runs in the durable job the intake wrote (src/github/intake.ts,
// handlers.ts).
import type { Analyzer } from "../core/analyze/analyzer.ts";
import type { AdviseReplies } from "../core/render/layout/advice.ts";
import type { Job, Store } from "../store/types.ts";
import type { JobLease } from "../jobs/fence.ts";
import type { AppHost, BotOctokit } from "./host.ts";
import { deliveryRunner, type DeliveryJob, type HandlerTable } from "./handlers.ts";
import { reportReviewNotDone, reviewPullRequest, type PullTarget, type ReviewDeps } from "./review.ts";
import { commentCommands } from "./comments.ts";
import { createSmokeService, type RepoRef, type SmokeService } from "./smoke/index.ts";

export interface AppDeps {
  /** The analysis (src/core/analyze/analyzer.ts): in this thread, or on the Node server's worker thread. */
  analyze: Analyzer;
  /** Fixed bot login (`slug[bot]`); looked up once through GET /app when absent. */
  botLogin?: string;
  /** Called after each review, for tests and metrics. */
  onReviewed?: (outcome: Awaited<ReturnType<typeof reviewPullRequest>>) => void;
  /** Idempotency keys, smoke requests, audit log. */
  store: Store;
  /**
   * The smoke service (src/github/smoke/), made once by the host and handed to Slack too.
   * Default: one of its own over this host's GitHub access (tests that need no other front door).
   */
  smoke?: SmokeService;
  /** Renders `/hcp advise` replies: in this thread by default, on a worker thread on the Node server. */
  advise?: AdviseReplies;
}

/** The app as a host runs it. */
export interface GitHubApp {
  /** Runs a delivery's job (kind `github`): the handler of the route its intake recorded. */
  runDelivery(job: Pick<Job, "id" | "payload">, lease: JobLease): Promise<void>;
  /** The periodic sweep of queued smoke runs (queue timeouts, requests a crash left half-made); the host owns the timer. */
  sweep(): Promise<void>;
}

// A comment id (or a button's delivery id) is claimed for a month: long enough that no
// redelivery can dispatch twice.
const COMMENT_CLAIM_SECONDS = 30 * 24 * 60 * 60;

export function createApp(deps: AppDeps, host: AppHost): GitHubApp {
  const smoke = deps.smoke ?? createSmokeService({ store: deps.store, analyze: deps.analyze, github: host, log: host.log, ...(deps.botLogin ? { botLogin: deps.botLogin } : {}) });
  const reviewDeps: ReviewDeps = { analyze: deps.analyze, botLogin: (octokit) => smoke.botLogin(octokit), log: host.log };
  const review = reviewer(reviewDeps, deps.onReviewed);
  const comments = commentCommands({ smoke, store: deps.store, analyze: deps.analyze, review, ...(deps.advise ? { advise: deps.advise } : {}) });
  const claimed = claimer(deps.store, host);
  return { runDelivery: deliveryRunner(handlerTable({ smoke, review, comments, claimed }), host), sweep: () => smoke.sweep() };
}

type Review = (octokit: BotOctokit, target: PullTarget) => Promise<void>;
type Claimed = (job: DeliveryJob, key: string, work: () => Promise<void>) => Promise<void>;

/** Each route's work (the intake routed the delivery with src/github/routes.ts: its fields are there). */
function handlerTable(h: { smoke: SmokeService; review: Review; comments: ReturnType<typeof commentCommands>; claimed: Claimed }): HandlerTable {
  const { smoke, review, comments, claimed } = h;
  return {
    review: async ({ payload }, octokit) => review(octokit, { ...pullTarget(payload.repository, payload.pull_request), opened: payload.action === "opened" }),

    rerequest: async ({ payload }, octokit) => {
      const { check_run: run, repository } = payload;
      for (const ref of run.pull_requests) {
        const { data: pr } = await octokit.rest.pulls.get({ owner: repository.owner.login, repo: repository.name, pull_number: ref.number });
        if (pr.head.sha !== run.head_sha || pr.state !== "open") continue;
        await review(octokit, pullTarget(repository, pr));
      }
    },

    comment: async (delivery, octokit, job) => {
      const { comment, issue, repository, sender } = delivery.payload;
      const ref: RepoRef = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch, installationId: delivery.payload.installation!.id };
      await claimed(job, `comment:${comment.id}`, () =>
        comments.run({ octokit, deliveryId: delivery.id, ref, pr: issue.number, requester: { login: sender.login, isBot: false }, comment: { id: comment.id, createdAt: new Date(comment.created_at) }, body: comment.body }),
      );
    },

    button: async (delivery, octokit, job) => {
      const { check_run: run, repository, sender } = delivery.payload;
      const pr = run.pull_requests[0]!;
      const ref: RepoRef = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch, installationId: delivery.payload.installation!.id };
      await claimed(job, `delivery:${delivery.id}`, () => smoke.button({ octokit, ref, pr: pr.number, login: sender.login, deliveryId: delivery.id }));
    },

    run: async ({ payload }, octokit) => smoke.followRun(octokit, payload.repository, payload.workflow_run),

    job: async ({ payload }, octokit) => smoke.followJob(octokit, payload.repository, payload.workflow_job),
  };
}

/**
 * Runs work that may start a GPU run at most once per key, across redeliveries and restarts
 * (the job's id holds the claim, so the same job run again after an interruption may take it
 * again). When it fails (GitHub down mid-way) the key is given up, so GitHub's redelivery or
 * the user's retry runs it; a run already dispatched is then found by the one-run-per-PR rule.
 */
function claimer(store: Store, host: AppHost): Claimed {
  return async (job, key, work) => {
    if (!(await store.claim(key, COMMENT_CLAIM_SECONDS, job.id))) return;
    try {
      await work();
    } catch (error) {
      await store.release(key).catch((e: unknown) => host.log.warn({ err: e, key }, "could not release a claim"));
      throw error;
    }
  };
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
 * fails, so the job fails: its retry, a redelivery, the next push or the check's Re-run runs it.
 */
function reviewer(reviewDeps: ReviewDeps, onReviewed: AppDeps["onReviewed"]): Review {
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
