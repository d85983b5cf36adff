// Slack request signatures (v0), checked with src/core/crypto/hmac.ts so the same code runs
// on Node, Deno and Workers (a host may bring its own HMAC-SHA256, as the Node server does).
import { hmacMatches, toHex, webCryptoHmac, type HmacSha256 } from "../core/crypto/hmac.ts";

export type { HmacSha256 };

/** Slack's replay window; we refuse requests this far in the past and in the future. */
export const MAX_SKEW_SECONDS = 5 * 60;

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * Checks `x-slack-signature` (`v0=` + hex HMAC-SHA256 of `v0:TIMESTAMP:BODY`) and
 * `x-slack-request-timestamp` against the raw body. `nowSeconds` is injectable for tests.
 */
export async function verifySlackSignature(
  secret: string,
  headers: { signature: string | null; timestamp: string | null },
  rawBody: string,
  nowSeconds: number,
  hmac?: HmacSha256,
): Promise<SignatureCheck> {
  if (!headers.signature || !headers.timestamp) return { ok: false, reason: "missing x-slack-signature or x-slack-request-timestamp" };
  if (!/^\d{1,12}$/.test(headers.timestamp)) return { ok: false, reason: "malformed x-slack-request-timestamp" };
  const timestamp = Number(headers.timestamp);
  if (nowSeconds - timestamp > MAX_SKEW_SECONDS) return { ok: false, reason: "stale timestamp (older than 5 minutes)" };
  if (timestamp - nowSeconds > MAX_SKEW_SECONDS) return { ok: false, reason: "timestamp in the future" };
  if (!/^v0=[0-9a-f]{64}$/.test(headers.signature)) return { ok: false, reason: "malformed x-slack-signature" };
  const valid = await hmacMatches(secret, `v0:${headers.timestamp}:${rawBody}`, headers.signature.slice(3), hmac);
  return valid ? { ok: true, timestamp } : { ok: false, reason: "signature mismatch" };
}

/** `v0=` signature for a body (tests, the benchmark). */
export async function signSlackBody(secret: string, timestamp: number, rawBody: string): Promise<string> {
  return `v0=${toHex(await webCryptoHmac(secret, `v0:${timestamp}:${rawBody}`))}`;
}
