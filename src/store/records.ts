// The rules every Store implementation shares: input validation, the status lifecycle,
// the timestamps that follow a status, and argument checks. Implementations only decide
// where the records live.
import {
  AUDIT_LIMIT_MAX,
  AuditRecordSchema,
  NewJobSchema,
  NewSmokeRequestSchema,
  SmokeRequestPatchSchema,
  StoreError,
  TERMINAL_STATUSES,
  TRANSITIONS,
  type AuditInput,
  type AuditRecord,
  type Job,
  type LeaseResult,
  type NewJob,
  type NewSmokeRequest,
  type SmokeListQuery,
  type SmokeRequest,
  type SmokeRequestPatch,
  type UpdateResult,
} from "./types.ts";

/** Throws a StoreError naming the first bad field: a caller bug, not a user error. */
function parseOrThrow<T>(what: string, parse: () => { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } }): T {
  const result = parse();
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(record)";
  throw new StoreError(`invalid ${what}: ${where}: ${issue?.message ?? "invalid"}`);
}

export function newRequest(input: NewSmokeRequest, id: string, now: Date): SmokeRequest {
  const data = parseOrThrow("smoke request", () => NewSmokeRequestSchema.safeParse(input));
  return {
    ...data,
    id,
    runId: null,
    checkRunId: null,
    verdictStatus: null,
    verdictSummary: null,
    verdict: null,
    comparison: null,
    createdAt: now,
    updatedAt: now,
    dispatchedAt: null,
    startedAt: null,
    finishedAt: data.status === "refused" ? now : null,
  };
}

/** The patched record, or why the patch does not apply (the record is unchanged then). */
export function applyPatch(current: SmokeRequest, rawPatch: SmokeRequestPatch, now: Date): UpdateResult {
  const patch = parseOrThrow("smoke request patch", () => SmokeRequestPatchSchema.safeParse(rawPatch));
  if (patch.runId !== undefined && current.runId !== null && patch.runId !== current.runId) {
    // Checked inside the store's write transaction: of two runs claiming one request, one wins.
    return { ok: false, reason: "run-bound", detail: `smoke request ${current.id} already follows run ${current.runId}`, request: current };
  }
  const next: SmokeRequest = { ...current, ...patch, updatedAt: now };
  const to = patch.status;
  if (to !== undefined && to !== current.status) {
    if (!TRANSITIONS[current.status].includes(to)) {
      return { ok: false, reason: "bad-transition", detail: `a smoke request cannot go from ${current.status} to ${to}`, request: current };
    }
    // Timestamps follow the status unless the event carried its own (GitHub's started_at).
    if (to === "dispatched" && patch.dispatchedAt === undefined) next.dispatchedAt ??= now;
    if (to === "running" && patch.startedAt === undefined) next.startedAt ??= now;
    if (TERMINAL_STATUSES.includes(to) && patch.finishedAt === undefined) next.finishedAt ??= now;
  }
  return { ok: true, request: next };
}

export function newAudit(input: AuditInput, id: number, now: Date): AuditRecord {
  const data = parseOrThrow("audit record", () => AuditRecordSchema.safeParse(input));
  return { ...data, at: data.at ?? now, id };
}

export function newJob(input: NewJob, id: string, now: Date, claim: string | null): Job {
  const data = parseOrThrow("job", () => NewJobSchema.safeParse(input));
  return { ...data, id, claim, attempts: 0, leaseOwner: null, leaseUntil: null, createdAt: now };
}

export function checkLease(owner: string, seconds: number): void {
  if (owner.length === 0 || owner.length > 200) throw new StoreError(`a lease owner must have 1 to 200 characters (got ${owner.length})`);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new StoreError(`a lease must last a positive number of seconds (got ${seconds})`);
}

export function checkClaim(key: string, ttlSeconds: number): void {
  if (key.length === 0 || key.length > 512) throw new StoreError(`an idempotency key must have 1 to 512 characters (got ${key.length})`);
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) throw new StoreError(`ttlSeconds must be a positive number (got ${ttlSeconds})`);
}

export function auditLimit(limit: number | undefined): number {
  if (limit === undefined) return 100;
  if (!Number.isInteger(limit) || limit < 1) throw new StoreError(`the audit log limit must be a positive integer (got ${limit})`);
  return Math.min(limit, AUDIT_LIMIT_MAX);
}

/** GPU runs a request stands for in quotas and caps: an A/B request runs two legs. */
export function gpuRunsOf(r: { compare?: string }): number {
  return r.compare === "p2p" || r.compare === "a2a" ? 2 : 1;
}

export function sumRuns(requests: readonly { compare?: string }[]): number {
  return requests.reduce((n, r) => n + gpuRunsOf(r), 0);
}

/** Start of the UTC day of `now`: the window of `quotas.per_user_per_day`. */
export function utcDayStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

export const LIST_LIMIT_MAX = 200;

/** A page of the history from the requests of the query's repositories (for stores without a query language). */
export function pageOfRequests(found: readonly SmokeRequest[], q: SmokeListQuery): SmokeRequest[] {
  const limit = listLimit(q.limit);
  const before = q.before;
  return found
    .filter(
      (r) =>
        (q.status === undefined || r.status === q.status) &&
        (q.githubLogin === undefined || r.githubLogin === q.githubLogin) &&
        (q.pr === undefined || r.pr === q.pr) &&
        (before === undefined || r.createdAt < before.createdAt || (r.createdAt.getTime() === before.createdAt.getTime() && r.id < before.id)),
    )
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, limit);
}

export function listLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) throw new StoreError(`the list limit must be a positive integer (got ${limit})`);
  return Math.min(limit, LIST_LIMIT_MAX);
}

/** Whether a record is still there at `now`: one whose expiresAt has passed is gone from every read. */
export function isLive(record: { expiresAt?: Date | null }, now: Date | number): boolean {
  // A record written before expiry existed has no field at all: it is kept.
  return !record.expiresAt || record.expiresAt.getTime() > (typeof now === "number" ? now : now.getTime());
}

export const closedError = (): StoreError => new StoreError("the store is closed");

/** Why a lease cannot be taken now, from the job alone (the key's order is checked by the caller). */
export function leaseRefusal(job: Job, owner: string, now: number): LeaseResult | undefined {
  const until = job.leaseUntil?.getTime();
  if (until === undefined || until <= now) return undefined;
  if (job.leaseOwner === null) return { ok: false, reason: "delayed", until: job.leaseUntil! };
  if (job.leaseOwner !== owner) return { ok: false, reason: "busy", until: job.leaseUntil! };
  return undefined;
}
