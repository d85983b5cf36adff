// The few Slack Web API calls the app makes, over plain fetch. The base URL comes from
// SLACK_API_URL so a proxy or a test double can stand in for slack.com.
import type { SlackMessage } from "../core/render/slack.ts";

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

export function createSlackWebApi(options: { token: string; apiUrl: string; fetch?: typeof fetch; timeoutMs?: number }): SlackWebApi {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function call(method: string, body: object): Promise<ApiAnswer> {
    const res = await doFetch(new URL(method, options.apiUrl), {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${options.token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = (await res.json().catch(() => ({}))) as ApiAnswer;
    if (!res.ok || answer.ok !== true) throw new SlackApiError(method, answer.error ?? `HTTP ${res.status}`);
    return answer;
  }

  return {
    async postMessage(channel, message) {
      // unfurl off: the run links would otherwise expand into large previews.
      const answer = await call("chat.postMessage", { channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false });
      return { channel: answer.channel ?? channel, ts: answer.ts ?? "" };
    },
    async update(channel, ts, message) {
      await call("chat.update", { channel, ts, text: message.text, blocks: message.blocks });
    },
    async respond(responseUrl, message, opts = {}) {
      const res = await doFetch(responseUrl, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ response_type: opts.inChannel ? "in_channel" : "ephemeral", replace_original: opts.replaceOriginal ?? false, text: message.text, blocks: message.blocks }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.text();
      if (!res.ok) throw new SlackApiError("response_url", `HTTP ${res.status}`);
    },
  };
}
