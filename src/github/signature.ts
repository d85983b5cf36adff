// GitHub's webhook signature, `x-hub-signature-256: sha256=<hex HMAC-SHA256 of the body>`,
// checked with WebCrypto (src/core/crypto/hmac.ts): the edge hosts verify a delivery with
// this before loading the app's modules.
import { hmacMatches, type HmacSha256 } from "../core/crypto/hmac.ts";

export type { HmacSha256 };

export const SIGNATURE_FORM = /^sha256=[0-9a-f]{64}$/;

/** False for a missing, malformed or forged signature (never a throw). `hmac`: the host's own (WebCrypto's otherwise). */
export async function verifyWebhookSignature(secret: string, body: string, header: string | null, hmac?: HmacSha256): Promise<boolean> {
  if (!header || !SIGNATURE_FORM.test(header)) return false;
  return hmacMatches(secret, body, header.slice("sha256=".length), hmac);
}
