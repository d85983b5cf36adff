// The Slack app on the Node server: `/slack/events` as one more handler in Probot's chain
// (same port as the GitHub webhooks), the Web API client, and the smoke-run notifier the
// GitHub side calls. Requests are verified by the runtime-neutral core (it also refuses
// timestamps from the future, which Bolt's own check lets through), then handed to a Bolt
// App whose `/hcp` listener acks with the core's answer: Bolt routes and acks on Node,
// the same core serves the fetch-style edge adapter.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLarge, readBodyCapped } from "../node/body.ts";
import { App, type Receiver, type ReceiverEvent } from "@slack/bolt";
import type { Language } from "web-tree-sitter";
import type { SmokeState } from "../core/render/smoke.ts";
import type { GitHubGateway } from "../github/app.ts";
import type { KeyedQueue } from "../github/queue.ts";
import type { SmokeRequest, Store } from "../store/types.ts";
import { createSlackCommands, effectiveSlackConfig, type SlackLog } from "./commands.ts";
import { createSlackCore, MAX_BODY_BYTES, type SlackCore, type SlackHttpResponse } from "./core.ts";
import { createSlackRuns } from "./runs.ts";
import { createSlackWebApi } from "./web-api.ts";

export const SLACK_EVENTS_PATH = "/slack/events";

export interface SlackNodeOptions {
  signingSecret: string;
  botToken: string;
  apiUrl: string;
  /** GitHub REST base URL (https://api.github.com or https://HOST/api/v3), for web links. */
  githubApiUrl: string;
  store: Store;
  queue: KeyedQueue;
  python: () => Promise<Language>;
  log: SlackLog & { error(obj: object, msg?: string): void };
  nowSeconds?: () => number;
}

export interface SlackNode {
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  setGateway(gateway: GitHubGateway): void;
  notify(request: SmokeRequest, state: SmokeState): Promise<void>;
}

export function githubWebUrl(apiUrl: string): string {
  const u = new URL(apiUrl);
  if (u.hostname === "api.github.com") return "https://github.com";
  return `${u.protocol}//${u.host}`;
}

export function createSlackNode(options: SlackNodeOptions): SlackNode {
  let gateway: GitHubGateway | undefined;
  const web = createSlackWebApi({ token: options.botToken, apiUrl: options.apiUrl });
  const notifyChannels = new Map<string, { at: number; channel: Promise<string | undefined> }>();

  /** The repo's notify_channel, cached a minute so a run's state changes cost one config read. */
  function notifyChannel(repoFull: string): Promise<string | undefined> {
    const hit = notifyChannels.get(repoFull);
    if (hit && Date.now() - hit.at < 60_000) return hit.channel;
    const [owner, repo] = repoFull.split("/") as [string, string];
    const channel = (async () => {
      const found = await gateway?.repository(owner, repo);
      if (!found?.config.ok) return undefined;
      return (await effectiveSlackConfig(found, found.config.config)).notify_channel ?? undefined;
    })().catch(() => undefined);
    notifyChannels.set(repoFull, { at: Date.now(), channel });
    return channel;
  }

  const runs = createSlackRuns({ web, store: options.store, webUrl: githubWebUrl(options.githubApiUrl), notifyChannel, log: options.log });
  const run = createSlackCommands({ web, store: options.store, gateway: () => gateway, python: options.python, runs, log: options.log });
  const core = createSlackCore({
    signingSecret: options.signingSecret,
    store: options.store,
    ...(options.nowSeconds ? { nowSeconds: options.nowSeconds } : {}),
    // The job yields once first, so the ack is written before any of the work's own steps run.
    schedule: (key, work, command) => void options.queue.enqueue(key, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await run(work, command);
    }),
  });

  const bolt = createBoltApp(options, core);

  return {
    setGateway(g) {
      gateway = g;
    },
    notify: (request, state) => runs.notify(request, state),
    async handler(req, res) {
      const path = (req.url ?? "").split("?")[0];
      if (path !== SLACK_EVENTS_PATH) return false;
      let body: string;
      try {
        body = await readBodyCapped(req, MAX_BODY_BYTES);
      } catch (error) {
        res.writeHead(error instanceof BodyTooLarge ? 413 : 400, { "content-type": "application/json" }).end(JSON.stringify({ error: "cannot read the body" }));
        return true;
      }
      try {
        const verified = await core.verify({ method: req.method ?? "GET", header: (n) => headerOf(req, n), body });
        const answer = verified.ok ? await throughBolt(bolt, verified.payload, req) : verified.response;
        res.writeHead(answer.status, answer.headers).end(answer.body);
      } catch (error) {
        options.log.error({ err: error }, "the Slack endpoint failed");
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "internal error" }));
      }
      return true;
    },
  };
}

/** Bolt with no receiver of its own: requests arrive already verified, through processEvent. */
const NO_RECEIVER: Receiver = { init: () => {}, start: async () => undefined, stop: async () => undefined };

function createBoltApp(options: SlackNodeOptions, core: SlackCore): App {
  const app = new App({
    receiver: NO_RECEIVER,
    token: options.botToken,
    // Known ids keep Bolt from calling auth.test on the first event (the ack must not wait on Slack).
    botId: "B0HCPBOT",
    botUserId: "U0HCPBOT",
    tokenVerificationEnabled: false,
    clientOptions: { slackApiUrl: options.apiUrl },
  });
  app.command(/^\/[a-z0-9_-]+$/i, async ({ command, ack }) => {
    const answer = await core.answer(command as unknown as Parameters<SlackCore["answer"]>[0]);
    await ack(JSON.parse(answer.body) as Record<string, unknown>);
  });
  app.error(async (error) => {
    options.log.error({ err: error }, "the Slack command listener failed");
  });
  return app;
}

/** Runs one verified slash command through Bolt; its ack becomes the HTTP answer. */
async function throughBolt(bolt: App, payload: Parameters<SlackCore["answer"]>[0], req: IncomingMessage): Promise<SlackHttpResponse> {
  let acked: SlackHttpResponse | undefined;
  const retryNum = Number(headerOf(req, "x-slack-retry-num") ?? "");
  const event: ReceiverEvent = {
    body: { ...payload },
    ack: async (response) => {
      acked = { status: 200, headers: { "content-type": "application/json; charset=utf-8" }, body: JSON.stringify(response ?? {}) };
    },
    ...(Number.isInteger(retryNum) && retryNum > 0 ? { retryNum, retryReason: headerOf(req, "x-slack-retry-reason") ?? "" } : {}),
  };
  await bolt.processEvent(event);
  return acked ?? { status: 404, headers: { "content-type": "application/json" }, body: JSON.stringify({ error: "no listener for this request" }) };
}

function headerOf(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
}
