// Huge and unsigned webhook bodies at the real Node server's front door: refused before the
// body is read when the signature header is missing, by content-length or while streaming
// past GitHub's 25 MB cap, and verified while streaming; a measured child process bounds RSS.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_WEBHOOK_BYTES } from "../../src/shared/limits.ts";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { FORGED, mb, sendHugeWebhook, startMemoryChild } from "../../bench/support/memory-client.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { appKeys, botSettings, deliverWebhook } from "../support/bot-harness.ts";
import { postWholeThenRead } from "../support/raw-http.ts";

const SECRET = "guard-secret";
let gh: FakeGitHub;
let bot: RunningServer;

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 99, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: 5, account: "acme", accountType: "Organization" });
  gh.addRepo({ owner: "acme", repo: "mb", defaultBranch: "main", installationId: 5, files: { main: { "README.md": "# x\n" } } });
  bot = await startServer(botSettings({ githubUrl: gh.url, appId: 99, secret: SECRET }), { sweepIntervalMs: 0 });
});

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
});

const hook = () => `${bot.url}/api/github/webhooks`;
const ping = (pad = "") => ({ zen: "Keep it logically awesome.", hook_id: 1, pad, repository: { id: 1, name: "mb", full_name: "acme/mb", owner: { login: "acme", id: 2 } } });

describe("the webhook front door on Node", () => {
  it("passes a signed delivery (20 MB) on to the app; refuses a forged one with 401 and calls nothing", async () => {
    const calls = gh.calls.length;
    expect(await deliverWebhook(hook(), SECRET, "ping", ping("x".repeat(20 * 1024 * 1024)))).toBe(200);
    expect(await deliverWebhook(hook(), "not-the-secret", "ping", ping())).toBe(401);
    expect(gh.calls.length).toBe(calls);
  });

  it("answers 400 for a signed body that is not JSON, or not what its event carries, as the edge hosts do, and calls nothing", async () => {
    const calls = gh.calls.length;
    const send = async (event: string, body: string) => {
      const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
      const res = await fetch(hook(), { method: "POST", headers: { "content-type": "application/json", "x-github-event": event, "x-github-delivery": randomUUID(), "x-hub-signature-256": signature }, body });
      return { status: res.status, body: (await res.json()) as { error?: string } };
    };
    const pr = { action: "opened", number: 1, installation: { id: 5 }, repository: ping().repository, sender: { login: "a", id: 3, type: "User" } };
    expect(await send("pull_request", JSON.stringify(pr))).toEqual({ status: 400, body: { error: expect.stringContaining("pull_request delivery without the fields") } });
    // Each field a review's job needs; without one it could only fail, five times, as a poison job.
    const full = { ...pr, pull_request: { number: 1, head: { sha: "a".repeat(40), ref: "x" }, html_url: "u" } };
    expect(await send("pull_request", JSON.stringify({ ...full, pull_request: { number: 1, html_url: "u" } }))).toEqual({ status: 400, body: { error: "a pull_request delivery without the fields of one (no valid pull_request.head.sha)" } });
    expect(await send("pull_request", JSON.stringify({ ...full, pull_request: { head: full.pull_request.head, html_url: "u" } }))).toEqual({ status: 400, body: { error: "a pull_request delivery without the fields of one (no valid pull_request.number)" } });
    const { installation: _, ...noInstallation } = full;
    expect(await send("pull_request", JSON.stringify(noInstallation))).toEqual({ status: 400, body: { error: "a pull_request delivery without the fields of one (no valid installation.id)" } });
    expect(await send("pull_request", "[1,2]")).toEqual({ status: 400, body: { error: "a pull_request delivery whose body is not a JSON object" } });
    expect((await send("pull_request", "{not json")).status).toBe(400);
    expect((await send("ping", "{not json")).status).toBe(400); // an event the app ignores: Probot's own 400
    expect(gh.calls.length).toBe(calls);
  });

  it("refuses a signed body over 25 MB with 413, by content-length and while streaming", async () => {
    const body = JSON.stringify(ping("x".repeat(MAX_WEBHOOK_BYTES)));
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const res = await fetch(hook(), { method: "POST", headers: { "content-type": "application/json", "x-github-event": "ping", "x-github-delivery": randomUUID(), "x-hub-signature-256": signature }, body });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: `webhook body over ${MAX_WEBHOOK_BYTES} bytes` });
    expect(await sendHugeWebhook(bot.port, 30, { signature: FORGED })).toBe(413); // chunked: no content-length to go by
  });

  it("answers 413 to a client that writes a whole body over the cap before it reads, as GitHub's does", async () => {
    const headers = { "content-type": "application/json", "x-github-event": "ping", "x-github-delivery": randomUUID(), "x-hub-signature-256": FORGED };
    for (let i = 0; i < 3; i++) expect(await postWholeThenRead({ url: hook(), headers, prefix: '{"pad":"', bytes: Math.floor(MAX_WEBHOOK_BYTES * 1.5) })).toEqual({ status: 413 });
  });

  it("answers an unsigned delivery 401 before its body is sent", async () => {
    // 50 MB are offered; the answer arrives while the client is still writing.
    expect(await sendHugeWebhook(bot.port, 50)).toBe(401);
    expect(await sendHugeWebhook(bot.port, 50, { signature: "sha256=zz" })).toBe(401);
  });

  it("keeps RSS bounded: eight forged 50 MB bodies at once add well under 8 x 50 MB (a child process, measured)", async () => {
    const child = await startMemoryChild();
    try {
      const before = await child.ask("reset");
      const statuses = await Promise.all(Array.from({ length: 8 }, () => sendHugeWebhook(child.port, 50, { signature: FORGED })));
      const after = await child.ask("peak");
      expect(new Set(statuses)).toEqual(new Set([413]));
      // Each body stops at the 25 MB cap; before the guard the same load added over 600 MB.
      expect(mb(after.peak! - before.rss)).toBeLessThan(300);
    } finally {
      await child.stop();
    }
  });
});
