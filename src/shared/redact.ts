// What never reaches a log, on every host: credentials a request carries (the operator's
// bearer token, the runs pages' session cookie, GitHub's and Slack's signatures), the ones
// a response sets, and the one-time codes in a URL's query (OAuth's `code`, the App
// manifest's `code`, the setup code), which can be exchanged for a session or the App's key.
// The Node server applies this through pino's `redact` (src/server/logger.ts), the edge
// hosts through their console log (src/edge/log.ts). Runtime-neutral.

export const REDACTED = "[Redacted]";

/** Header names (lower case, as Node and fetch's Headers give them) whose values are secrets. */
export const SECRET_HEADERS = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-hub-signature",
  "x-hub-signature-256",
  "x-slack-signature",
] as const;

const SECRET_QUERY = /([?&](?:code|state|token|access_token|refresh_token|client_secret|setup_code|sig|signature)=)[^&#\s"]*/gi;

/** A URL (or a log message quoting one) with the values of its secret query parameters redacted. */
export function scrubUrl(text: string): string {
  return text.replace(SECRET_QUERY, `$1${REDACTED}`);
}

/** Field names that hold a secret wherever they appear in a logged object. */
const SECRET_KEY = new RegExp(`^(?:${SECRET_HEADERS.join("|")}|[a-z_]*(?:token|secret|password)|private_?key|pem)$`, "i");

/**
 * A copy of `value` with every secret field (by name, at any depth) redacted and URLs in
 * `url` fields scrubbed. Errors and other objects are walked by their own enumerable fields;
 * cycles and depth past 8 end in a placeholder rather than a throw.
 */
export function redactFields(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value) || depth > 8) return "[…]";
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactFields(v, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (SECRET_KEY.test(key) && field !== undefined && field !== null) out[key] = REDACTED;
    else if (key === "url" && typeof field === "string") out[key] = scrubUrl(field);
    else out[key] = redactFields(field, depth + 1, seen);
  }
  return out;
}

/**
 * pino's `redact` paths for the same headers: on a request or response pino-http logs
 * (`req.headers`, `res.headers`), on an Octokit error's request and response
 * (`err.request.headers`), and on a bare `headers` object.
 */
export function pinoRedactPaths(): string[] {
  const owners = ["headers", "*.headers", "*.*.headers"];
  return owners.flatMap((owner) => SECRET_HEADERS.map((name) => `${owner}["${name}"]`)).concat(["req.url", "url", "*.url"]);
}

/** pino's censor: URLs keep their path with the secret query values taken out; everything else becomes REDACTED. */
export function pinoCensor(value: unknown, path: string[]): unknown {
  return path[path.length - 1] === "url" ? (typeof value === "string" ? scrubUrl(value) : value) : REDACTED;
}
