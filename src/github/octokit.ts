// The bot's retry policy for GitHub calls, as an Octokit plugin that any host's Octokit
// takes (Probot's on Node, @octokit/core's on edge runtimes). Probot's own plugins do not
// retry secondary rate limits and its notification throttle waits 3 s between comment
// posts (docs/stack.md), which a review that posts a comment and a review cannot afford.
//
// GitHub's guidance (REST docs, "Rate limits for the REST API"): after a rate-limit answer,
// wait `retry-after` seconds when it is given; when `x-ratelimit-remaining` is 0, wait until
// `x-ratelimit-reset`; otherwise wait at least a minute, and when a secondary limit keeps
// answering, wait exponentially longer and give up after a set number of tries. The horizon
// (how long one request may spend waiting in all) is the host's: an hour on Node (a primary
// limit resets within the hour), less where the runtime cuts work short (src/edge).
import { isAmbiguousFailure, isRepeatable } from "./failures.ts";
import { leaseLostIn } from "../jobs/fence.ts";

export { isAmbiguousFailure, isRepeatable };

/** Time as the policy sees it; tests hand in one that does not really sleep. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface RetryPolicy {
  /** Retries of a 5xx (other than 501) or a network error, for requests that can be repeated (not a creating POST). */
  serverErrorRetries: number;
  /** Backoff base for server errors, doubled per try, never above `maxBackoffMs`. */
  baseDelayMs: number;
  maxBackoffMs: number;
  /** Retries of a rate-limit answer (403/429: retry-after, an exhausted primary limit, a secondary limit). */
  rateLimitRetries: number;
  /** A secondary limit without retry-after: this long first (GitHub: at least a minute), doubled per try. */
  secondaryBaseMs: number;
  /** The most one request may spend waiting in all; a wait that would pass it is not started: the request gives up. */
  horizonMs: number;
  /**
   * The most one installation client may spend waiting in all, over every request it sends;
   * undefined: no such bound. The edge makes one client per job (src/edge/github.ts), so this
   * bounds a job's waits: several requests each waiting up to the horizon would otherwise
   * sleep past a Queue consumer's budget.
   */
  clientHorizonMs?: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  serverErrorRetries: 12,
  baseDelayMs: 1_000,
  maxBackoffMs: 60_000,
  rateLimitRetries: 8,
  secondaryBaseMs: 60_000,
  horizonMs: 60 * 60_000,
};

/**
 * Deno Deploy and a Workers Queue consumer cut a job short within minutes (docs/edge-notes.md): a Queue
 * consumer has 15 minutes of wall time per batch, a Deploy isolate lives 5 s to 10 minutes
 * after its last request. There a request waits (sleeps, its job's lease renewed) at most ten
 * minutes; a longer wait is not started: the request gives up, the job fails and the job
 * runner tries it again later (src/jobs/runner.ts), no sooner than GitHub asked: on Workers a
 * Queue retry with that delay, not a sleep past the consumer's budget.
 */
export const EDGE_RETRY_POLICY: RetryPolicy = { ...DEFAULT_RETRY_POLICY, horizonMs: 10 * 60_000, clientHorizonMs: 10 * 60_000 };

/** An operator's (or a test's) change to a host's policy: HCP_GITHUB_WAIT_HORIZON_SECONDS, HCP_GITHUB_SECONDARY_WAIT_SECONDS. */
export interface GitHubWaits {
  horizonSeconds?: number;
  /** GitHub asks for at least a minute; only tests should go below it. */
  secondaryWaitSeconds?: number;
}

export function withWaits(policy: RetryPolicy, waits: GitHubWaits = {}): RetryPolicy {
  return {
    ...policy,
    ...(waits.horizonSeconds ? { horizonMs: waits.horizonSeconds * 1000, ...(policy.clientHorizonMs !== undefined ? { clientHorizonMs: waits.horizonSeconds * 1000 } : {}) } : {}),
    ...(waits.secondaryWaitSeconds ? { secondaryBaseMs: waits.secondaryWaitSeconds * 1000 } : {}),
  };
}

export type WaitReason = "retry-after" | "primary-limit" | "secondary-limit" | "server-error";

/** What the plugin tells an observer (metrics): each answer, and each wait before a retry. */
export interface RetryObserver {
  onResponse?(e: { method: string; status: number }): void;
  onWait?(e: { reason: WaitReason; ms: number }): void;
  onGiveUp?(e: { reason: WaitReason }): void;
}

interface HttpError {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | number | undefined> };
}

/** A request the policy stopped retrying: GitHub kept failing or asked for a wait past the horizon. */
export class GitHubUnavailable extends Error {
  override name = "GitHubUnavailable";
  readonly status: number | undefined;
  readonly response: HttpError["response"];
  constructor(
    readonly reason: WaitReason,
    readonly tries: number,
    readonly waitedMs: number,
    /** When GitHub said it will answer again (a rate limit's reset or retry-after), if it said. */
    readonly retryAt: number | undefined,
    cause: unknown,
  ) {
    const e = cause as HttpError;
    super(`GitHub ${describe(reason, e.status)} after ${tries} tr${tries === 1 ? "y" : "ies"} and ${Math.round(waitedMs / 1000)} s of waiting${retryAt ? `; it asked to wait until ${new Date(retryAt).toISOString()}` : ""}`, { cause });
    this.status = e.status;
    this.response = e.response;
  }
}

function describe(reason: WaitReason, status: number | undefined): string {
  switch (reason) {
    case "server-error":
      return status === undefined ? "could not be reached" : `kept answering ${status}`;
    case "primary-limit":
      return "rate limit is used up";
    case "secondary-limit":
      return "kept answering with a secondary rate limit";
    case "retry-after":
      return `kept answering ${status ?? ""} with retry-after`.replace("  ", " ");
  }
}

export interface RateLimitWait {
  reason: Exclude<WaitReason, "server-error">;
  /** What GitHub's headers ask for; undefined when they name no time (a bare secondary limit or 429). */
  askedMs: number | undefined;
}

/** Whether this error is a rate limit, and how long its headers ask to wait; undefined otherwise. */
export function rateLimitOf(error: HttpError, now: number): RateLimitWait | undefined {
  const status = error.status;
  if (status !== 403 && status !== 429) return undefined;
  const headers = error.response?.headers ?? {};
  const retryAfter = headers["retry-after"];
  if (retryAfter !== undefined && retryAfter !== "" && Number.isFinite(Number(retryAfter))) return { reason: "retry-after", askedMs: Math.max(0, Number(retryAfter) * 1000) };
  if (String(headers["x-ratelimit-remaining"]) === "0" && Number.isFinite(Number(headers["x-ratelimit-reset"]))) {
    // One second past the reset: GitHub's clock and ours are not the same clock.
    return { reason: "primary-limit", askedMs: Math.max(0, Number(headers["x-ratelimit-reset"]) * 1000 - now) + 1000 };
  }
  if (status === 429 || /secondary rate limit|abuse detection/i.test(error.message ?? "")) return { reason: "secondary-limit", askedMs: undefined };
  return undefined; // a plain 403: permission, not a limit
}

/** The wait before the next try, or undefined when the policy gives up. Pure, for the plugin and its tests. */
export function nextWaitMs(policy: RetryPolicy, limit: RateLimitWait | undefined, tries: { limit: number; server: number }): number | undefined {
  if (limit) {
    if (tries.limit >= policy.rateLimitRetries) return undefined;
    // Honour what GitHub asked for however long; without a time, back off exponentially from a minute.
    return limit.askedMs ?? policy.secondaryBaseMs * 2 ** tries.limit;
  }
  if (tries.server >= policy.serverErrorRetries) return undefined;
  return Math.min(policy.maxBackoffMs, policy.baseDelayMs * 2 ** tries.server);
}

interface RequestOptions {
  method?: string;
  url?: string;
  /** `request: { retries: false }` on one call: one try (a trace written while GitHub fails). */
  request?: { retries?: boolean };
}

/** An installation's client (@octokit/app and Probot construct one with `auth.installationId`), not the App's own. */
const isInstallationClient = (options: unknown) => (options as { auth?: { installationId?: unknown } } | undefined)?.auth?.installationId !== undefined;

export function retryPlugin(policy: RetryPolicy, clock: Clock = SYSTEM_CLOCK, observer: RetryObserver = {}) {
  return (octokit: { hook: { wrap: (name: "request", fn: (request: (o: unknown) => Promise<unknown>, options: unknown) => Promise<unknown>) => void } }, clientOptions?: unknown) => {
    // The App's own client lives as long as the process: only an installation's is bounded in all.
    const clientHorizon = isInstallationClient(clientOptions) ? policy.clientHorizonMs : undefined;
    let clientWaited = 0;
    octokit.hook.wrap("request", async (request, options) => {
      const o = options as RequestOptions;
      const method = (o.method ?? "GET").toUpperCase();
      const once = o.request?.retries === false;
      const tries = { limit: 0, server: 0 };
      let waited = 0;
      for (;;) {
        try {
          const response = await request(options);
          observer.onResponse?.({ method, status: (response as { status?: number }).status ?? 200 });
          return response;
        } catch (caught) {
          // The job's lease fence stopped the request before it left (src/jobs/fence.ts): nothing to retry.
          const lost = leaseLostIn(caught);
          if (lost) throw lost;
          const error = caught as HttpError;
          observer.onResponse?.({ method, status: error.status ?? 0 });
          const limit = rateLimitOf(error, clock.now());
          const retryable = limit !== undefined || (isAmbiguousFailure(error) && isRepeatable(options));
          if (!retryable) throw caught;
          const reason: WaitReason = limit?.reason ?? "server-error";
          const wait = once ? undefined : nextWaitMs(policy, limit, tries);
          const retryAt = limit?.askedMs !== undefined ? clock.now() + limit.askedMs : undefined;
          const pastClient = clientHorizon !== undefined && wait !== undefined && clientWaited + wait > clientHorizon;
          if (wait === undefined || waited + wait > policy.horizonMs || pastClient) {
            observer.onGiveUp?.({ reason });
            throw new GitHubUnavailable(reason, tries.limit + tries.server + 1, pastClient ? clientWaited : waited, retryAt, caught);
          }
          if (limit) tries.limit++;
          else tries.server++;
          observer.onWait?.({ reason, ms: wait });
          clientWaited += wait;
          await clock.sleep(wait);
          waited += wait;
        }
      }
    });
  };
}
