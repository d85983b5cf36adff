// GitHub hands out App keys as PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`); WebCrypto, and so the
// JWT signing of @octokit/auth-app on Deno and Workers, imports only PKCS#8. A PKCS#1 key
// is wrapped in the PKCS#8 envelope here (DER, no library), and the result is imported
// once, so a malformed key is a clear error at start rather than a failed first webhook.
import { SettingsError } from "../github/settings.ts";

const PKCS1 = /-----BEGIN RSA PRIVATE KEY-----([\s\S]*?)-----END RSA PRIVATE KEY-----/;
const PKCS8 = /-----BEGIN PRIVATE KEY-----([\s\S]*?)-----END PRIVATE KEY-----/;
// AlgorithmIdentifier { rsaEncryption (1.2.840.113549.1.1.1), NULL }
const RSA_ALGORITHM = [0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00];
const VERSION_0 = [0x02, 0x01, 0x00];

function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

function der(tag: number, content: Uint8Array): Uint8Array {
  const head = [tag, ...derLength(content.length)];
  const out = new Uint8Array(head.length + content.length);
  out.set(head);
  out.set(content, head.length);
  return out;
}

function fromBase64(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(clean)) throw new SettingsError("PRIVATE_KEY is not valid PEM: its body is not base64");
  return Uint8Array.from(atob(clean), (c) => c.charCodeAt(0));
}

function toPem(label: string, bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** PKCS#1 RSA key in its PKCS#8 PrivateKeyInfo envelope. */
export function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  const body = new Uint8Array([...VERSION_0, ...RSA_ALGORITHM, ...der(0x04, pkcs1)]);
  return der(0x30, body);
}

/** The key as PKCS#8 PEM and DER, whichever form it came in; a SettingsError saying what is wrong otherwise. */
export function normalizePrivateKey(pem: string): { pem: string; der: Uint8Array } {
  const text = pem.includes("\\n") && !pem.includes("\n") ? pem.replace(/\\n/g, "\n") : pem;
  const pkcs8 = PKCS8.exec(text);
  if (pkcs8) {
    const bytes = fromBase64(pkcs8[1]!);
    return { pem: toPem("PRIVATE KEY", bytes), der: bytes };
  }
  const pkcs1 = PKCS1.exec(text);
  if (pkcs1) {
    const bytes = pkcs1ToPkcs8(fromBase64(pkcs1[1]!));
    return { pem: toPem("PRIVATE KEY", bytes), der: bytes };
  }
  if (/BEGIN (ENCRYPTED|EC|OPENSSH) PRIVATE KEY/.test(text)) {
    throw new SettingsError("PRIVATE_KEY must be the GitHub App's RSA key as GitHub hands it out (BEGIN RSA PRIVATE KEY) or PKCS#8 (BEGIN PRIVATE KEY), unencrypted");
  }
  throw new SettingsError("PRIVATE_KEY must be a PEM private key (-----BEGIN RSA PRIVATE KEY----- ... -----END RSA PRIVATE KEY-----)");
}

const PROOF = new TextEncoder().encode("hcp-bot: does this private key match its public half?");

/**
 * A key can parse and import yet be damaged (one base64 character flipped in its modulus or
 * primes): every JWT it signs would then be refused by GitHub. A test signature, verified
 * with the public half the key itself names, tells the two apart at start.
 */
async function provesItself(der: Uint8Array): Promise<boolean> {
  const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  const key = await crypto.subtle.importKey("pkcs8", der as Uint8Array<ArrayBuffer>, algorithm, true, ["sign"]);
  const { n, e } = await crypto.subtle.exportKey("jwk", key);
  const publicHalf = await crypto.subtle.importKey("jwk", { kty: "RSA", n, e, alg: "RS256", ext: true }, algorithm, false, ["verify"]);
  const signature = await crypto.subtle.sign(algorithm, key, PROOF);
  return crypto.subtle.verify(algorithm, publicHalf, signature, PROOF);
}

/**
 * Imports the key for RS256 once and proves it signs what its public half verifies, so a
 * damaged key stops start-up with a clear error (the edge hosts and the Node server alike).
 */
export async function checkPrivateKey(pem: string): Promise<string> {
  const key = normalizePrivateKey(pem);
  let consistent: boolean;
  try {
    consistent = await provesItself(key.der);
  } catch (error) {
    throw new SettingsError(`PRIVATE_KEY is not a usable RSA private key (${(error as Error).message}): use the .pem file GitHub generated for the App`);
  }
  if (!consistent) throw new SettingsError("PRIVATE_KEY is damaged: a signature made with it does not verify with its own public half (a changed character?); use the .pem file GitHub generated for the App");
  return key.pem;
}
