// The signature check itself: Slack's documented example, the replay window both ways, with
// WebCrypto (the edge hosts) and with the node:crypto HMAC the Node server brings.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_SKEW_SECONDS, signSlackBody, verifySlackSignature, type HmacSha256 } from "../../src/slack/signature.ts";

// https://api.slack.com/authentication/verifying-requests-from-slack (the published example).
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const TS = "1531420618";
const BODY = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

const nodeHmac: HmacSha256 = (secret, message) => createHmac("sha256", secret).update(message).digest();

describe.each([
  ["WebCrypto", undefined],
  ["node:crypto", nodeHmac],
] as const)("verifySlackSignature with %s", (_name, hmac) => {
  it("accepts Slack's documented example", async () => {
    expect(await verifySlackSignature(SECRET, { signature: SIGNATURE, timestamp: TS }, BODY, Number(TS) + 10, hmac)).toEqual({ ok: true, timestamp: Number(TS) });
    expect(await signSlackBody(SECRET, Number(TS), BODY)).toBe(SIGNATURE);
  });

  it("refuses a changed body, a wrong secret, a signature off by one digit and malformed headers", async () => {
    const now = Number(TS);
    const lastDigit = SIGNATURE.at(-1) === "3" ? "4" : "3";
    expect(await verifySlackSignature(SECRET, { signature: SIGNATURE, timestamp: TS }, `${BODY}x`, now, hmac)).toMatchObject({ ok: false, reason: "signature mismatch" });
    expect(await verifySlackSignature("other", { signature: SIGNATURE, timestamp: TS }, BODY, now, hmac)).toMatchObject({ ok: false, reason: "signature mismatch" });
    expect(await verifySlackSignature(SECRET, { signature: SIGNATURE.slice(0, -1) + lastDigit, timestamp: TS }, BODY, now, hmac)).toMatchObject({ ok: false, reason: "signature mismatch" });
    expect((await verifySlackSignature(SECRET, { signature: "v1=abc", timestamp: TS }, BODY, now, hmac)).ok).toBe(false);
    expect((await verifySlackSignature(SECRET, { signature: SIGNATURE, timestamp: "12a" }, BODY, now, hmac)).ok).toBe(false);
    expect((await verifySlackSignature(SECRET, { signature: null, timestamp: TS }, BODY, now, hmac)).ok).toBe(false);
  });
});

describe("verifySlackSignature", () => {
  it("refuses timestamps more than five minutes in the past or the future", async () => {
    const ts = Number(TS);
    expect(await verifySlackSignature(SECRET, { signature: SIGNATURE, timestamp: TS }, BODY, ts + MAX_SKEW_SECONDS + 1)).toMatchObject({ ok: false, reason: /stale/ });
    expect(await verifySlackSignature(SECRET, { signature: SIGNATURE, timestamp: TS }, BODY, ts - MAX_SKEW_SECONDS - 1)).toMatchObject({ ok: false, reason: /future/ });
    expect((await verifySlackSignature(SECRET, { signature: SIGNATURE, timestamp: TS }, BODY, ts + MAX_SKEW_SECONDS)).ok).toBe(true);
  });
});
