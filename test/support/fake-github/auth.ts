// Who a request is: an app JWT (RS256, iss = app id, short-lived), an installation or user
// token, or nobody; and which operations only an app JWT may call.
import type { IncomingMessage } from "node:http";
import { createPublicKey, verify } from "node:crypto";
import { isObject, type JsonObject } from "./json.ts";
import type { Operation } from "./spec.ts";
import type { FakeState } from "./state.ts";
import { HttpError, type AuthInfo } from "./handlers/common.ts";

// App-level endpoints GitHub only accepts with the app's JWT.
const JWT_OPERATIONS = new Set([
  "apps/get-authenticated", "apps/create-installation-access-token", "apps/get-installation",
  "apps/get-repo-installation", "apps/get-org-installation", "apps/get-user-installation", "apps/list-installations",
]);

const DOCS = "https://docs.github.com/rest";

function decodeJwtPart(part: string): JsonObject | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export interface AuthSettings {
  readonly state: FakeState;
  readonly appId: number;
  /** PEM; when given, app JWT signatures are verified */
  readonly appPublicKey?: string;
  /** default true */
  readonly strictAuth?: boolean;
}

export function authenticate(req: IncomingMessage, op: Operation, s: AuthSettings): AuthInfo | HttpError {
  const header = req.headers.authorization;
  if (!header) return new HttpError(401, { message: "Requires authentication", documentation_url: DOCS, status: "401" });
  const [scheme = "", credential = ""] = header.split(/\s+/, 2);
  if (!/^(token|bearer)$/i.test(scheme) || credential === "") return new HttpError(401, { message: "Bad credentials", documentation_url: DOCS, status: "401" });
  const parts = credential.split(".");
  if (parts.length === 3) {
    const problem = checkJwt(parts, s);
    if (problem) return new HttpError(401, { message: problem, documentation_url: DOCS, status: "401" });
    if (!JWT_OPERATIONS.has(op.operationId)) {
      return new HttpError(403, { message: "Resource not accessible by integration (an app JWT cannot call this; use an installation token)", documentation_url: DOCS, status: "403" });
    }
    return { kind: "jwt", installationId: null };
  }
  if (JWT_OPERATIONS.has(op.operationId)) {
    return new HttpError(401, { message: "A JSON web token could not be decoded", documentation_url: DOCS, status: "401" });
  }
  const token = s.state.tokens.get(credential);
  if (token && token.expiresAt > Date.now()) {
    if (token.user !== undefined) return { kind: "user", installationId: null, user: token.user };
    return { kind: token.installationId === null ? "token" : "installation", installationId: token.installationId };
  }
  if (token || s.strictAuth !== false) return new HttpError(401, { message: "Bad credentials", documentation_url: DOCS, status: "401" });
  return { kind: "token", installationId: null };
}

/** An app JWT: RS256, iss = app id, exp in the future (<= 10 min), signature when a key is configured. */
function checkJwt(parts: string[], settings: AuthSettings): string | undefined {
  const [h = "", p = "", s = ""] = parts;
  const header = decodeJwtPart(h);
  const payload = decodeJwtPart(p);
  if (!header || !payload || header.alg !== "RS256") return "A JSON web token could not be decoded";
  const now = Math.floor(Date.now() / 1000);
  if (String(payload.iss) !== String(settings.appId)) return `'Issuer' claim ('iss') must be an Integer (app id ${settings.appId})`;
  if (typeof payload.exp !== "number" || payload.exp <= now) return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires";
  if (payload.exp - now > 600) return "'Expiration time' claim ('exp') is too far in the future";
  if (settings.appPublicKey) {
    const ok = verify("RSA-SHA256", Buffer.from(`${h}.${p}`), createPublicKey(settings.appPublicKey), Buffer.from(s, "base64url"));
    if (!ok) return "A JSON web token could not be decoded";
  }
  return undefined;
}
