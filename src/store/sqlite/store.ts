// The embedded default store: one SQLite file, `${dataDir}/hcp-bot.sqlite`, in WAL mode,
// through Node's own node:sqlite (no native module to build). The queries live in
// sql/store.ts (shared with the Workers Durable Object); this file opens the file, batches
// claims, and makes failures StoreErrors. node:sqlite is synchronous, so each method is one transaction that cannot interleave
// with another in this process; BEGIN IMMEDIATE plus a busy timeout serialize writers across
// processes (two bots on one volume, a CLI next to the server).
import { randomUUID } from "node:crypto";
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { checkClaim, closedError } from "../records.ts";
import type { SqlDriver, SqlRow, SqlValue } from "../sql/driver.ts";
import { SqlStore, type ClaimRequest } from "../sql/store.ts";
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
  type Store,
  type StoreOptions,
  type StoreStatus,
  type UpdateResult,
} from "../types.ts";

export const DB_FILE = "hcp-bot.sqlite";

/** node:sqlite behind the SQL store's driver; statements prepared once per SQL text. */
export function nodeSqliteDriver(db: DatabaseSync): SqlDriver {
  const statements = new Map<string, StatementSync>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  let depth = 0;
  return {
    // all() runs a statement that yields no rows too, and returns [] for it.
    all: (sql, params = []) => prepare(sql).all(...params) as SqlRow[],
    exec: (sql) => db.exec(sql),
    transaction<T>(work: () => T): T {
      // The outermost holds the write lock from its start; an inner one is a savepoint.
      const [begin, commit, rollback] = depth === 0 ? ["BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"] : [`SAVEPOINT t${depth}`, `RELEASE t${depth}`, `ROLLBACK TO t${depth}; RELEASE t${depth}`];
      db.exec(begin);
      depth++;
      try {
        const result = work();
        depth--;
        db.exec(commit);
        return result;
      } catch (error) {
        depth--;
        db.exec(rollback);
        throw error;
      }
    },
  };
}

export class SqliteStore implements Store {
  private closed = false;
  private pendingClaims: (ClaimRequest & { resolve: (claimed: boolean) => void; reject: (error: unknown) => void })[] = [];
  private readonly sql: SqlStore;

  private constructor(
    private readonly db: DatabaseSync,
    readonly file: string,
    options: StoreOptions,
  ) {
    this.sql = new SqlStore(nodeSqliteDriver(db), options.now ?? (() => new Date()), options.newId ?? randomUUID);
  }

  /**
   * Opens (creating on first start) `${dataDir}/hcp-bot.sqlite`. Every failure is a
   * StoreError that names the path and what to do about it.
   */
  static open(dataDir: string, options: StoreOptions = {}): SqliteStore {
    const dir = resolve(dataDir);
    prepareDataDir(dir);
    const file = join(dir, DB_FILE);
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(file, { timeout: 5000 });
      // WAL: readers never block the writer; FULL sync: a claimed key survives a power cut,
      // which matters more here than write speed (a lost claim can run a GPU job twice).
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = FULL");
      const store = new SqliteStore(db, file, options);
      store.sql.migrate();
      return store;
    } catch (error) {
      db?.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`${file} cannot be used as the SQLite store: ${messageOf(error)}. If the file is damaged, move it aside (a new one is created) or restore a backup; check that ${dir} is writable.`, { cause: error });
    }
  }

  /** Runs a store method; SQLite failures after start-up become StoreErrors too. */
  private run<T>(work: (sql: SqlStore) => T): Promise<T> {
    try {
      return Promise.resolve(this.runSync(work));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private runSync<T>(work: (sql: SqlStore) => T): T {
    if (this.closed) throw closedError();
    try {
      return work(this.sql);
    } catch (error) {
      if (error instanceof StoreError) throw error;
      throw new StoreError(`SQLite store ${this.file}: ${messageOf(error)}`, { cause: error });
    }
  }

  /**
   * Claims arriving in the same turn of the event loop (a burst of webhooks or Slack
   * commands) share one transaction, so one fsync covers them all: with synchronous=FULL
   * each commit costs milliseconds, and a burst would otherwise queue behind them.
   */
  claim(key: string, ttlSeconds: number, owner?: string): Promise<boolean> {
    try {
      checkClaim(key, ttlSeconds);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      this.pendingClaims.push({ key, ttlSeconds, ...(owner !== undefined ? { owner } : {}), resolve, reject });
      if (this.pendingClaims.length === 1) setImmediate(() => this.flushClaims());
    });
  }

  private flushClaims(): void {
    const batch = this.pendingClaims;
    this.pendingClaims = [];
    let results: boolean[];
    try {
      results = this.runSync((sql) => sql.claimMany(batch));
    } catch (error) {
      for (const c of batch) c.reject(error);
      return;
    }
    batch.forEach((c, i) => c.resolve(results[i]!));
  }

  release(key: string): Promise<void> {
    return this.run((sql) => sql.release(key));
  }

  createSmokeRequest(input: NewSmokeRequest): Promise<SmokeRequest> {
    return this.run((sql) => sql.createSmokeRequest(input));
  }

  updateSmokeRequest(id: string, patch: SmokeRequestPatch): Promise<UpdateResult> {
    return this.run((sql) => sql.updateSmokeRequest(id, patch));
  }

  getSmokeRequest(id: string): Promise<SmokeRequest | undefined> {
    return this.run((sql) => sql.getSmokeRequest(id));
  }

  findByRunId(runId: number): Promise<SmokeRequest | undefined> {
    return this.run((sql) => sql.findByRunId(runId));
  }

  activeForPr(repo: string, pr: number): Promise<SmokeRequest[]> {
    return this.run((sql) => sql.activeForPr(repo, pr));
  }

  countUserRequestsSince(githubLogin: string, since: Date, installationId?: number): Promise<number> {
    return this.run((sql) => sql.countUserRequestsSince(githubLogin, since, installationId));
  }

  countActive(repo?: string): Promise<number> {
    return this.run((sql) => sql.countActive(repo));
  }

  listQueuedOlderThan(date: Date): Promise<SmokeRequest[]> {
    return this.run((sql) => sql.listQueuedOlderThan(date));
  }

  listSmokeRequests(query: SmokeListQuery): Promise<SmokeRequest[]> {
    return this.run((sql) => sql.listSmokeRequests(query));
  }

  listSmokeRepos(): Promise<string[]> {
    return this.run((sql) => sql.listSmokeRepos());
  }

  audit(input: AuditInput): Promise<AuditRecord> {
    return this.run((sql) => sql.audit(input));
  }

  auditLog(options: { limit?: number; repo?: string; requestId?: string } = {}): Promise<AuditRecord[]> {
    return this.run((sql) => sql.auditLog(options));
  }

  enqueueJob(job: NewJob, claim?: { key: string; ttlSeconds: number }): Promise<Job | undefined> {
    return this.run((sql) => sql.enqueueJob(job, claim));
  }

  leaseJob(id: string, owner: string, seconds: number): Promise<LeaseResult> {
    return this.run((sql) => sql.leaseJob(id, owner, seconds));
  }

  renewJob(id: string, owner: string, seconds: number): Promise<boolean> {
    return this.run((sql) => sql.renewJob(id, owner, seconds));
  }

  completeJob(id: string, owner: string): Promise<boolean> {
    return this.run((sql) => sql.completeJob(id, owner));
  }

  failJob(id: string, owner: string, retryAfterSeconds?: number): Promise<void> {
    return this.run((sql) => sql.failJob(id, owner, retryAfterSeconds));
  }

  listStaleJobs(unleasedSeconds: number): Promise<Job[]> {
    return this.run((sql) => sql.listStaleJobs(unleasedSeconds));
  }

  async status(): Promise<StoreStatus> {
    if (this.closed) return { kind: "sqlite", ok: false, detail: `${this.file}: closed` };
    try {
      const mode = String((this.db.prepare("PRAGMA journal_mode").get() as { journal_mode?: unknown } | undefined)?.journal_mode);
      return { kind: "sqlite", ok: true, detail: `${this.file} (journal ${mode}, schema v${this.sql.schemaVersion()}, ${this.sql.countRequests()} smoke requests)` };
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ?? messageOf(error);
}
