// The store's queries over a synchronous SQLite driver (driver.ts). Each method is one
// transaction, so two events cannot both pass a check (a claim, a status transition, a
// job's lease). SqliteStore (Node, node:sqlite) and the Workers Durable Object wrap it;
// nothing here knows which SQLite it talks to.
import { applyPatch, auditLimit, checkClaim, checkLease, leaseRefusal, listLimit, newAudit, newJob, newRequest } from "../records.ts";
import {
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
  type UpdateResult,
} from "../types.ts";
import type { SqlDriver, SqlRow, SqlValue } from "./driver.ts";
import { AUDIT_COLUMNS, auditFromRow, jobFromRow, MIGRATIONS, REQUEST_COLUMNS, requestFromRow, toCell } from "./schema.ts";

/** Rows whose expiry has not passed (the parameter is the store's now, in ms). */
const LIVE_SQL = "(expires_at IS NULL OR expires_at > ?)";
const ACTIVE_SQL = "status IN ('dispatched', 'queued', 'running')";
/** GPU runs of a request (records.ts gpuRunsOf): an A/B request runs two legs. */
const RUNS_SQL = "CASE WHEN compare = 'none' THEN 1 ELSE 2 END";
/** Delivery ids never come back after their TTL, so expired claims are swept now and then. */
const SWEEP_EVERY = 100;

export interface ClaimRequest {
  key: string;
  ttlSeconds: number;
  owner?: string;
}

// One statement decides a claim: insert, take over an expired claim, or renew one's own;
// an unexpired claim of another owner is left alone (RETURNING then yields no row).
const CLAIM_SQL = `INSERT INTO idempotency (key, expires_at, owner) VALUES (?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at, owner = excluded.owner
  WHERE idempotency.expires_at <= ? OR (excluded.owner IS NOT NULL AND idempotency.owner = excluded.owner)
  RETURNING key`;

export class SqlStore {
  private claimsSinceSweep = 0;

  constructor(
    private readonly db: SqlDriver,
    private readonly now: () => Date,
    private readonly newId: () => string,
  ) {}

  schemaVersion(): number {
    const row = this.db.all("SELECT MAX(version) AS v FROM schema_migrations")[0];
    return Number(row?.v ?? 0);
  }

  /** Applies the missing migrations, each in its own transaction, and refuses a newer schema. */
  migrate(): void {
    this.db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    const current = this.schemaVersion();
    const latest = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
    if (current > latest) {
      throw new StoreError(`the database has schema v${current}, newer than this hcp-bot knows (v${latest}); run the newer hcp-bot or use another HCP_DATA_DIR`);
    }
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      this.db.transaction(() => {
        // Another process may have applied it between our read and this write lock.
        if (this.schemaVersion() >= m.version) return;
        this.db.exec(m.sql);
        this.db.all("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [m.version, m.name, this.now().getTime()]);
      });
    }
  }

  /** Claims several keys in one transaction (one commit for a burst); one result per request. */
  claimMany(batch: readonly ClaimRequest[]): boolean[] {
    for (const c of batch) checkClaim(c.key, c.ttlSeconds);
    const now = this.now().getTime();
    return this.db.transaction(() => {
      const claimed = batch.map((c) => this.claimIn(c, now));
      this.claimsSinceSweep += batch.length;
      if (this.claimsSinceSweep >= SWEEP_EVERY) {
        this.claimsSinceSweep = 0;
        this.db.all("DELETE FROM idempotency WHERE expires_at <= ?", [now]);
      }
      return claimed;
    });
  }

  private claimIn(c: ClaimRequest, now: number): boolean {
    return this.db.all(CLAIM_SQL, [c.key, now + Math.ceil(c.ttlSeconds * 1000), c.owner ?? null, now]).length === 1;
  }

  release(key: string): void {
    this.db.all("DELETE FROM idempotency WHERE key = ?", [key]);
  }

  createSmokeRequest(input: NewSmokeRequest): SmokeRequest {
    const request = newRequest(input, this.newId(), this.now());
    const cols = REQUEST_COLUMNS.map(([, c]) => c);
    this.db.transaction(() => {
      this.deleteExpired(request.createdAt.getTime());
      this.db.all(`INSERT INTO smoke_requests (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`, REQUEST_COLUMNS.map(([f, , kind]) => toCell(request[f], kind)));
    });
    return request;
  }

  /** Deletes the requests and audit records whose expiry has passed (reads skip them already); two indexed deletes. */
  private deleteExpired(now: number): void {
    this.db.all("DELETE FROM smoke_requests WHERE expires_at IS NOT NULL AND expires_at <= ?", [now]);
    this.db.all("DELETE FROM audit_log WHERE expires_at IS NOT NULL AND expires_at <= ?", [now]);
  }

  updateSmokeRequest(id: string, patch: SmokeRequestPatch): UpdateResult {
    // Read and write under one write lock, so two events cannot both pass the transition check.
    return this.db.transaction((): UpdateResult => {
      const row = this.db.all("SELECT * FROM smoke_requests WHERE id = ?", [id])[0];
      if (!row) return { ok: false, reason: "not-found", detail: `no smoke request ${id}` };
      const result = applyPatch(requestFromRow(row), patch, this.now());
      if (!result.ok) return result;
      const sets = REQUEST_COLUMNS.filter(([f]) => f !== "id");
      this.db.all(`UPDATE smoke_requests SET ${sets.map(([, c]) => `${c} = ?`).join(", ")} WHERE id = ?`, [...sets.map(([f, , kind]) => toCell(result.request[f], kind)), id]);
      return result;
    });
  }

  private requests(sql: string, params: SqlValue[]): SmokeRequest[] {
    return this.db.all(sql, params).map(requestFromRow);
  }

  getSmokeRequest(id: string): SmokeRequest | undefined {
    return this.requests(`SELECT * FROM smoke_requests WHERE id = ? AND ${LIVE_SQL}`, [id, this.now().getTime()])[0];
  }

  findByRunId(runId: number): SmokeRequest | undefined {
    return this.requests("SELECT * FROM smoke_requests WHERE run_id = ? ORDER BY rowid DESC LIMIT 1", [runId])[0];
  }

  activeForPr(repo: string, pr: number): SmokeRequest[] {
    return this.requests(`SELECT * FROM smoke_requests WHERE repo = ? AND pr = ? AND ${ACTIVE_SQL} ORDER BY rowid`, [repo, pr]);
  }

  countUserRequestsSince(githubLogin: string, since: Date, installationId?: number): number {
    // GPU runs, not requests: an A/B request (compare ≠ none) runs two legs.
    const sql = `SELECT COALESCE(SUM(${RUNS_SQL}), 0) AS n FROM smoke_requests WHERE github_login = ? AND status != 'refused' AND created_at >= ?`;
    return installationId === undefined
      ? this.count(sql, [githubLogin, since.getTime()])
      : this.count(`${sql} AND installation_id = ?`, [githubLogin, since.getTime(), installationId]);
  }

  countActive(repo?: string): number {
    return repo === undefined
      ? this.count(`SELECT COALESCE(SUM(${RUNS_SQL}), 0) AS n FROM smoke_requests WHERE ${ACTIVE_SQL}`, [])
      : this.count(`SELECT COALESCE(SUM(${RUNS_SQL}), 0) AS n FROM smoke_requests WHERE ${ACTIVE_SQL} AND repo = ?`, [repo]);
  }

  countRequests(): number {
    return this.count("SELECT COUNT(*) AS n FROM smoke_requests", []);
  }

  private count(sql: string, params: SqlValue[]): number {
    return Number(this.db.all(sql, params)[0]?.n ?? 0);
  }

  listQueuedOlderThan(date: Date): SmokeRequest[] {
    return this.requests("SELECT * FROM smoke_requests WHERE status IN ('dispatched', 'queued') AND COALESCE(dispatched_at, created_at) < ? ORDER BY rowid", [date.getTime()]);
  }

  listSmokeRequests(q: SmokeListQuery): SmokeRequest[] {
    const limit = listLimit(q.limit);
    if (q.repos.length === 0) return [];
    const where = [`repo IN (${q.repos.map(() => "?").join(", ")})`, LIVE_SQL];
    const params: SqlValue[] = [...q.repos, this.now().getTime()];
    if (q.status !== undefined) {
      where.push("status = ?");
      params.push(q.status);
    }
    if (q.githubLogin !== undefined) {
      where.push("github_login = ?");
      params.push(q.githubLogin);
    }
    if (q.pr !== undefined) {
      where.push("pr = ?");
      params.push(q.pr);
    }
    if (q.before !== undefined) {
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      params.push(q.before.createdAt.getTime(), q.before.createdAt.getTime(), q.before.id);
    }
    return this.requests(`SELECT * FROM smoke_requests WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`, [...params, limit]);
  }

  listSmokeRepos(): string[] {
    return this.db.all(`SELECT DISTINCT repo FROM smoke_requests WHERE ${LIVE_SQL} ORDER BY repo`, [this.now().getTime()]).map((r) => String(r.repo));
  }

  audit(input: AuditInput): AuditRecord {
    const draft = newAudit(input, 0, this.now());
    const cols = AUDIT_COLUMNS.map(([, c]) => c);
    const [row] = this.db.transaction(() => {
      this.deleteExpired(this.now().getTime());
      return this.db.all(`INSERT INTO audit_log (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")}) RETURNING id`, AUDIT_COLUMNS.map(([f, , kind]) => toCell(draft[f], kind)));
    });
    return { ...draft, id: Number(row?.id) };
  }

  auditLog(options: { limit?: number; repo?: string; requestId?: string } = {}): AuditRecord[] {
    const limit = auditLimit(options.limit);
    const now = this.now().getTime();
    const rows =
      options.requestId !== undefined
        ? this.db.all(`SELECT * FROM audit_log WHERE request_id = ? AND ${LIVE_SQL} ORDER BY id DESC LIMIT ?`, [options.requestId, now, limit])
        : options.repo === undefined
          ? this.db.all(`SELECT * FROM audit_log WHERE ${LIVE_SQL} ORDER BY id DESC LIMIT ?`, [now, limit])
          : this.db.all(`SELECT * FROM audit_log WHERE repo = ? AND ${LIVE_SQL} ORDER BY id DESC LIMIT ?`, [options.repo, now, limit]);
    return rows.map(auditFromRow).filter((r) => options.repo === undefined || r.repo === options.repo);
  }

  // ------------------------------------------------------------------ durable jobs

  enqueueJob(input: NewJob, claim?: { key: string; ttlSeconds: number }): Job | undefined {
    const job = newJob(input, this.newId(), this.now(), claim?.key ?? null);
    if (claim) checkClaim(claim.key, claim.ttlSeconds);
    return this.db.transaction(() => {
      if (claim && !this.claimIn({ key: claim.key, ttlSeconds: claim.ttlSeconds }, job.createdAt.getTime())) return undefined;
      const parts = payloadParts(job.payload);
      const inline = parts.length === 1 ? parts[0]! : "";
      this.db.all("INSERT INTO jobs (id, key, kind, payload, claim_key, attempts, created_at, parts) VALUES (?, ?, ?, ?, ?, 0, ?, ?)", [job.id, job.key, job.kind, inline, job.claim, job.createdAt.getTime(), parts.length === 1 ? 0 : parts.length]);
      if (parts.length > 1) parts.forEach((text, i) => this.db.all("INSERT INTO job_parts (job_id, part, text) VALUES (?, ?, ?)", [job.id, i, text]));
      return job;
    });
  }

  leaseJob(id: string, owner: string, seconds: number): LeaseResult {
    checkLease(owner, seconds);
    const now = this.now().getTime();
    return this.db.transaction((): LeaseResult => {
      const row = this.db.all("SELECT * FROM jobs WHERE id = ?", [id])[0];
      if (!row) return { ok: false, reason: "gone" };
      const job = this.jobOf(row);
      const refused = leaseRefusal(job, owner, now);
      if (refused) return refused;
      const first = this.db.all("SELECT id FROM jobs WHERE key = ? ORDER BY seq LIMIT 1", [job.key])[0];
      if (first && first.id !== id) return { ok: false, reason: "behind", waitingFor: String(first.id) };
      const renewing = job.leaseOwner === owner;
      const leased: Job = { ...job, leaseOwner: owner, leaseUntil: new Date(now + seconds * 1000), attempts: job.attempts + (renewing ? 0 : 1) };
      this.db.all("UPDATE jobs SET lease_owner = ?, lease_until = ?, attempts = ? WHERE id = ?", [owner, leased.leaseUntil!.getTime(), leased.attempts, id]);
      return { ok: true, job: leased };
    });
  }

  renewJob(id: string, owner: string, seconds: number): boolean {
    checkLease(owner, seconds);
    return this.db.all("UPDATE jobs SET lease_until = ? WHERE id = ? AND lease_owner = ? RETURNING id", [this.now().getTime() + seconds * 1000, id, owner]).length === 1;
  }

  completeJob(id: string, owner: string): boolean {
    return this.db.transaction(() => {
      const done = this.db.all("DELETE FROM jobs WHERE id = ? AND lease_owner = ? RETURNING id", [id, owner]).length === 1;
      if (done) this.db.all("DELETE FROM job_parts WHERE job_id = ?", [id]);
      return done;
    });
  }

  failJob(id: string, owner: string, retryAfterSeconds?: number): void {
    this.db.transaction(() => {
      if (retryAfterSeconds !== undefined) {
        this.db.all("UPDATE jobs SET lease_owner = NULL, lease_until = ? WHERE id = ? AND lease_owner = ?", [this.now().getTime() + Math.ceil(retryAfterSeconds * 1000), id, owner]);
        return;
      }
      const [gone] = this.db.all("DELETE FROM jobs WHERE id = ? AND lease_owner = ? RETURNING claim_key", [id, owner]);
      if (gone) this.db.all("DELETE FROM job_parts WHERE job_id = ?", [id]);
      if (gone?.claim_key) this.release(String(gone.claim_key));
    });
  }

  listStaleJobs(unleasedSeconds: number): Job[] {
    const now = this.now().getTime();
    return this.db
      .all("SELECT * FROM jobs WHERE (lease_until IS NOT NULL AND lease_until <= ?) OR (lease_until IS NULL AND created_at <= ?) ORDER BY seq", [now, now - unleasedSeconds * 1000])
      .map((row) => this.jobOf(row));
  }

  /** A job row with its payload, joined from its parts when it was stored in parts. */
  private jobOf(row: SqlRow): Job {
    const parts = Number(row.parts ?? 0);
    if (parts === 0) return jobFromRow(row);
    const texts = this.db.all("SELECT text FROM job_parts WHERE job_id = ? ORDER BY part", [row.id as string]).map((r) => String(r.text));
    if (texts.length !== parts) throw new StoreError(`job ${String(row.id)}: ${texts.length} of its ${parts} payload parts are in the database`);
    return jobFromRow({ ...row, payload: texts.join("") });
  }
}

/**
 * A Durable Object's SQLite refuses a value over 2 MB (SQLITE_TOOBIG), and GitHub's deliveries
 * reach 25 MB: a payload is kept in parts of at most PART_CHARS UTF-16 units (at most 3 bytes
 * each in UTF-8, so under 2 MB), never cut inside a surrogate pair.
 */
const PART_CHARS = 512 * 1024;
function payloadParts(payload: string): string[] {
  if (payload.length <= PART_CHARS) return [payload];
  const parts: string[] = [];
  for (let at = 0; at < payload.length; ) {
    let end = Math.min(payload.length, at + PART_CHARS);
    const last = payload.charCodeAt(end - 1);
    if (end < payload.length && last >= 0xd800 && last <= 0xdbff) end--; // keep the pair together
    parts.push(payload.slice(at, end));
    at = end;
  }
  return parts;
}
