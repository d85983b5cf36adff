// What the edge bot does beyond /healthz, built on first need (src/edge/bot.ts imports this
// module dynamically, so a cold start answers its first request without evaluating the
// review, smoke, verdict and Slack modules): GitHub webhooks (verified, written as a durable
// job with their claim, answered 202; the work runs after the answer), Slack's /hcp (the
// shared Slack core), and the jobs, recovery and queue-timeout sweep. Everything is the same
// modules Node runs.
import { inThreadAnalyzer } from "../core/analyze/analyzer.ts";
import { createApp } from "../github/app.ts";
import { EDGE_RETRY_POLICY, withWaits } from "../github/octokit.ts";
import { MAX_EDGE_WEBHOOK_BYTES } from "../host/limits.ts";
import { readCapped } from "../host/read-capped.ts";
import type { ServerSettings } from "../host/settings.ts";
import { createJobRunner, deliveryClaim, type JobPolicy, type RunOutcome } from "../jobs/runner.ts";
import { createSlackApp, SLACK_EVENTS_PATH, type SlackApp } from "../slack/app.ts";
import type { SlackWork } from "../slack/commands.ts";
import { MAX_BODY_BYTES as MAX_SLACK_BODY_BYTES, type DeferredCommand } from "../slack/core.ts";
import { json, type EdgeRuntime } from "./bot.ts";
import { createEdgeGitHub, type Delivery } from "./github.ts";

/** The edge's cap on a delivery (src/host/limits.ts says why it is below GitHub's 25 MB). */
export const MAX_WEBHOOK_BYTES = MAX_EDGE_WEBHOOK_BYTES;

export interface EdgeWork {
  /** Every request but /healthz. */
  fetch(request: Request, path: string): Promise<Response>;
  runJob(id: string): Promise<RunOutcome>;
  /** Starts jobs nobody runs (an isolate evicted or a process killed mid-job). */
  recover(): Promise<void>;
  /** The queue-timeout sweep of queued smoke runs. */
  sweep(): Promise<void>;
}

/** The body as text, or undefined past `max` bytes (reading stops there). */
async function readLimited(request: Request, max: number): Promise<string | undefined> {
  if (Number(request.headers.get("content-length") ?? "0") > max) return undefined;
  if (!request.body) return "";
  return (await readCapped(request.body, max)) ?? undefined;
}

export function createEdgeWork(settings: ServerSettings, privateKey: string, policy: JobPolicy, runtime: EdgeRuntime): EdgeWork {
  const { store, log } = runtime;
  const analyze = inThreadAnalyzer(runtime.python);
  const gh = createEdgeGitHub({ appId: settings.appId!, privateKey, webhookSecret: settings.webhookSecret!, baseUrl: settings.baseUrl, policy: withWaits(EDGE_RETRY_POLICY, settings.githubWaits), log });

  async function accept(job: { key: string; kind: string; payload: string }, claim: { key: string; ttlSeconds: number }): Promise<boolean> {
    const written = await store.enqueueJob(job, claim);
    if (!written) return false;
    // The job is in the store: if handing it on fails, the minute's recovery starts it.
    await runtime.dispatch(written).catch((error: unknown) => log.warn({ err: error, job: written.id }, "handing a job to the runtime failed; the recovery sweep starts it"));
    return true;
  }

  const slack: SlackApp | undefined = settings.slack
    ? createSlackApp({
        ...settings.slack,
        githubApiUrl: settings.baseUrl,
        store,
        analyze,
        log,
        accept: (claim, key, work, command) => accept({ key, kind: "slack", payload: JSON.stringify({ work, command }) }, claim),
      })
    : undefined;

  let sweep: (() => Promise<void>) | undefined;
  createApp({
    analyze,
    botLogin: settings.botLogin,
    store,
    runner: gh.runner,
    smoke: { ...(slack ? { notify: slack.notify } : {}), ...(settings.smokeMaxActive ? { maxActive: settings.smokeMaxActive } : {}) },
    onGateway: (gateway) => slack?.setGateway(gateway),
    schedule: (s) => {
      sweep = s;
    },
  })(gh.host);

  const jobs = createJobRunner({
    store,
    policy,
    log,
    async execute(job) {
      if (job.kind === "github") return gh.work(JSON.parse(job.payload) as Delivery, job.id);
      if (job.kind === "slack" && slack) {
        const { work, command } = JSON.parse(job.payload) as { work: SlackWork; command: DeferredCommand };
        return slack.run(work, command);
      }
      throw new Error(`no runner for a ${job.kind} job here`);
    },
  });

  async function webhook(request: Request): Promise<Response> {
    // No well-formed signature: refused before a byte of the body is read.
    if (!/^sha256=[0-9a-f]{64}$/.test(request.headers.get("x-hub-signature-256") ?? "")) return json(401, { error: "missing, malformed or forged x-hub-signature-256" });
    const body = await readLimited(request, MAX_WEBHOOK_BYTES);
    if (body === undefined) return json(413, { error: `webhook body over ${MAX_WEBHOOK_BYTES} bytes` });
    if (!(await gh.verify(body, request.headers.get("x-hub-signature-256")))) return json(401, { error: "missing, malformed or forged x-hub-signature-256" });
    const id = request.headers.get("x-github-delivery");
    const name = request.headers.get("x-github-event");
    if (!id || !name || id.length > 200 || !/^[a-z_]{1,64}$/.test(name)) return json(400, { error: "x-github-delivery and x-github-event are required" });
    let payload: Delivery["payload"];
    try {
      payload = JSON.parse(body) as Delivery["payload"];
    } catch {
      return json(400, { error: "the body is not JSON" });
    }
    const delivery: Delivery = { id, name, payload };
    const key = await gh.route(delivery);
    if (key === undefined) return json(200, { ok: true, ignored: true });
    const accepted = await accept({ key, kind: "github", payload: `{"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"payload":${body}}` }, deliveryClaim(id));
    if (!accepted) log.info({ delivery: id }, "delivery already accepted; ignoring the redelivery");
    return json(accepted ? 202 : 200, { ok: true, ...(accepted ? {} : { duplicate: true }) });
  }

  async function slackEvents(request: Request): Promise<Response> {
    if (!slack) return json(404, { error: "Slack is off (SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN not set)" });
    const body = await readLimited(request, MAX_SLACK_BODY_BYTES);
    if (body === undefined) return json(413, { error: "body too large" });
    const res = await slack.core.handle({ method: request.method, header: (n) => request.headers.get(n), body });
    return new Response(res.body, { status: res.status, headers: res.headers });
  }

  return {
    async fetch(request, path) {
      if (path === settings.webhookPath) return request.method === "POST" ? await webhook(request) : json(405, { error: "POST only" });
      if (path === SLACK_EVENTS_PATH) return await slackEvents(request);
      return json(404, { error: "not found" });
    },
    runJob: (id) => jobs.run(id),
    async recover() {
      for (const job of await jobs.stale()) await runtime.dispatch(job);
    },
    sweep: async () => sweep?.(),
  };
}
