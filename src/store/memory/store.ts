// In-process store: same semantics as SqliteStore, for tests and single-instance edge
// deployments that accept losing state on restart. Records are copied in and out, so a
// caller mutating a returned object cannot change what is stored (as with a database).
import { randomUUID } from "node:crypto";
import { applyPatch, auditLimit, checkClaim, checkLease, closedError, isLive, leaseRefusal, listLimit, newAudit, newJob, newRequest, sumRuns } from "../records.ts";
import {
  ACTIVE_STATUSES,
  type AuditInput,
  type AuditRecord,
  type Job,
  type LeaseResult,
  type NewJob,
  type NewSmokeRequest,
  type SmokeListQuery,
  type SmokeRequest,
  type SmokeRequestPatch,
  type Store,
  type StoreOptions,
  type StoreStatus,
  type UpdateResult,
} from "../types.ts";

export class MemoryStore implements Store {
  private readonly claims = new Map<string, { expires: number; owner: string | undefined }>();
  /** In insertion order, which is each key's run order. */
  private readonly jobs = new Map<string, Job>();
  private readonly requests = new Map<string, SmokeRequest>();
  private auditRecords: AuditRecord[] = [];
  private auditSeq = 0;
  private closed = false;
  private readonly now: () => Date;
  private readonly newId: () => string;

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? randomUUID;
  }

  private open(): void {
    if (this.closed) throw closedError();
  }

  async claim(key: string, ttlSeconds: number, owner?: string): Promise<boolean> {
    this.open();
    checkClaim(key, ttlSeconds);
    return this.claimNow(key, ttlSeconds, owner);
  }

  private claimNow(key: string, ttlSeconds: number, owner?: string): boolean {
    const now = this.now().getTime();
    const held = this.claims.get(key);
    if (held !== undefined && held.expires > now && (owner === undefined || held.owner !== owner)) return false;
    this.claims.set(key, { expires: now + Math.ceil(ttlSeconds * 1000), owner });
    this.dropExpired(now);
    return true;
  }

  async release(key: string): Promise<void> {
    this.open();
    this.claims.delete(key);
  }

  /** Keeps the map from growing with every delivery id ever seen. */
  private dropExpired(now: number): void {
    if (this.claims.size < 10_000) return;
    for (const [k, held] of this.claims) if (held.expires <= now) this.claims.delete(k);
  }

  /** Deletes the requests and audit records whose expiry has passed (reads skip them already). */
  private dropExpiredRecords(): void {
    const now = this.now();
    for (const [id, r] of this.requests) if (!isLive(r, now)) this.requests.delete(id);
    if (this.auditRecords.some((r) => !isLive(r, now))) this.auditRecords = this.auditRecords.filter((r) => isLive(r, now));
  }

  async createSmokeRequest(input: NewSmokeRequest): Promise<SmokeRequest> {
    this.open();
    const request = newRequest(input, this.newId(), this.now());
    this.dropExpiredRecords();
    this.requests.set(request.id, request);
    return structuredClone(request);
  }

  async updateSmokeRequest(id: string, patch: SmokeRequestPatch): Promise<UpdateResult> {
    this.open();
    const current = this.requests.get(id);
    if (!current) return { ok: false, reason: "not-found", detail: `no smoke request ${id}` };
    const result = applyPatch(current, patch, this.now());
    if (result.ok) this.requests.set(id, result.request);
    return structuredClone(result);
  }

  async getSmokeRequest(id: string): Promise<SmokeRequest | undefined> {
    this.open();
    const r = this.requests.get(id);
    return r && isLive(r, this.now()) ? structuredClone(r) : undefined;
  }

  async findByRunId(runId: number): Promise<SmokeRequest | undefined> {
    this.open();
    const r = this.select((x) => x.runId === runId).at(-1);
    return r;
  }

  async activeForPr(repo: string, pr: number): Promise<SmokeRequest[]> {
    this.open();
    return this.select((r) => r.repo === repo && r.pr === pr && ACTIVE_STATUSES.includes(r.status));
  }

  async countUserRequestsSince(githubLogin: string, since: Date, installationId?: number): Promise<number> {
    this.open();
    return sumRuns(this.select((r) => r.githubLogin === githubLogin && r.status !== "refused" && r.createdAt >= since && (installationId === undefined || r.installationId === installationId)));
  }

  async countActive(repo?: string): Promise<number> {
    this.open();
    return sumRuns(this.select((r) => ACTIVE_STATUSES.includes(r.status) && (repo === undefined || r.repo === repo)));
  }

  async listQueuedOlderThan(date: Date): Promise<SmokeRequest[]> {
    this.open();
    return this.select((r) => (r.status === "dispatched" || r.status === "queued") && (r.dispatchedAt ?? r.createdAt) < date);
  }

  /** Matching requests, oldest first (creation order, as SQLite's rowid gives). */
  private select(match: (r: SmokeRequest) => boolean): SmokeRequest[] {
    const now = this.now();
    return [...this.requests.values()].filter((r) => isLive(r, now) && match(r)).map((r) => structuredClone(r));
  }

  async listSmokeRequests(q: SmokeListQuery): Promise<SmokeRequest[]> {
    this.open();
    const limit = listLimit(q.limit);
    const repos = new Set(q.repos);
    const newerFirst = (a: SmokeRequest, b: SmokeRequest) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    const before = q.before;
    return this.select(
      (r) =>
        repos.has(r.repo) &&
        (q.status === undefined || r.status === q.status) &&
        (q.githubLogin === undefined || r.githubLogin === q.githubLogin) &&
        (q.pr === undefined || r.pr === q.pr) &&
        (before === undefined || r.createdAt < before.createdAt || (r.createdAt.getTime() === before.createdAt.getTime() && r.id < before.id)),
    )
      .sort(newerFirst)
      .slice(0, limit);
  }

  async listSmokeRepos(): Promise<string[]> {
    this.open();
    return [...new Set(this.select(() => true).map((r) => r.repo))].sort();
  }

  async audit(input: AuditInput): Promise<AuditRecord> {
    this.open();
    const record = newAudit(input, ++this.auditSeq, this.now());
    this.dropExpiredRecords();
    this.auditRecords.push(record);
    return structuredClone(record);
  }

  async auditLog(options: { limit?: number; repo?: string; requestId?: string } = {}): Promise<AuditRecord[]> {
    this.open();
    const limit = auditLimit(options.limit);
    const now = this.now();
    const matching = this.auditRecords.filter((r) => isLive(r, now) && (options.repo === undefined || r.repo === options.repo) && (options.requestId === undefined || r.requestId === options.requestId));
    return matching.slice(-limit).reverse().map((r) => structuredClone(r));
  }

  async enqueueJob(input: NewJob, claim?: { key: string; ttlSeconds: number }): Promise<Job | undefined> {
    this.open();
    const job = newJob(input, this.newId(), this.now(), claim?.key ?? null);
    if (claim) {
      checkClaim(claim.key, claim.ttlSeconds);
      if (!this.claimNow(claim.key, claim.ttlSeconds)) return undefined;
    }
    this.jobs.set(job.id, job);
    return structuredClone(job);
  }

  async leaseJob(id: string, owner: string, seconds: number): Promise<LeaseResult> {
    this.open();
    checkLease(owner, seconds);
    const job = this.jobs.get(id);
    if (!job) return { ok: false, reason: "gone" };
    const now = this.now().getTime();
    const refused = leaseRefusal(job, owner, now);
    if (refused) return structuredClone(refused);
    const first = [...this.jobs.values()].find((j) => j.key === job.key)!;
    if (first.id !== id) return { ok: false, reason: "behind", waitingFor: first.id };
    const leased: Job = { ...job, leaseOwner: owner, leaseUntil: new Date(now + seconds * 1000), attempts: job.attempts + (job.leaseOwner === owner ? 0 : 1) };
    this.jobs.set(id, leased);
    return { ok: true, job: structuredClone(leased) };
  }

  async renewJob(id: string, owner: string, seconds: number): Promise<boolean> {
    this.open();
    checkLease(owner, seconds);
    const job = this.jobs.get(id);
    if (!job || job.leaseOwner !== owner) return false;
    this.jobs.set(id, { ...job, leaseUntil: new Date(this.now().getTime() + seconds * 1000) });
    return true;
  }

  async completeJob(id: string, owner: string): Promise<boolean> {
    this.open();
    if (this.jobs.get(id)?.leaseOwner !== owner) return false;
    return this.jobs.delete(id);
  }

  async failJob(id: string, owner: string, retryAfterSeconds?: number): Promise<void> {
    this.open();
    const job = this.jobs.get(id);
    if (!job || job.leaseOwner !== owner) return;
    if (retryAfterSeconds !== undefined) {
      this.jobs.set(id, { ...job, leaseOwner: null, leaseUntil: new Date(this.now().getTime() + Math.ceil(retryAfterSeconds * 1000)) });
      return;
    }
    this.jobs.delete(id);
    if (job.claim) this.claims.delete(job.claim);
  }

  async listStaleJobs(unleasedSeconds: number): Promise<Job[]> {
    this.open();
    const now = this.now().getTime();
    return [...this.jobs.values()]
      .filter((j) => (j.leaseUntil ? j.leaseUntil.getTime() <= now : j.createdAt.getTime() <= now - unleasedSeconds * 1000))
      .map((j) => structuredClone(j));
  }

  async status(): Promise<StoreStatus> {
    if (this.closed) return { kind: "memory", ok: false, detail: "closed" };
    return {
      kind: "memory",
      ok: true,
      detail: `in-process memory (${this.requests.size} smoke requests, ${this.auditRecords.length} audit records); not shared between replicas and lost on restart`,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
