// Which GitHub failures leave it open whether the work was done, and which requests may be
// sent again then. No Octokit import: the edge and the Slack core load this too.

interface HttpError {
  status?: number;
}

/**
 * A 5xx or a network failure: GitHub may or may not have done the work. Only a request that
 * does the same thing when repeated may be sent again then; a POST that creates something
 * (a dispatch is a GPU run, a comment is a comment) is not retried here: its caller looks
 * first (github/writes.ts).
 */
export function isAmbiguousFailure(error: unknown): boolean {
  const status = (error as HttpError).status;
  if (status === undefined) return true; // network failure before any answer
  return status >= 500 && status !== 501;
}

// POSTs that create nothing twice: GraphQL (the bot only reads through it), a new installation
// token, a reaction (GitHub answers 200 with the existing one), a run cancel (409 once done).
const REPEATABLE_POST = [/^\/graphql$/, /\/access_tokens$/, /\/reactions$/, /\/actions\/runs\/\d+\/cancel$/];

export function isRepeatable(options: unknown): boolean {
  const o = options as { method?: string; url?: string };
  const method = (o.method ?? "GET").toUpperCase();
  if (method !== "POST") return true; // GET, PATCH, PUT, DELETE: the same request has the same effect
  const path = (o.url ?? "").replace(/^[a-z]+:\/\/[^/]+/i, "").replace(/^\/api\/v3/, "").replace(/\?.*$/, "");
  return REPEATABLE_POST.some((re) => re.test(path));
}

