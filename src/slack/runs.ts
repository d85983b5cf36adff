// The channel message that follows a smoke run: posted when the run is dispatched (in the
// channel `/hcp smoke` was typed in, or the repo's `slack.notify_channel` for runs asked
// on GitHub), then edited in place with chat.update at every state change. The message's
// channel and ts live on the smoke request in the store, so updates survive a restart.
import { planOfRequest, type SmokeState } from "../core/render/smoke.ts";
import { smokeMessage, type SlackSmokeView } from "../core/render/slack.ts";
import type { SmokeRequest, Store } from "../store/types.ts";
import type { SlackPosted, SlackWebApi } from "./web-api.ts";

export interface SlackRunsDeps {
  web: SlackWebApi;
  store: Store;
  /** GitHub's web address (https://github.com or the GHE host), for PR and check-run links. */
  webUrl: string;
  /** The repo's notify channel for runs asked on GitHub; undefined when none (or Slack cannot tell). */
  notifyChannel: (repo: string) => Promise<string | undefined>;
  log: { warn(obj: object, msg?: string): void };
}

export interface SlackRuns {
  /** A Slack command is about to dispatch: where its message goes. */
  expect(deliveryId: string, where: { channel: string; slackUser: string }): void;
  forget(deliveryId: string): void;
  /** Whether the request's channel message exists (waits for a post in flight). */
  posted(requestId: string): Promise<boolean>;
  /** SmokeDeps.notify */
  notify(request: SmokeRequest, state: SmokeState): Promise<void>;
}

export function viewOf(request: SmokeRequest, webUrl: string): SlackSmokeView {
  const slackUser = request.slackUser?.split(":")[1] ?? null;
  return {
    requestId: request.id,
    requester: request.githubLogin,
    sha: request.sha,
    repo: request.repo,
    pr: request.pr,
    prUrl: `${webUrl}/${request.repo}/pull/${request.pr}`,
    checkRunUrl: request.checkRunId ? `${webUrl}/${request.repo}/runs/${request.checkRunId}` : null,
    runUrl: request.runUrl,
    slackUser,
    plan: planOfRequest(request),
  };
}

export function createSlackRuns(deps: SlackRunsDeps): SlackRuns {
  const expected = new Map<string, { channel: string; slackUser: string }>();
  /** Posts in flight, by request id: a fast second state change waits for the first post. */
  const posting = new Map<string, Promise<SlackPosted | undefined>>();

  async function post(request: SmokeRequest, channel: string, state: SmokeState): Promise<SlackPosted | undefined> {
    try {
      const posted = await deps.web.postMessage(channel, smokeMessage(viewOf(request, deps.webUrl), state));
      await deps.store.updateSmokeRequest(request.id, { slackChannel: posted.channel, slackTs: posted.ts });
      return posted;
    } catch (error) {
      deps.log.warn({ err: error, request: request.id, channel }, "posting the smoke run to Slack failed");
      return undefined;
    }
  }

  async function channelFor(request: SmokeRequest): Promise<string | undefined> {
    if (request.source === "slack") return request.deliveryId ? expected.get(request.deliveryId)?.channel : undefined;
    return deps.notifyChannel(request.repo);
  }

  return {
    expect(deliveryId, where) {
      expected.set(deliveryId, where);
    },
    forget(deliveryId) {
      expected.delete(deliveryId);
    },
    async posted(requestId) {
      const inFlight = posting.get(requestId);
      if (inFlight) return (await inFlight) !== undefined;
      const request = await deps.store.getSmokeRequest(requestId);
      return Boolean(request?.slackTs);
    },
    async notify(request, state) {
      // The caller's copy may predate our post; the store and the in-flight map know better.
      const inFlight = posting.get(request.id);
      const earlier = inFlight ? await inFlight : undefined;
      const stored = earlier ?? (request.slackChannel && request.slackTs ? { channel: request.slackChannel, ts: request.slackTs } : undefined);
      const current = (await deps.store.getSmokeRequest(request.id)) ?? request;
      const where = stored ?? (current.slackChannel && current.slackTs ? { channel: current.slackChannel, ts: current.slackTs } : undefined);
      if (where) {
        await deps.web.update(where.channel, where.ts, smokeMessage(viewOf(current, deps.webUrl), state));
        return;
      }
      if (state.kind !== "dispatched") return; // only a new run starts a message
      const channel = await channelFor(current);
      if (!channel) return;
      const p = post(current, channel, state);
      posting.set(request.id, p);
      try {
        await p;
      } finally {
        // Keep the result briefly so a racing update finds it without the store.
        setTimeout(() => posting.delete(request.id), 60_000).unref?.();
      }
    },
  };
}
