// The bot's retry policy for GitHub calls, as an Octokit plugin that any host's Octokit
// takes (Probot's on Node, @octokit/core's on edge runtimes). Probot's own plugins do not
// retry secondary rate limits and its notification throttle waits 3 s between comment
// posts (STACK.md), which a review that posts a comment and a review cannot afford.
import { isAmbiguousFailure, isRepeatable } from "./failures.ts";

export { isAmbiguousFailure, isRepeatable };

export interface RetryPolicy {
  /** Retries of a 5xx (other than 501) or a network error, for requests that can be repeated (not a creating POST). */
  serverErrorRetries: number;
  /** Retries of a rate-limit answer (403/429 with retry-after, or a secondary limit). */
  rateLimitRetries: number;
  /** Backoff base for server errors, doubled per try. */
  baseDelayMs: number;
  /** Never wait longer than this for a retry-after; give up instead. */
  maxWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  serverErrorRetries: 3,
  rateLimitRetries: 2,
  baseDelayMs: 200,
  maxWaitMs: 60_000,
};

interface HttpError {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | number | undefined> };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long GitHub asked us to wait, if this error is a rate limit; undefined otherwise. */
export function rateLimitWaitMs(error: HttpError, now = Date.now()): number | undefined {
  const status = error.status;
  if (status !== 403 && status !== 429) return undefined;
  const headers = error.response?.headers ?? {};
  const retryAfter = headers["retry-after"];
  if (retryAfter !== undefined && retryAfter !== "") return Math.max(0, Number(retryAfter) * 1000);
  if (String(headers["x-ratelimit-remaining"]) === "0" && headers["x-ratelimit-reset"] !== undefined) {
    return Math.max(0, Number(headers["x-ratelimit-reset"]) * 1000 - now);
  }
  // GitHub's advice for a secondary limit without retry-after: wait at least a minute.
  if (/secondary rate limit/i.test(error.message ?? "")) return 60_000;
  return undefined;
}

export function retryPlugin(policy: RetryPolicy) {
  return (octokit: { hook: { wrap: (name: "request", fn: (request: (o: unknown) => Promise<unknown>, options: unknown) => Promise<unknown>) => void } }) => {
    octokit.hook.wrap("request", async (request, options) => {
      let serverTries = 0;
      let limitTries = 0;
      for (;;) {
        try {
          return await request(options);
        } catch (caught) {
          const error = caught as HttpError;
          const wait = rateLimitWaitMs(error);
          if (wait !== undefined) {
            if (limitTries >= policy.rateLimitRetries || wait > policy.maxWaitMs) throw caught;
            limitTries++;
            await sleep(wait);
            continue;
          }
          if (isAmbiguousFailure(error) && isRepeatable(options) && serverTries < policy.serverErrorRetries) {
            await sleep(policy.baseDelayMs * 2 ** serverTries);
            serverTries++;
            continue;
          }
          throw caught;
        }
      }
    });
  };
}
