// Sessions of the runs pages, held by the browser: an AES-GCM sealed cookie (authenticated
// encryption, so it is both signed and unreadable: the user's GitHub token inside never
// shows), HttpOnly, SameSite=Lax, Secure on https. Nothing is stored on the server, so any
// replica can read any session. WebCrypto only: runtime-neutral.
import * as z from "zod";
import { fromBase64Url, toBase64Url } from "../base64url.ts";

export const SessionSchema = z.object({
  login: z.string().min(1).max(100),
  token: z.string().min(1).max(1000),
  /** Per-session secret echoed by the sign-out form (CSRF). */
  csrf: z.string().min(16).max(100),
  /** Expiry, ms since the epoch. */
  exp: z.number().int(),
});
export type Session = z.infer<typeof SessionSchema>;

export const OAuthStateSchema = z.object({
  state: z.string().min(16).max(100),
  returnTo: z.string().max(2000),
  exp: z.number().int(),
});
export type OAuthState = z.infer<typeof OAuthStateSchema>;

export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
export const STATE_TTL_MS = 10 * 60 * 1000;

export function randomToken(bytes = 24): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** Seals and opens small JSON values under one key derived from the configured secret. */
export class Sealer {
  private readonly key: Promise<CryptoKey>;

  constructor(secret: string, private readonly now: () => number = Date.now) {
    this.key = (async () => {
      const base = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new TextEncoder().encode("hcp-bot web"), info: new TextEncoder().encode("session cookie v1") },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
  }

  /** `purpose` is bound into the ciphertext: a state cookie cannot be replayed as a session. */
  async seal(purpose: string, value: object): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const data = new TextEncoder().encode(JSON.stringify(value));
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(purpose) }, await this.key, data));
    const out = new Uint8Array(iv.length + sealed.length);
    out.set(iv);
    out.set(sealed, iv.length);
    return toBase64Url(out);
  }

  /** The value, or undefined when the text was not sealed by us for this purpose, is malformed or expired. */
  async open<T extends { exp: number }>(purpose: string, text: string | undefined, schema: z.ZodType<T>): Promise<T | undefined> {
    if (!text || text.length > 4096) return undefined;
    const bytes = fromBase64Url(text);
    if (!bytes || bytes.length < 12 + 16) return undefined;
    try {
      const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: new TextEncoder().encode(purpose) }, await this.key, bytes.slice(12));
      const parsed = schema.safeParse(JSON.parse(new TextDecoder().decode(plain)));
      return parsed.success && parsed.data.exp > this.now() ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }
}

export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie") ?? "";
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  path?: string;
  maxAgeSeconds?: number;
}

/** `__Host-` names (no Domain, Path=/, Secure) where the site is https. */
export function cookieName(base: string, secure: boolean): string {
  return secure ? `__Host-${base}` : base;
}

export function setCookie(name: string, value: string, o: CookieOptions): string {
  return [
    `${name}=${value}`,
    `Path=${o.path ?? "/"}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(o.secure ? ["Secure"] : []),
    ...(o.maxAgeSeconds !== undefined ? [`Max-Age=${o.maxAgeSeconds}`] : []),
  ].join("; ");
}

export function clearCookie(name: string, o: CookieOptions): string {
  return setCookie(name, "", { ...o, maxAgeSeconds: 0 });
}

/** Constant-time comparison of two short strings (state, CSRF tokens). */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
