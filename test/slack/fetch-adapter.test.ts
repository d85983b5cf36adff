// The Slack core as a fetch-style handler (the shape Deno and Workers serve): a signed
// Request in, the ack Response out, the work scheduled for after the ack.
import { describe, expect, it } from "vitest";
import { claimThenSchedule, createSlackCore, fetchAdapter, type DeferredCommand } from "../../src/slack/endpoint.ts";
import { signSlackBody } from "../../src/slack/signature.ts";
import { MemoryStore } from "../../src/store/index.ts";
import { slashCommandForm } from "../support/slack-form.ts";

const SECRET = "edge-secret";

function form(text: string, trigger: string): string {
  return slashCommandForm(text, { trigger_id: trigger });
}

async function signed(body: string, now: number, secret = SECRET): Promise<Request> {
  return new Request("https://bot.example.invalid/slack/events", {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(now),
      "x-slack-signature": await signSlackBody(secret, now, body),
    },
    body,
  });
}

describe("fetchAdapter", () => {
  const now = 1_800_000_000;
  const scheduled: { key: string; command: DeferredCommand }[] = [];
  const handle = fetchAdapter(
    createSlackCore({ signingSecret: SECRET, accept: claimThenSchedule(new MemoryStore(), (key, _work, command) => void scheduled.push({ key, command })), nowSeconds: () => now }),
  );

  it("acks a signed smoke command at once and schedules its work, once per trigger", async () => {
    const body = form("smoke acme/mb#7 cp=4 sizes=2,2", "t-1");
    const res = await handle(await signed(body, now));
    expect(res.status).toBe(200);
    const json = (await res.json()) as { response_type: string; text: string };
    expect(json.response_type).toBe("ephemeral");
    expect(json.text).toMatch(/Smoke run on acme\/mb#7/);
    expect(scheduled).toEqual([{ key: "acme/mb#7", command: expect.objectContaining({ kind: "smoke", cp: 4 }) }]);
    const retry = await handle(await signed(body, now));
    expect(((await retry.json()) as { text: string }).text).toMatch(/already received/);
    expect(scheduled).toHaveLength(1);
  });

  it("refuses a forged request and a malformed body", async () => {
    expect((await handle(await signed(form("help", "t-2"), now, "wrong"))).status).toBe(401);
    const bad = await signed("not a form", now);
    expect((await handle(new Request(bad.url, { method: "POST", headers: { ...Object.fromEntries(bad.headers), "content-type": "text/plain" }, body: "not a form" }))).status).toBe(400);
  });
});
