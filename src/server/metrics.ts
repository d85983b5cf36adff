// `/metrics` on Node: Prometheus text from a prom-client registry of the bot's own counters
// (and Node's process metrics). The server feeds it through the hooks it already has: the
// webhook guard, onReviewed, the smoke notify hook, the runner, the GitHub retry policy's and
// the Slack Web API client's observers, and a store wrapper. Off unless HCP_METRICS_TOKEN is set; then only a request bearing it
// (`Authorization: Bearer ...`, what Prometheus sends with `authorization.credentials`) reads it.
// Edge hosts have no /metrics: an isolate's counters are neither shared nor long-lived there.
import type { IncomingMessage, ServerResponse } from "node:http";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { RetryObserver } from "../github/octokit.ts";
import type { ReviewOutcome } from "../github/review.ts";
import { bearsToken } from "../github/health.ts";
import type { SmokeState } from "../core/render/smoke.ts";
import type { JobLease } from "../jobs/fence.ts";
import type { Job, Store } from "../store/types.ts";
import type { SlackWaitObserver } from "../slack/web-api.ts";

/** How a host runs a delivery's job (the app's runDelivery). */
type JobRun = (job: Job, lease: JobLease) => Promise<void>;

export interface BotMetrics {
  registry: Registry;
  webhook(event: string, outcome: string): void;
  reviewed(outcome: ReviewOutcome): void;
  smokeState(state: SmokeState): void;
  github: RetryObserver;
  /** The Slack Web API client's waits (429 Retry-After, 5xx backoff) and give-ups, next to GitHub's. */
  slack: Required<SlackWaitObserver>;
  /** A delivery's job run with its wait (since the job was written) and run time measured. */
  timed(run: JobRun): JobRun;
  /** The store with each failed call counted. */
  counted(store: Store): Store;
}

/** A bounded label for a job key: its kind, never the PR or run it names. */
function jobKind(key: string): string {
  if (key.startsWith("run:")) return "workflow-run";
  if (key.startsWith("sweep:")) return "sweep";
  if (key.startsWith("slack:")) return "slack";
  if (/#\d+$/.test(key)) return "pull-request";
  return "other";
}

export function createMetrics(o: { queueDepth: () => number }): BotMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = (name: string, help: string, labelNames: string[]) => new Counter({ name, help, labelNames, registers: [registry] });
  const webhooks = counter("hcp_bot_webhooks_total", "Webhook deliveries by event and outcome (refused ones as event \"unverified\").", ["event", "outcome"]);
  const reviews = counter("hcp_bot_reviews_total", "Pull-request reviews done, by check-run conclusion.", ["conclusion"]);
  const findings = counter("hcp_bot_findings_total", "Findings reported by reviews, by rule.", ["rule"]);
  const dispatches = counter("hcp_bot_smoke_dispatches_total", "Smoke runs dispatched to GitHub Actions.", []);
  const verdicts = counter("hcp_bot_verdicts_total", "Smoke-run outcomes: verdict status (or cancelled, timed_out, failed) and cause kind.", ["status", "cause"]);
  const requests = counter("hcp_bot_github_requests_total", "GitHub API answers by method and status (0: no answer).", ["method", "status"]);
  const waits = counter("hcp_bot_github_waits_total", "Waits before retrying a GitHub request, by reason.", ["reason"]);
  const waitSeconds = counter("hcp_bot_github_wait_seconds_total", "Seconds spent waiting before GitHub retries, by reason.", ["reason"]);
  const giveUps = counter("hcp_bot_github_give_ups_total", "GitHub requests given up by the retry policy, by reason.", ["reason"]);
  const slackWaits = counter("hcp_bot_slack_waits_total", "Waits before retrying a Slack Web API call, by method and reason.", ["method", "reason"]);
  const slackWaitSeconds = counter("hcp_bot_slack_wait_seconds_total", "Seconds spent waiting before Slack Web API retries, by method and reason.", ["method", "reason"]);
  const slackGiveUps = counter("hcp_bot_slack_give_ups_total", "Slack Web API calls given up (past the retry horizon, or out of 5xx tries), by method and reason.", ["method", "reason"]);
  const storeErrors = counter("hcp_bot_store_errors_total", "Store calls that failed, by operation.", ["operation"]);
  new Gauge({ name: "hcp_bot_queue_depth", help: "Webhook jobs queued or running in this process.", registers: [registry], collect() {
    this.set(o.queueDepth());
  } });
  const buckets = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600];
  const jobSeconds = new Histogram({ name: "hcp_bot_job_duration_seconds", help: "Time a job ran, by kind and outcome.", labelNames: ["kind", "outcome"], buckets, registers: [registry] });
  const jobWait = new Histogram({ name: "hcp_bot_job_wait_seconds", help: "Time a job waited in the queue before it ran, by kind.", labelNames: ["kind"], buckets, registers: [registry] });

  return {
    registry,
    webhook: (event, outcome) => webhooks.inc({ event, outcome }),
    reviewed(outcome) {
      reviews.inc({ conclusion: outcome.conclusion });
      for (const [rule, n] of Object.entries(outcome.byRule ?? {})) findings.inc({ rule }, n);
    },
    smokeState(state) {
      if (state.kind === "dispatched") dispatches.inc();
      else if (state.kind === "finished") verdicts.inc({ status: state.verdict.status, cause: state.verdict.cause?.kind ?? "none" });
      else if (state.kind !== "running") verdicts.inc({ status: state.kind, cause: "none" });
    },
    github: {
      onResponse: (e) => requests.inc({ method: e.method, status: String(e.status) }),
      onWait(e) {
        waits.inc({ reason: e.reason });
        waitSeconds.inc({ reason: e.reason }, e.ms / 1000);
      },
      onGiveUp: (e) => giveUps.inc({ reason: e.reason }),
    },
    slack: {
      onWait(e) {
        slackWaits.inc({ method: e.method, reason: e.reason });
        slackWaitSeconds.inc({ method: e.method, reason: e.reason }, e.ms / 1000);
      },
      onGiveUp: (e) => slackGiveUps.inc({ method: e.method, reason: e.reason }),
    },
    timed(run) {
      return async (job, lease) => {
        const kind = jobKind(job.key);
        jobWait.observe({ kind }, Math.max(0, Date.now() - job.createdAt.getTime()) / 1000);
        const started = performance.now();
        let outcome = "failed";
        try {
          await run(job, lease);
          outcome = "done";
        } finally {
          jobSeconds.observe({ kind, outcome }, (performance.now() - started) / 1000);
        }
      };
    },
    counted(store) {
      return new Proxy(store, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver) as unknown;
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            const result = (value as (...a: unknown[]) => unknown).apply(target, args);
            if (result instanceof Promise) return result.catch((error: unknown) => {
              storeErrors.inc({ operation: String(name) });
              throw error;
            });
            return result;
          };
        },
      });
    },
  };
}

/** GET /metrics: 404 unless a token is configured; 401 without it; the Prometheus text with it. */
export function metricsHandler(metrics: BotMetrics, token: string | undefined) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") return false;
    if (!token) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "metrics are off (HCP_METRICS_TOKEN is not set)" }));
      return true;
    }
    if (!bearsToken(req.headers.authorization, token)) {
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" }).end(JSON.stringify({ error: "a bearer token is required" }));
      return true;
    }
    res.writeHead(200, { "content-type": metrics.registry.contentType }).end(await metrics.registry.metrics());
    return true;
  };
}
