// HMAC-SHA256 signatures of webhook bodies (GitHub's x-hub-signature-256, Slack's v0), with
// WebCrypto, which Node, Deno, Workers and browsers all have. A host may bring its own HMAC
// (the Node server passes node:crypto's: WebCrypto there hands each HMAC to the thread pool);
// the digest is then compared here in constant time.

/** HMAC-SHA256 of `message` under `secret`: the 32-byte digest. */
export type HmacSha256 = (secret: string, message: string) => Uint8Array | Promise<Uint8Array>;

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    keys.set(secret, key);
  }
  return key;
}

export async function webCryptoHmac(secret: string, message: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(message)));
}

/** Equal bytes, in time that depends only on the length (the length of a digest is no secret). */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** A SHA-256 digest written as 64 lower-case hex digits, as bytes; undefined for anything else. */
function digestBytes(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[0-9a-f]{64}$/.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Whether `hex` is the HMAC-SHA256 of `message` under `secret`; false for a malformed `hex` (never a throw). */
export async function hmacMatches(secret: string, message: string, hex: string, hmac?: HmacSha256): Promise<boolean> {
  const given = digestBytes(hex);
  if (!given) return false;
  return hmac ? constantTimeEqual(await hmac(secret, message), given) : crypto.subtle.verify("HMAC", await hmacKey(secret), given, encoder.encode(message));
}

export const toHex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
