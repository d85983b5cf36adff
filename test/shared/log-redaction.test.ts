// The edge hosts' console log takes out what the Node logger's redact does: a request's
// credentials (as fetch's Headers hand them over), tokens in fields, one-time codes in URLs.
import { afterEach, describe, expect, it, vi } from "vitest";
import { consoleLog } from "../../src/edge/log.ts";

const TOKEN = "operator-health-token-0123456789";
const SESSION = "s3ss10n-v4lue-that-replays";
const SIG = "ab".repeat(32);

afterEach(() => vi.restoreAllMocks());

describe("the edge log", () => {
  it("writes a request's headers with the credentials redacted, and keeps the rest", () => {
    const written: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void written.push(line));
    vi.spyOn(console, "error").mockImplementation((line: string) => void written.push(line));
    const request = new Request("http://bot.example/auth/callback?code=one-time&state=s&keep=1", {
      headers: { authorization: `Bearer ${TOKEN}`, cookie: `__Host-hcp_session=${SESSION}`, "x-hub-signature-256": `sha256=${SIG}`, "x-slack-signature": `v0=${SIG}`, "user-agent": "GitHub-Hookshot/1" },
    });
    const log = consoleLog("info", { runtime: "deno" });
    log.info({ req: { method: request.method, url: request.url, headers: Object.fromEntries(request.headers) } }, `GET ${request.url}`);
    const failure = Object.assign(new Error("Bad credentials"), { request: { headers: { authorization: "token ghs_installationtoken" } } });
    log.error({ err: failure, botToken: "xoxb-1-2-3", config: { webhookSecret: "whsec" } }, "a call failed");
    const text = written.join("\n");
    for (const secret of [TOKEN, SESSION, SIG, "one-time", "ghs_installationtoken", "xoxb-1-2-3", "whsec"]) expect(text).not.toContain(secret);
    const [first, second] = written.map((l) => JSON.parse(l) as Record<string, any>);
    expect(first!.req.headers).toEqual({ authorization: "[Redacted]", cookie: "[Redacted]", "x-hub-signature-256": "[Redacted]", "x-slack-signature": "[Redacted]", "user-agent": "GitHub-Hookshot/1" });
    expect(first!.req.url).toBe("http://bot.example/auth/callback?code=[Redacted]&state=[Redacted]&keep=1");
    expect(first!.msg).toBe("GET http://bot.example/auth/callback?code=[Redacted]&state=[Redacted]&keep=1");
    expect(second!).toMatchObject({ level: "error", runtime: "deno", botToken: "[Redacted]", config: { webhookSecret: "[Redacted]" }, err: { message: "Bad credentials" } });
  });
});
