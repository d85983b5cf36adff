// The few Slack Web API calls the app makes, over plain fetch. The base URL comes from
// SLACK_API_URL so a proxy or a test double can stand in for slack.com.
//
// Slack answers a rate limit with HTTP 429 and Retry-After (seconds): the call waits that
// long and is sent again. A 5xx or a dropped connection is retried with backoff where sending
// again is harmless (chat.update and response_url replace; a chat.postMessage after a 5xx may
// have posted, so only its 429 is retried). Updates of one message go out one at a time in
// the order asked; an update still waiting when a newer one arrives is dropped, so an older
// state never lands after a newer one. Past RETRY_HORIZON_MS of waiting the call fails.
import type { SlackMessage } from "../core/render/slack.ts";

/** The most one call waits in all (Slack's limits are per minute). */
export const RETRY_HORIZON_MS = 5 * 60_000;
const SERVER_ERROR_TRIES = 5;

export interface SlackPosted {
  channel: string;
  ts: string;
}

export interface SlackWebApi {
  postMessage(channel: string, message: SlackMessage): Promise<SlackPosted>;
  update(channel: string, ts: string, message: SlackMessage): Promise<void>;
  /** A reply through a slash command's response_url (ephemeral unless told otherwise). */
  respond(responseUrl: string, message: SlackMessage, options?: { replaceOriginal?: boolean; inChannel?: boolean }): Promise<void>;
}

export class SlackApiError extends Error {
  override name = "SlackApiError";
  constructor(
    readonly method: string,
    readonly code: string,
  ) {
    super(`Slack ${method} failed: ${code}`);
  }
}

interface ApiAnswer {
  ok?: boolean;
  error?: string;
  channel?: string;
  ts?: string;
}

export type SlackWaitReason = "rate-limit" | "server-error";

/** Hears the client's waits and give-ups (the Node server's /metrics). */
export interface SlackWaitObserver {
  onWait?: (e: { method: string; reason: SlackWaitReason; ms: number }) => void;
  /** A call that failed although Slack asked for (or a 5xx invited) another try: past the horizon, or out of 5xx tries. */
  onGiveUp?: (e: { method: string; reason: SlackWaitReason }) => void;
}

export interface SlackWebApiOptions extends SlackWaitObserver {
  token: string;
  apiUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** How the client waits before a retry (tests hand in one that does not really sleep). */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The wait before sending again, or undefined when this answer is final. */
function retryWait(status: number | undefined, retryAfter: string | null, serverTries: number, repeatable: boolean): { ms: number; reason: SlackWaitReason } | undefined {
  if (status === 429) {
    const seconds = Number(retryAfter);
    return { ms: Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 30_000, reason: "rate-limit" };
  }
  const failed = status === undefined || status >= 500;
  if (!failed || !repeatable || serverTries >= SERVER_ERROR_TRIES) return undefined;
  return { ms: 1000 * 2 ** serverTries, reason: "server-error" };
}

export function createSlackWebApi(options: SlackWebApiOptions): SlackWebApi {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const sleep = options.sleep ?? realSleep;

  /** Sends until an answer is final; `current` false drops the call (a newer update superseded it). */
  async function send(method: string, url: string | URL, init: { headers: Record<string, string>; body: string }, repeatable: boolean, current: () => boolean = () => true): Promise<Response | undefined> {
    let waited = 0;
    for (let serverTries = 0; ; ) {
      if (!current()) return undefined;
      let res: Response | undefined;
      let failure: unknown;
      try {
        res = await doFetch(url, { method: "POST", ...init, signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        failure = error;
      }
      const wait = retryWait(res?.status, res?.headers.get("retry-after") ?? null, serverTries, repeatable);
      if (!wait || waited + wait.ms > RETRY_HORIZON_MS) {
        if (wait) options.onGiveUp?.({ method, reason: wait.reason });
        else if (repeatable && serverTries >= SERVER_ERROR_TRIES && (res === undefined || res.status >= 500)) options.onGiveUp?.({ method, reason: "server-error" });
        if (res) return res;
        throw failure;
      }
      await res?.body?.cancel();
      if (wait.reason === "server-error") serverTries++;
      options.onWait?.({ method, ...wait });
      await sleep(wait.ms);
      waited += wait.ms;
    }
  }

  async function call(method: string, body: object, repeatable: boolean, current?: () => boolean): Promise<ApiAnswer | undefined> {
    const res = await send(method, new URL(method, options.apiUrl), { headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${options.token}` }, body: JSON.stringify(body) }, repeatable, current);
    if (!res) return undefined;
    const answer = (await res.json().catch(() => ({}))) as ApiAnswer;
    if (!res.ok || answer.ok !== true) throw new SlackApiError(method, answer.error ?? `HTTP ${res.status}`);
    return answer;
  }

  /** Per message: the newest update asked for, and the chain its updates go out on. */
  const updates = new Map<string, { newest: number; tail: Promise<void> }>();

  return {
    async postMessage(channel, message) {
      // unfurl off: the run links would otherwise expand into large previews.
      const answer = (await call("chat.postMessage", { channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false }, false))!;
      return { channel: answer.channel ?? channel, ts: answer.ts ?? "" };
    },
    async update(channel, ts, message) {
      const key = `${channel}:${ts}`;
      const entry = updates.get(key) ?? { newest: 0, tail: Promise.resolve() };
      const mine = ++entry.newest;
      const run = entry.tail.then(async () => {
        await call("chat.update", { channel, ts, text: message.text, blocks: message.blocks }, true, () => entry.newest === mine);
      });
      entry.tail = run.catch(() => {});
      updates.set(key, entry);
      try {
        await run;
      } finally {
        if (updates.get(key) === entry && entry.newest === mine) updates.delete(key);
      }
    },
    async respond(responseUrl, message, opts = {}) {
      const body = JSON.stringify({ response_type: opts.inChannel ? "in_channel" : "ephemeral", replace_original: opts.replaceOriginal ?? false, text: message.text, blocks: message.blocks });
      const res = (await send("response_url", responseUrl, { headers: { "content-type": "application/json; charset=utf-8" }, body }, true))!;
      await res.text();
      if (!res.ok) throw new SlackApiError("response_url", `HTTP ${res.status}`);
    },
  };
}
