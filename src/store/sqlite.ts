// The embedded default store: one SQLite file, `${dataDir}/hcp-bot.sqlite`, in WAL mode.
// better-sqlite3 is synchronous, so each method is one transaction that cannot
// interleave with another in this process; BEGIN IMMEDIATE plus a busy timeout
// serialize writers across processes (two bots on one volume, a CLI next to the server).
import { randomUUID } from "node:crypto";
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { applyPatch, auditLimit, checkClaim, closedError, listLimit, newAudit, newRequest } from "./records.ts";
import {
  AuditRecordSchema,
  SmokeRequestSchema,
  StoreError,
  type AuditInput,
  type AuditRecord,
  type NewSmokeRequest,
  type SmokeListQuery,
  type SmokeRequest,
  type SmokeRequestPatch,
  type Store,
  type StoreOptions,
  type StoreStatus,
  type UpdateResult,
} from "./types.ts";

export const DB_FILE = "hcp-bot.sqlite";

interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Append only: a released migration is never edited, a new one is added. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "idempotency, smoke requests, audit log",
    sql: `
      CREATE TABLE idempotency (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX idempotency_expires ON idempotency (expires_at);
      CREATE TABLE smoke_requests (
        id TEXT PRIMARY KEY,
        repo TEXT NOT NULL, pr INTEGER NOT NULL, sha TEXT NOT NULL, source TEXT NOT NULL,
        github_login TEXT NOT NULL, slack_user TEXT, delivery_id TEXT,
        recipe TEXT NOT NULL, cp INTEGER NOT NULL, sizes TEXT, gpus INTEGER NOT NULL, iters INTEGER NOT NULL,
        overrides TEXT NOT NULL, expect_hcp INTEGER NOT NULL,
        status TEXT NOT NULL, reason TEXT, run_id INTEGER, check_run_id INTEGER,
        verdict_status TEXT, verdict_summary TEXT, slack_channel TEXT, slack_ts TEXT,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        dispatched_at INTEGER, started_at INTEGER, finished_at INTEGER
      );
      CREATE INDEX smoke_requests_pr ON smoke_requests (repo, pr, status);
      CREATE INDEX smoke_requests_run ON smoke_requests (run_id);
      CREATE INDEX smoke_requests_user ON smoke_requests (github_login, created_at);
      CREATE INDEX smoke_requests_status ON smoke_requests (status, dispatched_at);
      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL,
        action TEXT NOT NULL, decision TEXT NOT NULL, reason TEXT,
        github_login TEXT, slack_user TEXT, repo TEXT, pr INTEGER, sha TEXT, recipe TEXT,
        delivery_id TEXT, request_id TEXT, run_id INTEGER, verdict TEXT
      );
      CREATE INDEX audit_log_repo ON audit_log (repo, id);
    `,
  },
  {
    version: 2,
    name: "installation, PR comment and run link of a smoke request",
    sql: `
      ALTER TABLE smoke_requests ADD COLUMN installation_id INTEGER;
      ALTER TABLE smoke_requests ADD COLUMN comment_id INTEGER;
      ALTER TABLE smoke_requests ADD COLUMN run_url TEXT;
    `,
  },
  {
    version: 3,
    name: "the whole verdict of a smoke request, history and audit-trail indexes",
    sql: `
      ALTER TABLE smoke_requests ADD COLUMN verdict_json TEXT;
      CREATE INDEX smoke_requests_created ON smoke_requests (created_at, id);
      CREATE INDEX audit_log_request ON audit_log (request_id, id);
    `,
  },
];

type Cell = string | number | bigint | Buffer | null;
type Row = Record<string, Cell>;

/** Request field <-> column, and how the value is stored. */
const REQUEST_COLUMNS: readonly [keyof SmokeRequest, string, "text" | "int" | "bool" | "json" | "date"][] = [
  ["id", "id", "text"],
  ["repo", "repo", "text"],
  ["pr", "pr", "int"],
  ["sha", "sha", "text"],
  ["source", "source", "text"],
  ["githubLogin", "github_login", "text"],
  ["slackUser", "slack_user", "text"],
  ["deliveryId", "delivery_id", "text"],
  ["recipe", "recipe", "text"],
  ["cp", "cp", "int"],
  ["sizes", "sizes", "json"],
  ["gpus", "gpus", "int"],
  ["iters", "iters", "int"],
  ["overrides", "overrides", "json"],
  ["expectHcp", "expect_hcp", "bool"],
  ["status", "status", "text"],
  ["reason", "reason", "text"],
  ["runId", "run_id", "int"],
  ["checkRunId", "check_run_id", "int"],
  ["verdictStatus", "verdict_status", "text"],
  ["verdictSummary", "verdict_summary", "text"],
  ["verdict", "verdict_json", "json"],
  ["slackChannel", "slack_channel", "text"],
  ["slackTs", "slack_ts", "text"],
  ["installationId", "installation_id", "int"],
  ["commentId", "comment_id", "int"],
  ["runUrl", "run_url", "text"],
  ["createdAt", "created_at", "date"],
  ["updatedAt", "updated_at", "date"],
  ["dispatchedAt", "dispatched_at", "date"],
  ["startedAt", "started_at", "date"],
  ["finishedAt", "finished_at", "date"],
];

const AUDIT_COLUMNS: readonly [keyof AuditRecord, string, "text" | "int" | "date"][] = [
  ["at", "at", "date"],
  ["action", "action", "text"],
  ["decision", "decision", "text"],
  ["reason", "reason", "text"],
  ["githubLogin", "github_login", "text"],
  ["slackUser", "slack_user", "text"],
  ["repo", "repo", "text"],
  ["pr", "pr", "int"],
  ["sha", "sha", "text"],
  ["recipe", "recipe", "text"],
  ["deliveryId", "delivery_id", "text"],
  ["requestId", "request_id", "text"],
  ["runId", "run_id", "int"],
  ["verdict", "verdict", "text"],
];

function toCell(value: unknown, kind: string): Cell {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case "bool":
      return value ? 1 : 0;
    case "json":
      return JSON.stringify(value);
    case "date":
      return (value as Date).getTime();
    default:
      return value as Cell;
  }
}

function fromCell(cell: Cell, kind: string): unknown {
  if (cell === null) return null;
  switch (kind) {
    case "bool":
      return cell === 1;
    case "json":
      return JSON.parse(String(cell));
    case "date":
      return new Date(Number(cell));
    case "int":
      return Number(cell);
    default:
      return cell;
  }
}

/** Reads a row back through the record schema, so a hand-edited database cannot hand out bad records. */
function requestFromRow(row: Row): SmokeRequest {
  const obj = Object.fromEntries(REQUEST_COLUMNS.map(([field, col, kind]) => [field, fromCell(row[col] ?? null, kind)]));
  const parsed = SmokeRequestSchema.safeParse(obj);
  if (!parsed.success) throw new StoreError(`smoke request ${String(row.id)} in the database is invalid: ${parsed.error.issues[0]?.message ?? "?"}`);
  return parsed.data;
}

function auditFromRow(row: Row): AuditRecord {
  const obj = Object.fromEntries(AUDIT_COLUMNS.map(([field, col, kind]) => [field, fromCell(row[col] ?? null, kind)]));
  const parsed = AuditRecordSchema.safeParse(obj);
  if (!parsed.success) throw new StoreError(`audit record ${String(row.id)} in the database is invalid: ${parsed.error.issues[0]?.message ?? "?"}`);
  return { ...parsed.data, at: parsed.data.at ?? new Date(0), id: Number(row.id) };
}

const ACTIVE_SQL = "status IN ('dispatched', 'queued', 'running')";

const SWEEP_EVERY = 100;

export class SqliteStore implements Store {
  private closed = false;
  private claimsSinceSweep = 0;
  private pendingClaims: { key: string; ttlSeconds: number; resolve: (claimed: boolean) => void; reject: (error: unknown) => void }[] = [];
  private readonly statements = new Map<string, Database.Statement>();
  private readonly now: () => Date;
  private readonly newId: () => string;

  private constructor(
    private readonly db: Database.Database,
    readonly file: string,
    options: StoreOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? randomUUID;
  }

  /**
   * Opens (creating on first start) `${dataDir}/hcp-bot.sqlite`. Every failure is a
   * StoreError that names the path and what to do about it.
   */
  static open(dataDir: string, options: StoreOptions = {}): SqliteStore {
    const dir = resolve(dataDir);
    prepareDataDir(dir);
    const file = join(dir, DB_FILE);
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { timeout: 5000 });
      // WAL: readers never block the writer; FULL sync: a claimed key survives a power cut,
      // which matters more here than write speed (a lost claim can run a GPU job twice).
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      migrate(db, () => (options.now ?? (() => new Date()))());
      return new SqliteStore(db, file, options);
    } catch (error) {
      db?.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`${file} cannot be used as the SQLite store: ${messageOf(error)}. If the file is damaged, move it aside (a new one is created) or restore a backup; check that ${dir} is writable.`, { cause: error });
    }
  }

  /** Runs a statement group; SQLite failures after start-up become StoreErrors too. */
  private run<T>(work: () => T): T {
    if (this.closed) throw closedError();
    try {
      return work();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      throw new StoreError(`SQLite store ${this.file}: ${messageOf(error)}`, { cause: error });
    }
  }

  /** Prepared once per SQL text: every method runs a handful of fixed statements. */
  private stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Claims arriving in the same turn of the event loop (a burst of webhooks or Slack
   * commands) share one transaction, so one fsync covers them all: with synchronous=FULL
   * each commit costs milliseconds, and a burst would otherwise queue behind them.
   */
  claim(key: string, ttlSeconds: number): Promise<boolean> {
    try {
      checkClaim(key, ttlSeconds);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      this.pendingClaims.push({ key, ttlSeconds, resolve, reject });
      if (this.pendingClaims.length === 1) setImmediate(() => this.flushClaims());
    });
  }

  private flushClaims(): void {
    const batch = this.pendingClaims;
    this.pendingClaims = [];
    const now = this.now().getTime();
    let results: boolean[];
    try {
      results = this.run(() =>
        this.db
          .transaction(() => {
            const claimed = batch.map((c) =>
              // One statement decides: insert, or take over an expired claim; an unexpired one is left alone.
              this.stmt(
                `INSERT INTO idempotency (key, expires_at) VALUES (?, ?)
                 ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE idempotency.expires_at <= ?`,
              ).run(c.key, now + Math.ceil(c.ttlSeconds * 1000), now).changes === 1,
            );
            // Delivery ids never come back after their TTL, so expired rows are swept now and then.
            this.claimsSinceSweep += batch.length;
            if (this.claimsSinceSweep >= SWEEP_EVERY) {
              this.claimsSinceSweep = 0;
              this.stmt("DELETE FROM idempotency WHERE expires_at <= ?").run(now);
            }
            return claimed;
          })
          .immediate(),
      );
    } catch (error) {
      for (const c of batch) c.reject(error);
      return;
    }
    batch.forEach((c, i) => c.resolve(results[i]!));
  }

  async release(key: string): Promise<void> {
    if (this.closed) throw closedError();
    this.run(() => this.stmt("DELETE FROM idempotency WHERE key = ?").run(key));
  }

  async createSmokeRequest(input: NewSmokeRequest): Promise<SmokeRequest> {
    const request = newRequest(input, this.newId(), this.now());
    return this.run(() => {
      const cols = REQUEST_COLUMNS.map(([, c]) => c);
      const insert = this.stmt(`INSERT INTO smoke_requests (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
      this.db.transaction(() => insert.run(...REQUEST_COLUMNS.map(([f, , kind]) => toCell(request[f], kind))))();
      return request;
    });
  }

  async updateSmokeRequest(id: string, patch: SmokeRequestPatch): Promise<UpdateResult> {
    return this.run(() =>
      // IMMEDIATE: read and write under one write lock, so two events cannot both pass the transition check.
      this.db
        .transaction((): UpdateResult => {
          const row = this.stmt("SELECT * FROM smoke_requests WHERE id = ?").get(id) as Row | undefined;
          if (!row) return { ok: false, reason: "not-found", detail: `no smoke request ${id}` };
          const result = applyPatch(requestFromRow(row), patch, this.now());
          if (!result.ok) return result;
          const sets = REQUEST_COLUMNS.filter(([f]) => f !== "id");
          this.stmt(`UPDATE smoke_requests SET ${sets.map(([, c]) => `${c} = ?`).join(", ")} WHERE id = ?`).run(...sets.map(([f, , kind]) => toCell(result.request[f], kind)), id);
          return result;
        })
        .immediate(),
    );
  }

  private many(sql: string, ...params: (string | number)[]): SmokeRequest[] {
    return this.run(() => (this.stmt(sql).all(...params) as Row[]).map(requestFromRow));
  }

  async getSmokeRequest(id: string): Promise<SmokeRequest | undefined> {
    return this.many("SELECT * FROM smoke_requests WHERE id = ?", id)[0];
  }

  async findByRunId(runId: number): Promise<SmokeRequest | undefined> {
    return this.many("SELECT * FROM smoke_requests WHERE run_id = ? ORDER BY rowid DESC LIMIT 1", runId)[0];
  }

  async activeForPr(repo: string, pr: number): Promise<SmokeRequest[]> {
    return this.many(`SELECT * FROM smoke_requests WHERE repo = ? AND pr = ? AND ${ACTIVE_SQL} ORDER BY rowid`, repo, pr);
  }

  async countUserRequestsSince(githubLogin: string, since: Date): Promise<number> {
    return this.count("SELECT COUNT(*) AS n FROM smoke_requests WHERE github_login = ? AND status != 'refused' AND created_at >= ?", githubLogin, since.getTime());
  }

  async countActive(repo?: string): Promise<number> {
    return repo === undefined
      ? this.count(`SELECT COUNT(*) AS n FROM smoke_requests WHERE ${ACTIVE_SQL}`)
      : this.count(`SELECT COUNT(*) AS n FROM smoke_requests WHERE ${ACTIVE_SQL} AND repo = ?`, repo);
  }

  private count(sql: string, ...params: (string | number)[]): number {
    return this.run(() => Number((this.stmt(sql).get(...params) as { n: number }).n));
  }

  async listQueuedOlderThan(date: Date): Promise<SmokeRequest[]> {
    return this.many(
      "SELECT * FROM smoke_requests WHERE status IN ('dispatched', 'queued') AND COALESCE(dispatched_at, created_at) < ? ORDER BY rowid",
      date.getTime(),
    );
  }

  async listSmokeRequests(q: SmokeListQuery): Promise<SmokeRequest[]> {
    const limit = listLimit(q.limit);
    if (q.repos.length === 0) return [];
    const where = [`repo IN (${q.repos.map(() => "?").join(", ")})`];
    const params: (string | number)[] = [...q.repos];
    if (q.status !== undefined) {
      where.push("status = ?");
      params.push(q.status);
    }
    if (q.githubLogin !== undefined) {
      where.push("github_login = ?");
      params.push(q.githubLogin);
    }
    if (q.before !== undefined) {
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      params.push(q.before.createdAt.getTime(), q.before.createdAt.getTime(), q.before.id);
    }
    // Not cached as a prepared statement: the repository list makes the SQL text vary.
    return this.run(() =>
      (this.db.prepare(`SELECT * FROM smoke_requests WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`).all(...params, limit) as Row[]).map(requestFromRow),
    );
  }

  async listSmokeRepos(): Promise<string[]> {
    return this.run(() => (this.stmt("SELECT DISTINCT repo FROM smoke_requests ORDER BY repo").all() as { repo: string }[]).map((r) => r.repo));
  }

  async audit(input: AuditInput): Promise<AuditRecord> {
    const draft = newAudit(input, 0, this.now());
    return this.run(() => {
      const cols = AUDIT_COLUMNS.map(([, c]) => c);
      const insert = this.stmt(`INSERT INTO audit_log (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
      const info = this.db.transaction(() => insert.run(...AUDIT_COLUMNS.map(([f, , kind]) => toCell(draft[f], kind))))();
      return { ...draft, id: Number(info.lastInsertRowid) };
    });
  }

  async auditLog(options: { limit?: number; repo?: string; requestId?: string } = {}): Promise<AuditRecord[]> {
    const limit = auditLimit(options.limit);
    return this.run(() => {
      const rows =
        options.requestId !== undefined
          ? this.stmt("SELECT * FROM audit_log WHERE request_id = ? ORDER BY id DESC LIMIT ?").all(options.requestId, limit)
          : options.repo === undefined
            ? this.stmt("SELECT * FROM audit_log ORDER BY id DESC LIMIT ?").all(limit)
            : this.stmt("SELECT * FROM audit_log WHERE repo = ? ORDER BY id DESC LIMIT ?").all(options.repo, limit);
      return (rows as Row[]).map(auditFromRow).filter((r) => options.repo === undefined || r.repo === options.repo);
    });
  }

  async status(): Promise<StoreStatus> {
    if (this.closed) return { kind: "sqlite", ok: false, detail: `${this.file}: closed` };
    try {
      const mode = String(this.db.pragma("journal_mode", { simple: true }));
      const version = schemaVersion(this.db);
      const requests = this.count("SELECT COUNT(*) AS n FROM smoke_requests");
      return { kind: "sqlite", ok: true, detail: `${this.file} (journal ${mode}, schema v${version}, ${requests} smoke requests)` };
    } catch (error) {
      return { kind: "sqlite", ok: false, detail: `${this.file}: ${messageOf(error)}` };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.pendingClaims.length > 0) this.flushClaims(); // claims already made are kept
    this.closed = true;
    this.db.close();
  }
}

/** Creates the data folder on first start and checks it is a writable folder. */
function prepareDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new StoreError(`cannot create the data folder ${dir} (${codeOf(error)}); set HCP_DATA_DIR to a writable folder`, { cause: error });
  }
  if (!statSync(dir).isDirectory()) throw new StoreError(`the data folder ${dir} is not a folder; set HCP_DATA_DIR to a writable folder`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new StoreError(`the data folder ${dir} is not writable (${codeOf(error)}); set HCP_DATA_DIR to a writable folder`, { cause: error });
  }
}

function schemaVersion(db: Database.Database): number {
  const row = db.prepare("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null };
  return row.v ?? 0;
}

/** Applies the missing migrations, each in its own transaction, and refuses a newer schema. */
function migrate(db: Database.Database, now: () => Date): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  const current = schemaVersion(db);
  const latest = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
  if (current > latest) {
    throw new StoreError(`the database has schema v${current}, newer than this hcp-bot knows (v${latest}); run the newer hcp-bot or use another HCP_DATA_DIR`);
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      // Another process may have applied it between our read and this write lock.
      if (schemaVersion(db) >= m.version) return;
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(m.version, m.name, now().getTime());
    }).immediate();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ?? messageOf(error);
}
