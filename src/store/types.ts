// What the bot remembers between events: idempotency keys (webhook deliveries, comment
// ids, Slack retries), smoke requests and their lifecycle, the audit log, and durable
// jobs (work accepted before the answer, run after it). The interface is async so a
// networked store (Redis, a Durable Object) fits it as well as the embedded SQLite one.
// Schemas are built on first use (z.lazy): zod schemas built at module load cost every
// CLI start and edge cold start, most of them before any request needs them.
import * as z from "zod";
import { MAX_WEBHOOK_BYTES } from "../shared/limits.ts";
import { CompareModeSchema } from "../core/ab/mode.ts";
import { ComparisonSchema } from "../core/ab/schema.ts";
import { VerdictSchema } from "../core/verdict/schema.ts";

export const SMOKE_STATUSES = ["requested", "refused", "dispatched", "queued", "running", "completed", "cancelled", "timed_out", "failed"] as const;
export const SmokeStatusSchema = z.enum(SMOKE_STATUSES);
export type SmokeStatus = z.infer<typeof SmokeStatusSchema>;

/** A GPU job exists (or is about to) for these: they count against the queue cap. */
export const ACTIVE_STATUSES: readonly SmokeStatus[] = ["dispatched", "queued", "running"];
export const TERMINAL_STATUSES: readonly SmokeStatus[] = ["refused", "completed", "cancelled", "timed_out", "failed"];

/**
 * The lifecycle. GitHub may deliver workflow events out of order or skip one (a run that
 * fails before it starts goes queued -> completed), so forward jumps are allowed; going
 * back (running -> queued) or leaving a terminal status is refused.
 */
export const TRANSITIONS: Readonly<Record<SmokeStatus, readonly SmokeStatus[]>> = {
  requested: ["refused", "dispatched", "cancelled", "failed"],
  dispatched: ["queued", "running", "completed", "cancelled", "timed_out", "failed"],
  queued: ["running", "completed", "cancelled", "timed_out", "failed"],
  running: ["completed", "cancelled", "timed_out", "failed"],
  refused: [],
  completed: [],
  cancelled: [],
  timed_out: [],
  failed: [],
};

const Repo = z.string().regex(/^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/, "OWNER/REPO");
const Sha = z.string().regex(/^[0-9a-f]{40}$/, "a 40-character commit SHA");
const PositiveId = z.number().int().positive();

export const SmokeSourceSchema = z.enum(["github-comment", "slack", "check-run-button"]);
export type SmokeSource = z.infer<typeof SmokeSourceSchema>;

/** What the caller knows when a request is made (status starts as `requested` unless given). */
const newSmokeRequestObject = () =>
  z.object({
    repo: Repo,
    pr: PositiveId,
    /** The head SHA pinned when the authorized person asked; the runner checks out exactly this. */
    sha: Sha,
    source: SmokeSourceSchema,
    /** GitHub login of the person who asked (a Slack user is mapped to one before this point). */
    githubLogin: z.string().min(1).max(100),
    /** `TEAM:USER` when the request came from Slack. */
    slackUser: z.string().min(1).max(100).nullable().default(null),
    deliveryId: z.string().min(1).max(200).nullable().default(null),
    recipe: z.string().min(1).max(200),
    cp: PositiveId,
    sizes: z.tuple([PositiveId, PositiveId]).nullable(),
    gpus: PositiveId,
    iters: PositiveId,
    /** The final Hydra override list (SmokePlan.overrides). */
    overrides: z.array(z.string().max(300)).max(100),
    expectHcp: z.boolean(),
    /** `compare=`: none, or the reference layout the same job runs after the HCP leg (twice the GPU time). */
    compare: CompareModeSchema.default("none"),
    status: z.enum(["requested", "refused"]).default("requested"),
    /** Why refused / failed / cancelled, in words for the reply. */
    reason: z.string().max(2000).nullable().default(null),
    slackChannel: z.string().max(100).nullable().default(null),
    slackTs: z.string().max(100).nullable().default(null),
    /** GitHub App installation, so timers (queue timeouts) can act outside a webhook. */
    installationId: PositiveId.nullable().default(null),
    /** The PR comment that tells this request's story, updated as the run goes. */
    commentId: PositiveId.nullable().default(null),
    runUrl: z.string().max(500).nullable().default(null),
    /**
     * When the record is deleted (refusals of people without permission: docs in
     * src/github/refusals.ts); null keeps it. Past it, no read returns the record and the
     * store deletes it (SQL on its next writes, Redis and Deno KV by their own expiry).
     */
    expiresAt: z.date().nullable().default(null),
  });
export const NewSmokeRequestSchema = z.lazy(newSmokeRequestObject);
export type NewSmokeRequest = z.input<typeof NewSmokeRequestSchema>;

export const SmokeRequestSchema = z.lazy(() =>
  newSmokeRequestObject().extend({
    id: z.string().min(1),
    status: SmokeStatusSchema,
    runId: PositiveId.nullable(),
    checkRunId: PositiveId.nullable(),
    /** The bot's own verdict, recomputed from the log: PASS / FAIL / ... (see src/core/verdict). */
    verdictStatus: z.string().max(50).nullable(),
    verdictSummary: z.string().max(4000).nullable(),
    /** The whole verdict (evidence, throughput, cause) for the runs pages; a stored one this version cannot read is unknown. */
    verdict: VerdictSchema.nullable().catch(null),
    /** The A/B comparison of an A/B run (compare ≠ none) once judged; a stored one this version cannot read is unknown. */
    comparison: ComparisonSchema.nullable().catch(null),
    createdAt: z.date(),
    updatedAt: z.date(),
    dispatchedAt: z.date().nullable(),
    startedAt: z.date().nullable(),
    finishedAt: z.date().nullable(),
  }),
);
export type SmokeRequest = z.infer<typeof SmokeRequestSchema>;

/** Fields an event may change; timestamps follow the status unless given. */
export const SmokeRequestPatchSchema = z.lazy(() =>
  z
    .object({
      status: SmokeStatusSchema,
      reason: z.string().max(2000).nullable(),
      runId: PositiveId.nullable(),
      checkRunId: PositiveId.nullable(),
      verdictStatus: z.string().max(50).nullable(),
      verdictSummary: z.string().max(4000).nullable(),
      verdict: VerdictSchema.nullable(),
      comparison: ComparisonSchema.nullable(),
      slackChannel: z.string().max(100).nullable(),
      slackTs: z.string().max(100).nullable(),
      commentId: PositiveId.nullable(),
      runUrl: z.string().max(500).nullable(),
      dispatchedAt: z.date().nullable(),
      startedAt: z.date().nullable(),
      finishedAt: z.date().nullable(),
    })
    .partial()
    .strict(),
);
export type SmokeRequestPatch = z.infer<typeof SmokeRequestPatchSchema>;

export type UpdateResult =
  | { ok: true; request: SmokeRequest }
  | { ok: false; reason: "not-found"; detail: string }
  | { ok: false; reason: "bad-transition"; detail: string; request: SmokeRequest }
  /** The request already follows another workflow run: a run id is set once. */
  | { ok: false; reason: "run-bound"; detail: string; request: SmokeRequest };

export const AuditRecordSchema = z.lazy(() =>
  z.object({
      /** What was asked: smoke, cancel, status, check, help, or a lifecycle event (dispatch, verdict...). */
      action: z.string().min(1).max(50),
      decision: z.enum(["allowed", "denied"]),
      /** Why denied (permission, quota, unmapped Slack user...) or a note on an allowed action. */
      reason: z.string().max(2000).nullable().default(null),
      githubLogin: z.string().max(100).nullable().default(null),
      slackUser: z.string().max(100).nullable().default(null),
      repo: z.string().max(200).nullable().default(null),
      pr: PositiveId.nullable().default(null),
      sha: z.string().max(64).nullable().default(null),
      recipe: z.string().max(200).nullable().default(null),
      deliveryId: z.string().max(200).nullable().default(null),
      requestId: z.string().max(100).nullable().default(null),
      runId: PositiveId.nullable().default(null),
      verdict: z.string().max(50).nullable().default(null),
      /** When the record is deleted, as a smoke request's expiresAt; null keeps it. */
      expiresAt: z.date().nullable().default(null),
      /** Defaults to the store's clock. */
      at: z.date().optional(),
    }),
);
export type AuditInput = z.input<typeof AuditRecordSchema>;
export type AuditRecord = Required<z.output<typeof AuditRecordSchema>> & { id: number };

/** A page of the smoke-run history: newest first, only in the repositories given. */
export interface SmokeListQuery {
  /** The repositories the reader may see; an empty list shows nothing. */
  repos: readonly string[];
  status?: SmokeStatus;
  githubLogin?: string;
  /** Only this pull request's requests (in each of `repos`): read from the per-PR index, not the whole repository. */
  pr?: number;
  /** Requests created before this one (the cursor of the next page). */
  before?: { createdAt: Date; id: string };
  limit: number;
}

/**
 * Durable jobs: work a host accepted before answering (a webhook delivery, a Slack
 * command), written together with the claim that keeps a redelivery from accepting it
 * again, then run after the answer by whichever process or isolate takes its lease.
 * Jobs with the same key (a PR, a workflow run) run one at a time, oldest first.
 */
const newJobObject = () =>
  z.object({
    /** Jobs with the same key run one at a time, in the order they were enqueued. */
    key: z.string().min(1).max(300),
    /** What runs it: `github` (a webhook delivery), `slack` (a command's work). */
    kind: z.string().regex(/^[a-z][a-z0-9-]{0,49}$/, "a lower-case job kind"),
    /**
     * JSON text, opaque to the store. Room for any webhook GitHub sends (every front door takes
     * up to GitHub's 25 MB), re-serialized with the delivery's id and name: a
     * smaller cap here would turn a large delivery into a 503 on every redelivery.
     */
    payload: z.string().max(MAX_WEBHOOK_BYTES + 64 * 1024),
  });
export const NewJobSchema = z.lazy(newJobObject);
export type NewJob = z.infer<typeof NewJobSchema>;

export const JobSchema = z.lazy(() =>
  newJobObject().extend({
    id: z.string().min(1),
    /** The idempotency key written with the job; given up with it. */
    claim: z.string().nullable(),
    /** Leases taken so far (each run or re-run after an interruption). */
    attempts: z.number().int().nonnegative(),
    leaseOwner: z.string().nullable(),
    /** While leaseOwner is set: until when it holds the job. Without an owner: not before this time (a retry's delay). */
    leaseUntil: z.date().nullable(),
    createdAt: z.date(),
  }),
);
export type Job = z.infer<typeof JobSchema>;

export type LeaseResult =
  | { ok: true; job: Job }
  /** done (completed or given up): nothing to run */
  | { ok: false; reason: "gone" }
  /** another owner holds an unexpired lease */
  | { ok: false; reason: "busy"; until: Date }
  /** an older job with the same key has not finished: this one waits its turn */
  | { ok: false; reason: "behind"; waitingFor: string }
  /** failed before and its retry delay has not passed */
  | { ok: false; reason: "delayed"; until: Date };

export interface JobStore {
  /**
   * Writes the job and (when given) its claim in one atomic step. Undefined when the claim
   * is held already (a redelivery or a retry of work already accepted): nothing is written.
   */
  enqueueJob(job: NewJob, claim?: { key: string; ttlSeconds: number }): Promise<Job | undefined>;
  /**
   * Takes (or, by the same owner, renews) the job's lease for `seconds`. Refused while
   * another owner holds it, while an older job of its key exists, or before a retry's delay.
   */
  leaseJob(id: string, owner: string, seconds: number): Promise<LeaseResult>;
  /**
   * The fence's check at the store (src/jobs/fence.ts): renews the lease for `seconds` only
   * while `owner` still holds it, a compare of the owner in the same atomic step as the
   * renewal. An expired lease nobody took since is renewed (no other run wrote under it);
   * false once the job is done, handed back or retried, or another owner took it, and then
   * never true again for that owner (a hand-back followed by a re-take is not this run's term).
   */
  renewJob(id: string, owner: string, seconds: number): Promise<boolean>;
  /** Deletes a finished job (its claim stays); false when `owner` no longer held it. */
  completeJob(id: string, owner: string): Promise<boolean>;
  /**
   * The run failed. With `retryAfterSeconds` the job stays, free to lease after that delay;
   * without, it is given up: deleted, and its claim released so a redelivery runs it.
   */
  failJob(id: string, owner: string, retryAfterSeconds?: number): Promise<void>;
  /**
   * Jobs nobody is running: a lease or retry delay that has passed, or never leased and
   * older than `unleasedSeconds` (the message that should have started it was lost).
   * Oldest first.
   */
  listStaleJobs(unleasedSeconds: number): Promise<Job[]>;
}

export interface StoreStatus {
  kind: "sqlite" | "memory" | "redis" | "durable-object" | "deno-kv";
  ok: boolean;
  detail: string;
}

export interface Store extends JobStore {
  /**
   * Claims an idempotency key for ttlSeconds. True for the first claim (go ahead),
   * false while an unexpired claim exists (a redelivery or a retry: do nothing).
   * A claim made again by its `owner` (the same durable job, run again after an
   * interruption) is granted again.
   */
  claim(key: string, ttlSeconds: number, owner?: string): Promise<boolean>;
  /** Gives a claim up (the work it guarded failed before doing anything a retry would repeat). */
  release(key: string): Promise<void>;
  createSmokeRequest(request: NewSmokeRequest): Promise<SmokeRequest>;
  /** Applies a patch; a status change must follow TRANSITIONS (same status is a no-op change). */
  updateSmokeRequest(id: string, patch: SmokeRequestPatch): Promise<UpdateResult>;
  getSmokeRequest(id: string): Promise<SmokeRequest | undefined>;
  findByRunId(runId: number): Promise<SmokeRequest | undefined>;
  /** dispatched, queued or running, oldest first. */
  activeForPr(repo: string, pr: number): Promise<SmokeRequest[]>;
  /**
   * Requests made by this login since then, refused ones excluded (a refusal costs no GPU time);
   * with an installation id, only that installation's (one installation's quota is not another's).
   */
  countUserRequestsSince(githubLogin: string, since: Date, installationId?: number): Promise<number>;
  /** dispatched + queued + running, across repositories (or in one). */
  countActive(repo?: string): Promise<number>;
  /** dispatched or queued since before `date` (by dispatch time): candidates for the queue timeout. */
  listQueuedOlderThan(date: Date): Promise<SmokeRequest[]>;
  /** Newest first (by creation, then id), filtered as the query says. */
  listSmokeRequests(query: SmokeListQuery): Promise<SmokeRequest[]>;
  /** Every repository with a smoke request, sorted. */
  listSmokeRepos(): Promise<string[]>;
  audit(record: AuditInput): Promise<AuditRecord>;
  /** Newest first. */
  auditLog(options?: { limit?: number; repo?: string; requestId?: string }): Promise<AuditRecord[]>;
  status(): Promise<StoreStatus>;
  close(): Promise<void>;
}

/** A clear, single-sentence failure of the store (bad data dir, corrupt file, closed store). */
export class StoreError extends Error {
  override name = "StoreError";
}

export interface StoreOptions {
  /** Injected clock, for TTL and day-boundary tests. */
  now?: () => Date;
  /** Request ids; defaults to crypto.randomUUID. */
  newId?: () => string;
}

export const AUDIT_LIMIT_MAX = 1000;

/** Whose calls a rate-limit pause holds back: one installation's, or the app's own (JWT) calls. */
export type GateScope = `installation:${number}` | "app";

/** GitHub's rate limits shared between replicas (src/github/rate-gate.ts puts it under the Octokit). */
export interface RateGate {
  /** Milliseconds before calls of `scope` may go out again (0: now). */
  waitMs(scope: GateScope): Promise<number>;
  /** Nobody calls in `scope` before `untilMs` (epoch ms); a later pause already set is kept. */
  pauseUntil(scope: GateScope, untilMs: number): Promise<void>;
}
