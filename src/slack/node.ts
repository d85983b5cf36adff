// The Slack app on the Node server: `/slack/events` as one more handler in Probot's chain
// (same port as the GitHub webhooks), the Web API client, and the smoke-run notifier the
// GitHub side calls. Bolt is not used: its receivers want their own server or Express app,
// check only past timestamps, and would duplicate the runtime-neutral core (see README).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Language } from "web-tree-sitter";
import type { SmokeState } from "../core/render/smoke.ts";
import type { GitHubGateway } from "../github/app.ts";
import type { KeyedQueue } from "../github/queue.ts";
import type { SmokeRequest, Store } from "../store/types.ts";
import { createSlackCommands, effectiveSlackConfig, type SlackLog } from "./commands.ts";
import { createSlackCore, MAX_BODY_BYTES } from "./core.ts";
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

class TooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new TooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
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
        body = await readBody(req);
      } catch (error) {
        res.writeHead(error instanceof TooLarge ? 413 : 400, { "content-type": "application/json" }).end(JSON.stringify({ error: "cannot read the body" }));
        return true;
      }
      try {
        const answer = await core({ method: req.method ?? "GET", header: (n) => headerOf(req, n), body });
        res.writeHead(answer.status, answer.headers).end(answer.body);
      } catch (error) {
        options.log.error({ err: error }, "the Slack endpoint failed");
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "internal error" }));
      }
      return true;
    },
  };
}

function headerOf(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
}
