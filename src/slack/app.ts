// The Slack app, whatever serves it: the Web API client, the channel messages that follow
// smoke runs, the command handlers and the request core, wired together. The Node server
// puts Bolt in front of it (src/server/slack.ts); edge hosts answer with `core.handle`.
import type { JobLease } from "../jobs/fence.ts";
import type { Analyzer } from "../core/analyze/analyzer.ts";
import type { SmokeState } from "../core/render/smoke.ts";
import type { AdviseReplies } from "../core/render/layout/advice.ts";
import type { SmokeListener, SmokeService } from "../github/smoke/index.ts";
import type { SmokeRequest, Store } from "../store/types.ts";
import { createSlackCommands, effectiveSlackConfig, type SlackLog, type SlackWork } from "./commands.ts";
import { createSlackCore, type DeferredCommand, type SlackCore, type SlackCoreDeps } from "./endpoint.ts";
import { createSlackRuns } from "./runs.ts";
import { createSlackWebApi, type SlackWaitObserver } from "./web-api.ts";

export const SLACK_EVENTS_PATH = "/slack/events";

export interface SlackAppOptions {
  signingSecret: string;
  botToken: string;
  apiUrl: string;
  /** GitHub REST base URL (https://api.github.com or https://HOST/api/v3), for web links. */
  githubApiUrl: string;
  store: Store;
  analyze: Analyzer;
  log: SlackLog;
  /** How the host takes an acknowledged command's work (with its claim) to run after the ack. */
  accept: SlackCoreDeps["accept"];
  nowSeconds?: () => number;
  /** The host's HMAC-SHA256 for request signatures (default: WebCrypto). */
  hmacSha256?: SlackCoreDeps["hmacSha256"];
  /** SLACK_TEAM_ID (see SlackCommandDeps.teamId). */
  teamId?: string;
  /** Hears the Web API client's waits and give-ups (429 Retry-After, 5xx backoff). */
  slackWaits?: SlackWaitObserver;
  /** Renders `/hcp advise` replies (default: this thread). */
  advise?: AdviseReplies;
  /** The smoke service the commands act through (made once by the host; src/github/smoke/service.ts). */
  smoke: SmokeService;
}

export interface SlackApp {
  core: SlackCore;
  /**
   * Runs an acknowledged command's work (the host calls it after the ack); its writes to GitHub
   * are fenced by the lease of the job that runs it (src/jobs/fence.ts), when there is one.
   */
  run(work: SlackWork, command: DeferredCommand, lease?: JobLease): Promise<void>;
  /** A listener for the smoke service: the channel message follows the run. */
  notify: SmokeListener;
}

export function githubWebUrl(apiUrl: string): string {
  const u = new URL(apiUrl);
  if (u.hostname === "api.github.com") return "https://github.com";
  return `${u.protocol}//${u.host}`;
}

export function createSlackApp(options: SlackAppOptions): SlackApp {
  const web = createSlackWebApi({ token: options.botToken, apiUrl: options.apiUrl, ...options.slackWaits });
  const notifyChannels = new Map<string, { at: number; channel: Promise<string | undefined> }>();

  /** The repo's notify_channel, cached a minute so a run's state changes cost one config read. */
  function notifyChannel(repoFull: string): Promise<string | undefined> {
    const hit = notifyChannels.get(repoFull);
    if (hit && Date.now() - hit.at < 60_000) return hit.channel;
    const [owner, repo] = repoFull.split("/") as [string, string];
    const channel = (async () => {
      const found = await options.smoke.repository(owner, repo);
      if (!found?.config.ok) return undefined;
      return (await effectiveSlackConfig(options.smoke, found, found.config.config)).notify_channel ?? undefined;
    })().catch(() => undefined);
    notifyChannels.set(repoFull, { at: Date.now(), channel });
    return channel;
  }

  const runs = createSlackRuns({ web, store: options.store, webUrl: githubWebUrl(options.githubApiUrl), notifyChannel, log: options.log });
  const run = createSlackCommands({ web, store: options.store, smoke: options.smoke, analyze: options.analyze, runs, log: options.log, ...(options.teamId ? { teamId: options.teamId } : {}) });
  const core = createSlackCore({
    signingSecret: options.signingSecret,
    accept: options.accept,
    limits: options.store,
    ...(options.advise ? { advise: options.advise } : {}),
    ...(options.nowSeconds ? { nowSeconds: options.nowSeconds } : {}),
    ...(options.hmacSha256 ? { hmacSha256: options.hmacSha256 } : {}),
  });
  return {
    core,
    run,
    notify: (request, state) => runs.notify(request, state),
  };
}
