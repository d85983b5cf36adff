// The store on Deno KV (Deno Deploy, or a local file under `deno run`). Every change that
// must not race is one atomic commit guarded by the versionstamps it read (a claim, a status
// transition, a job's lease), retried when another writer got there first. Secondary keys
// (per PR, per user, active requests, per run id, per job key) are written in the same
// commit as the record. Counters give creation order, as SQLite's rowid does.
import { applyPatch, auditLimit, checkClaim, checkLease, closedError, isLive, leaseRefusal, listLimit, newAudit, newJob, newRequest, pageOfRequests, sumRuns } from "../records.ts";
import {
  ACTIVE_STATUSES,
  StoreError,
  type AuditInput,
  type AuditRecord,
  type Job,
  type LeaseResult,
  type NewJob,
  type NewSmokeRequest,
  type SmokeRequest,
  type SmokeListQuery,
  type SmokeRequestPatch,
  type Store,
  type StoreOptions,
  type StoreStatus,
  type UpdateResult,
} from "../types.ts";

// ------------------------------------------------------------ the part of Deno.Kv used here

export type KvKey = readonly (string | number)[];
export interface KvEntryMaybe<T> {
  key: KvKey;
  value: T | null;
  versionstamp: string | null;
}
export interface KvAtomic {
  check(...checks: { key: KvKey; versionstamp: string | null }[]): KvAtomic;
  set(key: KvKey, value: unknown, options?: { expireIn?: number }): KvAtomic;
  delete(key: KvKey): KvAtomic;
  commit(): Promise<{ ok: boolean }>;
}
export interface Kv {
  get<T>(key: KvKey): Promise<KvEntryMaybe<T>>;
  set(key: KvKey, value: unknown, options?: { expireIn?: number }): Promise<unknown>;
  delete(key: KvKey): Promise<void>;
  list<T>(selector: { prefix: KvKey } | { start: KvKey; end: KvKey }, options?: { limit?: number; reverse?: boolean }): AsyncIterable<{ key: KvKey; value: T; versionstamp: string }>;
  atomic(): KvAtomic;
  close(): void;
}

// ------------------------------------------------------------------------------ records

interface StoredRequest {
  r: SmokeRequest;
  seq: number;
}
/** A repository in the list: for good (true), or until a time in ms (only requests that expire name it). */
type RepoMark = true | number;
interface StoredClaim {
  expiresAt: number;
  owner: string | null;
}
/** A job without its payload, which is inline when small and in parts otherwise (KV values are at most 64 KiB). */
interface StoredJob {
  job: Omit<Job, "payload">;
  seq: number;
  inline: string | null;
  parts: number;
}

const PART_BYTES = 60_000;
const INLINE_BYTES = 30_000;
/** Claims and parts carry a KV expiry too, so the database does not keep what nobody reads. */
const GRACE_MS = 24 * 3600 * 1000;
const CONFLICT_RETRIES = 100;

const ACTIVE = new Set<string>(ACTIVE_STATUSES);

async function collect<T>(iter: AsyncIterable<{ key: KvKey; value: T }>): Promise<{ key: KvKey; value: T }[]> {
  const out: { key: KvKey; value: T }[] = [];
  for await (const e of iter) out.push(e);
  return out;
}

export class KvStore implements Store {
  private closed = false;
  private readonly now: () => Date;
  private readonly newId: () => string;

  constructor(
    private readonly kv: Kv,
    /** Where the database lives, for /healthz. */
    private readonly where: string,
    options: StoreOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? (() => crypto.randomUUID());
  }

  private open(): void {
    if (this.closed) throw closedError();
  }

  /** Runs a read-check-commit step until its commit goes through (another writer won the race otherwise). */
  private async atomically<T>(step: () => Promise<{ commit: KvAtomic; result: T } | { result: T }>): Promise<T> {
    this.open();
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const planned = await step();
      if (!("commit" in planned)) return planned.result;
      if ((await planned.commit.commit()).ok) return planned.result;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
    }
    throw new StoreError(`Deno KV store ${this.where}: too many conflicting writers`);
  }

  private async counter(name: string): Promise<{ next: number; check: { key: KvKey; versionstamp: string | null } }> {
    const e = await this.kv.get<number>(["seq", name]);
    return { next: (e.value ?? 0) + 1, check: { key: ["seq", name], versionstamp: e.versionstamp } };
  }

  // ------------------------------------------------------------------------ claims

  async claim(key: string, ttlSeconds: number, owner?: string): Promise<boolean> {
    this.open();
    checkClaim(key, ttlSeconds);
    return this.atomically(async () => {
      const held = await this.kv.get<StoredClaim>(["claim", key]);
      const now = this.now().getTime();
      if (!this.claimFree(held.value, now, owner)) return { result: false };
      return { commit: this.setClaim(this.kv.atomic().check({ key: ["claim", key], versionstamp: held.versionstamp }), key, ttlSeconds, owner ?? null, now), result: true };
    });
  }

  private claimFree(held: StoredClaim | null, now: number, owner?: string): boolean {
    return !held || held.expiresAt <= now || (owner !== undefined && held.owner === owner);
  }

  private setClaim(op: KvAtomic, key: string, ttlSeconds: number, owner: string | null, now: number): KvAtomic {
    const ttlMs = Math.ceil(ttlSeconds * 1000);
    return op.set(["claim", key], { expiresAt: now + ttlMs, owner } satisfies StoredClaim, { expireIn: ttlMs + GRACE_MS });
  }

  async release(key: string): Promise<void> {
    this.open();
    await this.kv.delete(["claim", key]);
  }

  // -------------------------------------------------------------- smoke requests

  async createSmokeRequest(input: NewSmokeRequest): Promise<SmokeRequest> {
    this.open();
    const request = newRequest(input, this.newId(), this.now());
    // A record that expires carries Deno KV's expiry on every key it writes, so KV deletes it all.
    const expiry = request.expiresAt ? { expireIn: Math.max(1, request.expiresAt.getTime() - request.createdAt.getTime()) } : undefined;
    return this.atomically(async () => {
      const { next: seq, check } = await this.counter("request");
      const op = this.kv
        .atomic()
        .check(check, { key: ["req", request.id], versionstamp: null })
        .set(["seq", "request"], seq)
        .set(["req", request.id], { r: request, seq } satisfies StoredRequest, expiry)
        .set(["req_pr", request.repo, request.pr, seq], request.id, expiry)
        .set(["req_user", request.githubLogin, request.createdAt.getTime(), seq], request.id, expiry);
      await this.markRepo(op, request);
      return { commit: op, result: request };
    });
  }

  /**
   * The repository's entry in the list of repositories: `true` for good once a request that is
   * kept names it; for a request that expires, its expiry, unless an entry that lasts longer is there.
   */
  private async markRepo(op: KvAtomic, request: SmokeRequest): Promise<void> {
    if (!request.expiresAt) {
      op.set(["repo", request.repo], true);
      return;
    }
    const held = await this.kv.get<RepoMark>(["repo", request.repo]);
    if (held.value === true || (typeof held.value === "number" && held.value >= request.expiresAt.getTime())) return;
    op.check(held).set(["repo", request.repo], request.expiresAt.getTime() satisfies RepoMark, { expireIn: Math.max(1, request.expiresAt.getTime() - request.createdAt.getTime()) });
  }

  async updateSmokeRequest(id: string, patch: SmokeRequestPatch): Promise<UpdateResult> {
    return this.atomically(async () => {
      const e = await this.kv.get<StoredRequest>(["req", id]);
      if (!e.value) return { result: { ok: false, reason: "not-found", detail: `no smoke request ${id}` } as UpdateResult };
      const { r: current, seq } = e.value;
      const result = applyPatch(current, patch, this.now());
      if (!result.ok) return { result };
      const next = result.request;
      const expiry = next.expiresAt ? { expireIn: Math.max(1, next.expiresAt.getTime() - this.now().getTime()) } : undefined;
      const op = this.kv.atomic().check(e).set(["req", id], { r: next, seq } satisfies StoredRequest, expiry);
      if (next.runId !== null && current.runId === null) op.set(["req_run", next.runId, seq], id);
      if (ACTIVE.has(next.status)) op.set(["req_active", seq], { id, repo: next.repo });
      else if (ACTIVE.has(current.status)) op.delete(["req_active", seq]);
      return { commit: op, result };
    });
  }

  private async requestsByIds(ids: readonly string[]): Promise<SmokeRequest[]> {
    const out: SmokeRequest[] = [];
    const now = this.now();
    for (const id of ids) {
      const e = await this.kv.get<StoredRequest>(["req", id]);
      if (e.value && isLive(e.value.r, now)) out.push(e.value.r);
    }
    return out;
  }

  async getSmokeRequest(id: string): Promise<SmokeRequest | undefined> {
    this.open();
    const r = (await this.kv.get<StoredRequest>(["req", id])).value?.r;
    return r && isLive(r, this.now()) ? r : undefined;
  }

  async findByRunId(runId: number): Promise<SmokeRequest | undefined> {
    this.open();
    const [newest] = await collect(this.kv.list<string>({ prefix: ["req_run", runId] }, { limit: 1, reverse: true }));
    return newest ? this.getSmokeRequest(newest.value) : undefined;
  }

  async activeForPr(repo: string, pr: number): Promise<SmokeRequest[]> {
    this.open();
    const ids = (await collect(this.kv.list<string>({ prefix: ["req_pr", repo, pr] }))).map((e) => e.value);
    return (await this.requestsByIds(ids)).filter((r) => ACTIVE.has(r.status));
  }

  async countUserRequestsSince(githubLogin: string, since: Date, installationId?: number): Promise<number> {
    this.open();
    const entries = await collect(this.kv.list<string>({ start: ["req_user", githubLogin, since.getTime()], end: ["req_user", githubLogin, Number.MAX_SAFE_INTEGER] }));
    return sumRuns((await this.requestsByIds(entries.map((e) => e.value))).filter((r) => r.status !== "refused" && (installationId === undefined || r.installationId === installationId)));
  }

  private async active(): Promise<{ id: string; repo: string }[]> {
    return (await collect(this.kv.list<{ id: string; repo: string }>({ prefix: ["req_active"] }))).map((e) => e.value);
  }

  async countActive(repo?: string): Promise<number> {
    this.open();
    return sumRuns(await this.requestsByIds((await this.active()).filter((a) => repo === undefined || a.repo === repo).map((a) => a.id)));
  }

  async listQueuedOlderThan(date: Date): Promise<SmokeRequest[]> {
    this.open();
    const requests = await this.requestsByIds((await this.active()).map((a) => a.id));
    return requests.filter((r) => (r.status === "dispatched" || r.status === "queued") && (r.dispatchedAt ?? r.createdAt) < date);
  }

  async listSmokeRequests(q: SmokeListQuery): Promise<SmokeRequest[]> {
    this.open();
    listLimit(q.limit); // a bad limit is refused before anything is read
    const found: SmokeRequest[] = [];
    for (const repo of new Set(q.repos)) {
      const ids = (await collect(this.kv.list<string>({ prefix: q.pr === undefined ? ["req_pr", repo] : ["req_pr", repo, q.pr] }))).map((e) => e.value);
      found.push(...(await this.requestsByIds(ids)));
    }
    return pageOfRequests(found, q);
  }

  async listSmokeRepos(): Promise<string[]> {
    this.open();
    const now = this.now().getTime();
    return (await collect(this.kv.list<RepoMark>({ prefix: ["repo"] }))).filter((e) => e.value === true || e.value > now).map((e) => String(e.key[1])).sort();
  }

  // ------------------------------------------------------------------ audit log

  async audit(input: AuditInput): Promise<AuditRecord> {
    this.open();
    const draft = newAudit(input, 0, this.now());
    return this.atomically(async () => {
      const { next: id, check } = await this.counter("audit");
      const record = { ...draft, id };
      const expiry = record.expiresAt ? { expireIn: Math.max(1, record.expiresAt.getTime() - record.at.getTime()) } : undefined;
      const op = this.kv.atomic().check(check).set(["seq", "audit"], id).set(["audit", id], record, expiry);
      if (record.repo !== null) op.set(["audit_repo", record.repo, id], record, expiry);
      if (record.requestId !== null) op.set(["audit_request", record.requestId, id], record, expiry);
      return { commit: op, result: record };
    });
  }

  async auditLog(options: { limit?: number; repo?: string; requestId?: string } = {}): Promise<AuditRecord[]> {
    this.open();
    const limit = auditLimit(options.limit);
    const prefix: KvKey = options.requestId !== undefined ? ["audit_request", options.requestId] : options.repo === undefined ? ["audit"] : ["audit_repo", options.repo];
    // Deno KV deletes an expired entry some time after its expiry: the store's clock decides before that.
    const now = this.now();
    const out: AuditRecord[] = [];
    for await (const { value: r } of this.kv.list<AuditRecord>({ prefix }, { reverse: true })) {
      if (isLive(r, now) && (options.repo === undefined || r.repo === options.repo)) out.push(r);
      if (out.length >= limit) break;
    }
    return out;
  }

  // ---------------------------------------------------------------- durable jobs

  async enqueueJob(input: NewJob, claim?: { key: string; ttlSeconds: number }): Promise<Job | undefined> {
    this.open();
    const job = newJob(input, this.newId(), this.now(), claim?.key ?? null);
    if (claim) checkClaim(claim.key, claim.ttlSeconds);
    const { payload, ...meta } = job;
    const bytes = new TextEncoder().encode(payload);
    const inline = bytes.length <= INLINE_BYTES;
    const parts = inline ? 0 : Math.ceil(bytes.length / PART_BYTES);
    // Parts first, each on its own (a commit is limited in size); only the job commit below counts.
    for (let i = 0; i < parts; i++) await this.kv.set(["job_part", job.id, i], bytes.slice(i * PART_BYTES, (i + 1) * PART_BYTES), { expireIn: 30 * GRACE_MS });
    const written = await this.atomically(async () => {
      const { next: seq, check } = await this.counter("job");
      const op = this.kv.atomic().check(check).set(["seq", "job"], seq);
      if (claim) {
        const held = await this.kv.get<StoredClaim>(["claim", claim.key]);
        const now = job.createdAt.getTime();
        if (!this.claimFree(held.value, now)) return { result: false };
        this.setClaim(op.check({ key: ["claim", claim.key], versionstamp: held.versionstamp }), claim.key, claim.ttlSeconds, null, now);
      }
      op.set(["job", job.id], { job: meta, seq, inline: inline ? payload : null, parts } satisfies StoredJob).set(["job_key", job.key, seq], job.id).set(["job_seq", seq], job.id);
      return { commit: op, result: true };
    });
    if (!written) {
      await this.deleteParts(job.id, parts);
      return undefined;
    }
    return job;
  }

  private async deleteParts(id: string, parts: number): Promise<void> {
    for (let i = 0; i < parts; i++) await this.kv.delete(["job_part", id, i]);
  }

  private async payloadOf(id: string, stored: StoredJob): Promise<string> {
    if (stored.inline !== null) return stored.inline;
    const chunks = (await collect(this.kv.list<Uint8Array>({ prefix: ["job_part", id] }))).map((e) => e.value);
    if (chunks.length !== stored.parts) throw new StoreError(`job ${id}: ${chunks.length} of its ${stored.parts} payload parts are in the store`);
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    return new TextDecoder().decode(all);
  }

  async leaseJob(id: string, owner: string, seconds: number): Promise<LeaseResult> {
    this.open();
    checkLease(owner, seconds);
    const leased = await this.atomically(async (): Promise<{ result: LeaseResult | StoredJob } | { commit: KvAtomic; result: StoredJob }> => {
      const e = await this.kv.get<StoredJob>(["job", id]);
      if (!e.value) return { result: { ok: false, reason: "gone" } };
      const now = this.now().getTime();
      const stored = e.value;
      const refused = leaseRefusal({ ...stored.job, payload: "" }, owner, now);
      if (refused) return { result: refused };
      const [first] = await collect(this.kv.list<string>({ prefix: ["job_key", stored.job.key] }, { limit: 1 }));
      if (first && first.value !== id) return { result: { ok: false, reason: "behind", waitingFor: first.value } };
      const renewing = stored.job.leaseOwner === owner;
      const next: StoredJob = { ...stored, job: { ...stored.job, leaseOwner: owner, leaseUntil: new Date(now + seconds * 1000), attempts: stored.job.attempts + (renewing ? 0 : 1) } };
      return { commit: this.kv.atomic().check(e).set(["job", id], next), result: next };
    });
    if ("ok" in leased) return leased;
    return { ok: true, job: { ...leased.job, payload: await this.payloadOf(id, leased) } };
  }

  async renewJob(id: string, owner: string, seconds: number): Promise<boolean> {
    this.open();
    checkLease(owner, seconds);
    return await this.atomically(async () => {
      const e = await this.kv.get<StoredJob>(["job", id]);
      if (!e.value || e.value.job.leaseOwner !== owner) return { result: false };
      const next: StoredJob = { ...e.value, job: { ...e.value.job, leaseUntil: new Date(this.now().getTime() + seconds * 1000) } };
      return { commit: this.kv.atomic().check(e).set(["job", id], next), result: true };
    });
  }

  async completeJob(id: string, owner: string): Promise<boolean> {
    const done = await this.atomically(async () => {
      const e = await this.kv.get<StoredJob>(["job", id]);
      if (!e.value || e.value.job.leaseOwner !== owner) return { result: undefined };
      return { commit: this.deleteJob(this.kv.atomic().check(e), id, e.value), result: e.value };
    });
    if (done) await this.deleteParts(id, done.parts);
    return done !== undefined;
  }

  private deleteJob(op: KvAtomic, id: string, stored: StoredJob): KvAtomic {
    return op.delete(["job", id]).delete(["job_key", stored.job.key, stored.seq]).delete(["job_seq", stored.seq]);
  }

  async failJob(id: string, owner: string, retryAfterSeconds?: number): Promise<void> {
    const dropped = await this.atomically(async () => {
      const e = await this.kv.get<StoredJob>(["job", id]);
      if (!e.value || e.value.job.leaseOwner !== owner) return { result: undefined };
      const stored = e.value;
      const op = this.kv.atomic().check(e);
      if (retryAfterSeconds !== undefined) {
        const until = new Date(this.now().getTime() + Math.ceil(retryAfterSeconds * 1000));
        return { commit: op.set(["job", id], { ...stored, job: { ...stored.job, leaseOwner: null, leaseUntil: until } }), result: undefined };
      }
      this.deleteJob(op, id, stored);
      if (stored.job.claim) op.delete(["claim", stored.job.claim]);
      return { commit: op, result: stored };
    });
    if (dropped) await this.deleteParts(id, dropped.parts);
  }

  async listStaleJobs(unleasedSeconds: number): Promise<Job[]> {
    this.open();
    const now = this.now().getTime();
    const stale: Job[] = [];
    for (const { value: id } of await collect(this.kv.list<string>({ prefix: ["job_seq"] }))) {
      const stored = (await this.kv.get<StoredJob>(["job", id])).value;
      if (!stored) continue;
      const { leaseUntil, createdAt } = stored.job;
      if (leaseUntil ? leaseUntil.getTime() <= now : createdAt.getTime() <= now - unleasedSeconds * 1000) stale.push({ ...stored.job, payload: await this.payloadOf(id, stored) });
    }
    return stale;
  }

  // ---------------------------------------------------------------------- status

  async status(): Promise<StoreStatus> {
    if (this.closed) return { kind: "deno-kv", ok: false, detail: `${this.where}: closed` };
    try {
      const requests = (await this.kv.get<number>(["seq", "request"])).value ?? 0;
      const jobs = (await collect(this.kv.list({ prefix: ["job_seq"] }))).length;
      return { kind: "deno-kv", ok: true, detail: `${this.where} (${requests} smoke requests, ${jobs} pending jobs)` };
    } catch (error) {
      return { kind: "deno-kv", ok: false, detail: `${this.where}: ${(error as Error).message}` };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.kv.close();
  }
}
