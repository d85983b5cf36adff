// The store on Redis (REDIS_URL), for two or more replicas of the Node server behind one
// load balancer: claims are `SET NX PX`, smoke requests are JSON strings with sorted-set
// indexes (per PR, per repository, per user, per run id, the active ones), the audit log is
// a stream trimmed to a retention length, and durable jobs are hashes ordered per key.
// Every step that must not race is one Lua script (scripts.ts). A Redis that is down or
// restarting makes each call fail at once with a StoreError (no offline queue), so the
// server refuses new work (503) instead of accepting what it cannot record.
import { Redis, type RedisOptions } from "ioredis";
import { applyPatch, auditLimit, checkClaim, checkLease, closedError, isLive, listLimit, newAudit, newJob, newRequest, pageOfRequests } from "../records.ts";
import {
  ACTIVE_STATUSES,
  SmokeRequestSchema,
  StoreError,
  type AuditInput,
  type AuditRecord,
  type Job,
  type LeaseResult,
  type NewJob,
  type NewSmokeRequest,
  type RateGate,
  type SmokeListQuery,
  type SmokeRequest,
  type SmokeRequestPatch,
  type Store,
  type StoreOptions,
  type StoreStatus,
  type UpdateResult,
} from "../types.ts";
import { AUDIT, CLAIM, COUNT_RUNS, CREATE_REQUEST, END_JOB, ENQUEUE_JOB, LEASE_JOB, PAUSE_UNTIL, RENEW_JOB, SWEEP_EXPIRED, UPDATE_REQUEST } from "./scripts.ts";

export interface RedisStoreSettings {
  /** redis://[:password@]host:port[/db] or rediss:// (TLS). */
  url: string;
  /** Key prefix, so several bots (or tests) can share one Redis. */
  prefix?: string;
  /** The audit stream keeps about this many records (XADD MAXLEN ~). */
  auditMaxLen?: number;
  /** How long a command may take before it fails (ms). */
  commandTimeoutMs?: number;
}

export const DEFAULT_AUDIT_MAXLEN = 100_000;
const CAS_RETRIES = 50;
const ACTIVE = new Set<string>(ACTIVE_STATUSES);
const DATE_FIELDS = ["createdAt", "updatedAt", "dispatchedAt", "startedAt", "finishedAt", "expiresAt"] as const;

type Scripts = Record<"hcpClaim" | "hcpUpdateRequest" | "hcpCreateRequest" | "hcpAudit" | "hcpEnqueueJob" | "hcpLeaseJob" | "hcpRenewJob" | "hcpEndJob" | "hcpCountRuns" | "hcpSweepExpired", (...args: (string | number)[]) => Promise<unknown>>;

/** The URL without its password, for logs and /healthz. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an unparsable REDIS_URL)";
  }
}

function decodeRequest(text: string): SmokeRequest {
  const raw = JSON.parse(text) as Record<string, unknown>;
  for (const f of DATE_FIELDS) if (typeof raw[f] === "string") raw[f] = new Date(raw[f]);
  return SmokeRequestSchema.parse(raw);
}

function decodeAudit(text: string): AuditRecord {
  const raw = JSON.parse(text) as AuditRecord & { at: string; expiresAt?: string | null };
  return { ...raw, at: new Date(raw.at), expiresAt: raw.expiresAt ? new Date(raw.expiresAt) : null };
}

export class RedisStore implements Store {
  private closed = false;
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly p: string;
  private readonly auditMaxLen: number;
  private readonly where: string;

  private constructor(
    private readonly redis: Redis,
    settings: RedisStoreSettings,
    options: StoreOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? (() => crypto.randomUUID());
    this.p = settings.prefix ?? "hcp:";
    this.auditMaxLen = settings.auditMaxLen ?? DEFAULT_AUDIT_MAXLEN;
    this.where = redactRedisUrl(settings.url);
  }

  /** Connects (waiting until Redis answers); a Redis that cannot be reached is a StoreError naming it. */
  static async open(settings: RedisStoreSettings, options: StoreOptions = {}): Promise<RedisStore> {
    const redis = new Redis(settings.url, redisOptions(settings));
    const store = new RedisStore(redis, settings, options);
    redis.on("error", () => {}); // each failed call reports its own error; ioredis reconnects by itself
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      redis.disconnect();
      throw new StoreError(`cannot reach Redis at ${store.where}: ${messageOf(error)}; check REDIS_URL and that Redis runs`, { cause: error });
    }
    return store;
  }

  private get scripts(): Scripts {
    return this.redis as unknown as Scripts;
  }

  /** Runs a call; a Redis failure becomes a StoreError that names the server. */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw closedError();
    try {
      return await work();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      throw new StoreError(`Redis store ${this.where}: ${messageOf(error)}`, { cause: error });
    }
  }

  private k(...parts: (string | number)[]): string {
    return this.p + parts.join(":");
  }

  // ------------------------------------------------------------------------ claims

  claim(key: string, ttlSeconds: number, owner?: string): Promise<boolean> {
    return this.run(async () => {
      checkClaim(key, ttlSeconds);
      const granted = await this.scripts.hcpClaim(this.k("claim", key), this.now().getTime(), Math.ceil(ttlSeconds * 1000), owner ?? "");
      return granted === 1;
    });
  }

  release(key: string): Promise<void> {
    return this.run(async () => void (await this.redis.del(this.k("claim", key))));
  }

  // -------------------------------------------------------------- smoke requests

  createSmokeRequest(input: NewSmokeRequest): Promise<SmokeRequest> {
    return this.run(async () => {
      const request = newRequest(input, this.newId(), this.now());
      await this.sweepExpired();
      const expires = request.expiresAt ? [request.expiresAt.getTime(), request.expiresAt.getTime() - request.createdAt.getTime()] : ["", ""];
      await this.scripts.hcpCreateRequest(this.k("req", "seq"), this.p, request.id, JSON.stringify(request), request.repo, `${request.repo}#${request.pr}`, request.githubLogin, request.createdAt.getTime(), ...expires);
      return request;
    });
  }

  updateSmokeRequest(id: string, patch: SmokeRequestPatch): Promise<UpdateResult> {
    return this.run(async () => {
      for (let attempt = 0; attempt < CAS_RETRIES; attempt++) {
        const [text, seq] = await Promise.all([this.redis.get(this.k("req", id)), this.redis.hget(this.k("req", "seqs"), id)]);
        if (text === null || seq === null) return { ok: false, reason: "not-found", detail: `no smoke request ${id}` };
        const current = decodeRequest(text);
        const result = applyPatch(current, patch, this.now());
        if (!result.ok) return result;
        const next = result.request;
        const activeOp = ACTIVE.has(next.status) ? "add" : ACTIVE.has(current.status) ? "rem" : "";
        const bindsRun = next.runId !== null && current.runId === null;
        const written = await this.scripts.hcpUpdateRequest(
          this.k("req", id),
          this.k("req", "active"),
          this.k("req", "active", next.repo),
          bindsRun ? this.k("req", "run", next.runId!) : this.k("req", "run", "none"),
          text,
          JSON.stringify(next),
          seq,
          id,
          activeOp,
          bindsRun ? "1" : "0",
        );
        if (written === 1) return result;
      }
      throw new StoreError(`Redis store ${this.where}: smoke request ${id} kept changing under too many writers`);
    });
  }

  private async requestsByIds(ids: readonly string[]): Promise<SmokeRequest[]> {
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(ids.map((id) => this.k("req", id)));
    const now = this.now();
    return texts.filter((t): t is string => t !== null).map(decodeRequest).filter((r) => isLive(r, now));
  }

  getSmokeRequest(id: string): Promise<SmokeRequest | undefined> {
    return this.run(async () => {
      const text = await this.redis.get(this.k("req", id));
      const request = text === null ? undefined : decodeRequest(text);
      return request && isLive(request, this.now()) ? request : undefined;
    });
  }

  findByRunId(runId: number): Promise<SmokeRequest | undefined> {
    return this.run(async () => {
      const [newest] = await this.redis.zrange(this.k("req", "run", runId), -1, -1);
      return newest === undefined ? undefined : (await this.requestsByIds([newest]))[0];
    });
  }

  activeForPr(repo: string, pr: number): Promise<SmokeRequest[]> {
    return this.run(async () => {
      const ids = await this.redis.zrange(this.k("req", "pr", `${repo}#${pr}`), 0, -1);
      return (await this.requestsByIds(ids)).filter((r) => ACTIVE.has(r.status));
    });
  }

  countUserRequestsSince(githubLogin: string, since: Date, installationId?: number): Promise<number> {
    return this.run(async () => Number(await this.scripts.hcpCountRuns(this.k("req", "user", githubLogin), this.p, since.getTime(), "1", installationId ?? "")));
  }

  countActive(repo?: string): Promise<number> {
    // An A/B request runs two GPU legs (records.ts gpuRunsOf): the script counts runs, not requests.
    return this.run(async () => Number(await this.scripts.hcpCountRuns(repo === undefined ? this.k("req", "active") : this.k("req", "active", repo), this.p, "-inf", "0", "")));
  }

  listQueuedOlderThan(date: Date): Promise<SmokeRequest[]> {
    return this.run(async () => {
      const requests = await this.requestsByIds(await this.redis.zrange(this.k("req", "active"), 0, -1));
      return requests.filter((r) => (r.status === "dispatched" || r.status === "queued") && (r.dispatchedAt ?? r.createdAt) < date);
    });
  }

  listSmokeRequests(q: SmokeListQuery): Promise<SmokeRequest[]> {
    return this.run(async () => {
      listLimit(q.limit); // a bad limit is refused before anything is read
      const found: SmokeRequest[] = [];
      for (const repo of new Set(q.repos)) {
        const index = q.pr === undefined ? this.k("req", "repo", repo) : this.k("req", "pr", `${repo}#${q.pr}`);
        found.push(...(await this.requestsByIds(await this.redis.zrange(index, 0, -1))));
      }
      return pageOfRequests(found, q);
    });
  }

  listSmokeRepos(): Promise<string[]> {
    return this.run(async () => {
      await this.sweepExpired(); // a repository whose only requests expired leaves the list
      return (await this.redis.smembers(this.k("repos"))).sort();
    });
  }

  // ------------------------------------------------------------------ audit log

  audit(input: AuditInput): Promise<AuditRecord> {
    return this.run(async () => {
      const { id: _draft, ...draft } = newAudit(input, 0, this.now());
      await this.sweepExpired();
      const id = Number(await this.scripts.hcpAudit(this.k("audit", "seq"), this.k("audit"), this.k("audit", "expiring"), JSON.stringify(draft), this.auditMaxLen, draft.expiresAt?.getTime() ?? ""));
      return { ...draft, id };
    });
  }

  /** Newest first, read back from the stream a page at a time until enough records match. */
  auditLog(options: { limit?: number; repo?: string; requestId?: string } = {}): Promise<AuditRecord[]> {
    return this.run(async () => {
      const limit = auditLimit(options.limit);
      const now = this.now();
      const out: AuditRecord[] = [];
      let end = "+";
      for (;;) {
        const page = await this.redis.xrevrange(this.k("audit"), end, "-", "COUNT", 500);
        for (const [, fields] of page) {
          const record = decodeAudit(fields[1]!);
          if (isLive(record, now) && (options.repo === undefined || record.repo === options.repo) && (options.requestId === undefined || record.requestId === options.requestId)) out.push(record);
          if (out.length >= limit) return out;
        }
        if (page.length < 500) return out;
        end = `(${page[page.length - 1]![0]}`;
      }
    });
  }

  /** Deletes what has expired on the store's clock, with its index entries (reads skip it already). */
  private async sweepExpired(): Promise<void> {
    await this.scripts.hcpSweepExpired(this.p, this.now().getTime());
  }

  // ---------------------------------------------------------------- durable jobs

  enqueueJob(input: NewJob, claim?: { key: string; ttlSeconds: number }): Promise<Job | undefined> {
    return this.run(async () => {
      if (claim) checkClaim(claim.key, claim.ttlSeconds);
      const job = newJob(input, this.newId(), this.now(), claim?.key ?? null);
      const seq = await this.scripts.hcpEnqueueJob(
        claim ? this.k("claim", claim.key) : this.k("claim", "none"),
        this.k("job", "seq"),
        this.p,
        job.id,
        job.key,
        job.kind,
        job.payload,
        claim?.key ?? "",
        job.createdAt.getTime(),
        claim ? Math.ceil(claim.ttlSeconds * 1000) : 0,
      );
      return seq === 0 ? undefined : job;
    });
  }

  private async readJob(id: string): Promise<Job | undefined> {
    const h = await this.redis.hgetall(this.k("job", id));
    if (h.key === undefined) return undefined;
    return {
      id,
      key: h.key,
      kind: h.kind!,
      payload: h.payload!,
      claim: h.claim === "" ? null : h.claim!,
      attempts: Number(h.attempts),
      leaseOwner: h.owner === "" ? null : h.owner!,
      leaseUntil: h.until === "" ? null : new Date(Number(h.until)),
      createdAt: new Date(Number(h.created)),
    };
  }

  leaseJob(id: string, owner: string, seconds: number): Promise<LeaseResult> {
    return this.run(async () => {
      checkLease(owner, seconds);
      const [verdict, detail] = (await this.scripts.hcpLeaseJob(this.p, id, owner, this.now().getTime(), Math.ceil(seconds * 1000))) as [string, string?];
      switch (verdict) {
        case "gone":
          return { ok: false, reason: "gone" };
        case "busy":
        case "delayed":
          return { ok: false, reason: verdict, until: new Date(Number(detail)) };
        case "behind":
          return { ok: false, reason: "behind", waitingFor: detail! };
      }
      const job = await this.readJob(id);
      return job ? { ok: true, job } : { ok: false, reason: "gone" };
    });
  }

  renewJob(id: string, owner: string, seconds: number): Promise<boolean> {
    return this.run(async () => {
      checkLease(owner, seconds);
      return (await this.scripts.hcpRenewJob(this.p, id, owner, this.now().getTime(), Math.ceil(seconds * 1000))) === 1;
    });
  }

  completeJob(id: string, owner: string): Promise<boolean> {
    return this.run(async () => (await this.scripts.hcpEndJob(this.p, id, owner, "complete", "")) === 1);
  }

  failJob(id: string, owner: string, retryAfterSeconds?: number): Promise<void> {
    return this.run(async () => {
      const retry = retryAfterSeconds !== undefined;
      const notBefore = retry ? this.now().getTime() + Math.ceil(retryAfterSeconds * 1000) : "";
      await this.scripts.hcpEndJob(this.p, id, owner, retry ? "retry" : "give-up", notBefore);
    });
  }

  listStaleJobs(unleasedSeconds: number): Promise<Job[]> {
    return this.run(async () => {
      const now = this.now().getTime();
      const stale: Job[] = [];
      for (const id of await this.redis.zrange(this.k("jobs"), 0, -1)) {
        const job = await this.readJob(id);
        if (!job) continue;
        if (job.leaseUntil ? job.leaseUntil.getTime() <= now : job.createdAt.getTime() <= now - unleasedSeconds * 1000) stale.push(job);
      }
      return stale;
    });
  }

  // ------------------------------------------------------------- GitHub's limits

  /** The replicas' shared GitHub rate-limit pause (src/github/rate-gate.ts), in this Redis. */
  rateGate(): RateGate {
    // One key per scope (an installation, or the app's own calls); each expires with its pause.
    const key = (scope: string) => this.k("github", "pause-until", scope);
    return {
      waitMs: async (scope) => Math.max(0, Number((await this.redis.get(key(scope))) ?? 0) - Date.now()),
      pauseUntil: async (scope, untilMs) => {
        await this.redis.eval(PAUSE_UNTIL, 1, key(scope), Math.ceil(untilMs), Date.now());
      },
    };
  }

  // ---------------------------------------------------------------------- status

  async status(): Promise<StoreStatus> {
    if (this.closed) return { kind: "redis", ok: false, detail: `${this.where}: closed` };
    try {
      const [requests, jobs] = await Promise.all([this.redis.hlen(this.k("req", "seqs")), this.redis.zcard(this.k("jobs"))]);
      return { kind: "redis", ok: true, detail: `${this.where} (${requests} smoke requests, ${jobs} pending jobs)` };
    } catch (error) {
      return { kind: "redis", ok: false, detail: `${this.where}: ${messageOf(error)}` };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * No offline queue and one try per command: while Redis is away a call fails at once (the
 * caller answers 503 or "try again") rather than waiting in memory for a Redis that may not
 * come back; ioredis keeps reconnecting in the background, so the store recovers by itself.
 */
function redisOptions(settings: RedisStoreSettings): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    commandTimeout: settings.commandTimeoutMs ?? 3000,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    // Calls made in one turn of the event loop leave in one write: a burst of 100 Slack acks
    // each writing its job cost 100 socket writes (about 0.4 ms each on a small VM) before.
    enableAutoPipelining: true,
    scripts: {
      hcpClaim: { numberOfKeys: 1, lua: CLAIM },
      hcpUpdateRequest: { numberOfKeys: 4, lua: UPDATE_REQUEST },
      hcpCreateRequest: { numberOfKeys: 1, lua: CREATE_REQUEST },
      hcpAudit: { numberOfKeys: 3, lua: AUDIT },
      hcpSweepExpired: { numberOfKeys: 0, lua: SWEEP_EXPIRED },
      hcpEnqueueJob: { numberOfKeys: 2, lua: ENQUEUE_JOB },
      hcpLeaseJob: { numberOfKeys: 0, lua: LEASE_JOB },
      hcpRenewJob: { numberOfKeys: 0, lua: RENEW_JOB },
      hcpEndJob: { numberOfKeys: 0, lua: END_JOB },
      hcpCountRuns: { numberOfKeys: 1, lua: COUNT_RUNS },
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
