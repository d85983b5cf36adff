// What the edge bot does beyond answering /healthz and GitHub's deliveries (src/edge/bot.ts
// and webhook.ts do those without this module, which bot.ts imports on first need: the
// review, smoke, verdict and Slack modules are the bulk of a cold start): the work of the
// accepted deliveries, Slack's /hcp (the shared Slack core), and the jobs, recovery and
// queue-timeout sweep. Everything is the same modules Node runs.
import { inThreadAnalyzer } from "../core/analyze/analyzer.ts";
import { createApp } from "../github/app.ts";
import { createSmokeService } from "../github/smoke/index.ts";
import { EDGE_RETRY_POLICY, withWaits } from "../github/octokit.ts";
import type { ServerSettings } from "../github/settings.ts";
import { createJobRunner, type JobPolicy, type RunOutcome } from "../jobs/runner.ts";
import { createSlackApp, SLACK_EVENTS_PATH, type SlackApp } from "../slack/app.ts";
import type { SlackWork } from "../slack/commands.ts";
import { MAX_BODY_BYTES as MAX_SLACK_BODY_BYTES, type DeferredCommand } from "../slack/endpoint.ts";
import type { EdgeRuntime } from "./bot.ts";
import { createEdgeGitHub } from "./github.ts";
import { json, readLimited, type Accept } from "./webhook.ts";

export interface EdgeWork {
  /** Slack's requests (src/edge/bot.ts answers /healthz and GitHub's). */
  fetch(request: Request, path: string): Promise<Response>;
  runJob(id: string): Promise<RunOutcome>;
  /** Starts jobs nobody runs (an isolate evicted or a process killed mid-job). */
  recover(): Promise<void>;
  /** The queue-timeout sweep of queued smoke runs. */
  sweep(): Promise<void>;
  /** Gives the jobs running here back to the store, to run again at once elsewhere (or after a restart). */
  handBack(): Promise<number>;
}

const NO_INDEX_ON_EDGE = { unavailable: "this edge deployment of hcp-bot ships no index of upstream recipes; hcp-bot lint and the Node server have one" } as const;

export function createEdgeWork(settings: ServerSettings, privateKey: string, policy: JobPolicy, runtime: EdgeRuntime, accept: Accept): EdgeWork {
  const { store, log } = runtime;
  // No index of upstream recipes here: 600 KB in every isolate's bundle. A script built on one says so in its info line.
  const analyze = inThreadAnalyzer(runtime.python, () => NO_INDEX_ON_EDGE);
  const gh = createEdgeGitHub({ appId: settings.appId!, privateKey, baseUrl: settings.baseUrl, policy: withWaits(EDGE_RETRY_POLICY, settings.githubWaits), log });

  // The smoke service, made once for the GitHub handlers and Slack; Slack's channel messages hear its state changes.
  const smoke = createSmokeService({
    store,
    analyze,
    github: gh,
    log,
    ...(settings.botLogin ? { botLogin: settings.botLogin } : {}),
    tuning: settings.smokeMaxActive ? { maxActive: settings.smokeMaxActive } : {},
    notify: [async (request, state): Promise<void> => slack?.notify(request, state)],
  });
  const slack: SlackApp | undefined = settings.slack
    ? createSlackApp({
        ...settings.slack,
        githubApiUrl: settings.baseUrl,
        store,
        analyze,
        log,
        smoke,
        accept: (claim, key, work, command) => accept({ key, kind: "slack", payload: JSON.stringify({ work, command }) }, claim),
      })
    : undefined;

  const app = createApp({ analyze, botLogin: settings.botLogin, store, smoke }, gh);

  const jobs = createJobRunner({
    store,
    policy,
    log,
    async execute(job, lease) {
      if (job.kind === "github") return app.runDelivery(job, lease);
      if (job.kind === "slack" && slack) {
        const { work, command } = JSON.parse(job.payload) as { work: SlackWork; command: DeferredCommand };
        return slack.run(work, command, lease);
      }
      throw new Error(`no runner for a ${job.kind} job here`);
    },
  });

  async function slackEvents(request: Request): Promise<Response> {
    if (!slack) return json(404, { error: "Slack is off (SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN not set)" });
    const body = await readLimited(request, MAX_SLACK_BODY_BYTES);
    if (body === undefined) return json(413, { error: "body too large" });
    const res = await slack.core.handle({ method: request.method, header: (n) => request.headers.get(n), body });
    return new Response(res.body, { status: res.status, headers: res.headers });
  }

  return {
    async fetch(request, path) {
      if (path === SLACK_EVENTS_PATH) return await slackEvents(request);
      return json(404, { error: "not found" });
    },
    runJob: (id) => jobs.run(id),
    async recover() {
      for (const job of await jobs.stale()) await runtime.dispatch(job);
    },
    sweep: () => app.sweep(),
    handBack: () => jobs.handBack(),
  };
}
