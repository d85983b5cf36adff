// The Slack Web API client against the fake Slack on loopback answering 429 with Retry-After
// and 5xx: waits are honoured (the client's sleep is handed in and recorded; the HTTP is real),
// message updates are neither lost nor reordered, and a post that may have happened is not sent twice.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SlackMessage } from "../../src/core/render/slack.ts";
import { createSlackWebApi, SlackApiError } from "../../src/slack/web-api.ts";
import { startFakeSlack, type FakeSlack } from "../support/fake-slack/index.ts";

let slack: FakeSlack;
const waits: number[] = [];
/** Sleeps for real only a moment, so that calls asked meanwhile can overtake a waiting one if the client let them. */
const sleep = async (ms: number) => {
  waits.push(ms);
  await new Promise((resolve) => setTimeout(resolve, 30));
};
const web = () => createSlackWebApi({ token: "xoxb-test", apiUrl: slack.apiUrl, sleep });
const msg = (text: string): SlackMessage => ({ text, blocks: [{ type: "section", text: { type: "mrkdwn", text } }] });

beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(() => slack?.close());
beforeEach(() => {
  waits.length = 0;
});

describe("Slack Web API faults", () => {
  it("honours Retry-After on a 429 (postMessage, update and response_url)", async () => {
    const api = web();
    slack.inject({ method: "chat.postMessage", status: 429, retryAfter: 7 });
    const posted = await api.postMessage("C1", msg("queued"));
    slack.inject({ method: "chat.update", status: 429, retryAfter: 3, times: 2 });
    await api.update(posted.channel, posted.ts, msg("running"));
    const url = slack.responseUrl("r-429");
    slack.inject({ method: "response_url", status: 429, retryAfter: 1 });
    await api.respond(url, msg("ok"));
    expect(waits).toEqual([7000, 3000, 3000, 1000]);
    expect(slack.messages.get(`${posted.channel}:${posted.ts}`)!.text).toBe("running");
    expect(slack.responses("r-429")).toHaveLength(1);
    expect(slack.violations).toEqual([]);
  });

  it("retries an update after a 5xx with backoff; never re-sends a postMessage after a 5xx (it may have posted)", async () => {
    const api = web();
    const posted = await api.postMessage("C2", msg("queued"));
    slack.inject({ method: "chat.update", status: 503, times: 2 });
    await api.update(posted.channel, posted.ts, msg("done"));
    expect(waits).toEqual([1000, 2000]);
    expect(slack.messages.get(`${posted.channel}:${posted.ts}`)!.text).toBe("done");
    slack.inject({ method: "chat.postMessage", status: 500 });
    const before = slack.calls.length;
    await expect(api.postMessage("C2", msg("again"))).rejects.toThrow(SlackApiError);
    expect(slack.calls.length - before).toBe(1);
  });

  it("keeps updates of one message in order: one rate-limited while newer ones arrive ends with the newest, never an older one", async () => {
    const api = web();
    const posted = await api.postMessage("C3", msg("queued"));
    slack.inject({ method: "chat.update", status: 429, retryAfter: 2 });
    const states = ["dispatched", "in progress", "completed: pass"];
    await Promise.all(states.map((s) => api.update(posted.channel, posted.ts, msg(s))));
    const sent = slack.calls.filter((c) => c.method === "chat.update" && c.body.ts === posted.ts && !c.injected).map((c) => c.body.text);
    expect(sent.at(-1)).toBe("completed: pass");
    // Every update that reached Slack is in the order asked.
    expect(sent).toEqual(states.filter((s) => sent.includes(s)));
    expect(slack.messages.get(`${posted.channel}:${posted.ts}`)!.text).toBe("completed: pass");
  });

  it("gives up after the horizon: a Retry-After past five minutes fails the call at once", async () => {
    const api = web();
    const posted = await api.postMessage("C4", msg("queued"));
    slack.inject({ method: "chat.update", status: 429, retryAfter: 600 });
    await expect(api.update(posted.channel, posted.ts, msg("late"))).rejects.toThrow(/ratelimited/);
    expect(waits).toEqual([]);
  });
});
