// The Slack app on the Node server: `/slack/events` as one more handler in Probot's chain
// (same port as the GitHub webhooks). Requests are verified by the runtime-neutral core
// (src/slack/app.ts; it also refuses timestamps from the future, which Bolt's own check lets
// through), then handed to a Bolt App whose `/hcp` listener acks with the core's answer:
// Bolt routes and acks on Node, the same core answers on the edge hosts.
import { createHmac } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLarge, readBodyCapped } from "../node/body.ts";
import { App, type Receiver, type ReceiverEvent } from "@slack/bolt";
import type { SmokeListener } from "../github/smoke/index.ts";
import type { KeyedQueue } from "../github/queue.ts";
import { createSlackApp, SLACK_EVENTS_PATH, type SlackApp, type SlackAppOptions } from "../slack/app.ts";
import type { Log } from "../shared/log.ts";
import { claimThenSchedule, MAX_BODY_BYTES, type SlackCore, type SlackHttpResponse } from "../slack/endpoint.ts";

export { githubWebUrl, SLACK_EVENTS_PATH } from "../slack/app.ts";

export interface SlackNodeOptions extends Omit<SlackAppOptions, "accept" | "log"> {
  queue: KeyedQueue;
  /** Takes a command's work durably (src/server/durable.ts); without it, the work runs from `queue`. */
  accept?: SlackAppOptions["accept"];
  log: Log;
}

export interface SlackNode {
  /** Runs an acknowledged command's work (a durable job's run). */
  run: SlackApp["run"];
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  notify: SmokeListener;
}

export function createSlackNode(options: SlackNodeOptions): SlackNode {
  const slack = createSlackApp({
    ...options,
    hmacSha256: (secret, message) => createHmac("sha256", secret).update(message).digest(),
    // The job yields once first, so the ack is written before any of the work's own steps run.
    accept:
      options.accept ??
      claimThenSchedule(options.store, (key, work, command) =>
        void options.queue.enqueue(key, async () => {
          await new Promise((resolve) => setImmediate(resolve));
          await slack.run(work, command);
        }),
      ),
  });
  const core = slack.core;
  const bolt = createBoltApp(options, core);

  return {
    run: (work, command, lease) => slack.run(work, command, lease),
    notify: (request, state) => slack.notify(request, state),
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
    // No conversation state is kept: Bolt's in-memory store made (and threw away) an Error with a stack trace per command.
    convoStore: false,
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
