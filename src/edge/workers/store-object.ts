// The store on Cloudflare Workers: one SQLite-backed Durable Object running the same SQL as
// the Node server (src/store/sql), through ctx.storage.sql. Its methods are the Store's,
// called over RPC; each runs synchronously, so the object's input gate makes it one
// transaction that no other call interleaves with.
import { DurableObject } from "cloudflare:workers";
import type { SqlDriver } from "../../store/sql/driver.ts";
import { SqlStore } from "../../store/sql/store.ts";
import type { AuditInput, NewJob, NewSmokeRequest, SmokeListQuery, SmokeRequestPatch, Store, StoreStatus } from "../../store/types.ts";
import type { DurableObjectNamespace, DurableObjectState, DurableObjectStorage } from "./types.ts";

function durableObjectDriver(storage: DurableObjectStorage): SqlDriver {
  return {
    all: (sql, params = []) => storage.sql.exec(sql, ...params).toArray(),
    exec: (sql) => void storage.sql.exec(sql),
    transaction: (work) => storage.transactionSync(work),
  };
}

export class HcpStore extends DurableObject {
  private readonly sql: SqlStore;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx as never, env as never);
    this.sql = new SqlStore(durableObjectDriver(ctx.storage), () => new Date(), () => crypto.randomUUID());
    void ctx.blockConcurrencyWhile(async () => this.sql.migrate());
  }

  claim(key: string, ttlSeconds: number, owner?: string) {
    return this.sql.claimMany([{ key, ttlSeconds, ...(owner !== undefined ? { owner } : {}) }])[0];
  }
  release(key: string) {
    this.sql.release(key);
  }
  createSmokeRequest(input: NewSmokeRequest) {
    return this.sql.createSmokeRequest(input);
  }
  updateSmokeRequest(id: string, patch: SmokeRequestPatch) {
    return this.sql.updateSmokeRequest(id, patch);
  }
  getSmokeRequest(id: string) {
    return this.sql.getSmokeRequest(id);
  }
  findByRunId(runId: number) {
    return this.sql.findByRunId(runId);
  }
  activeForPr(repo: string, pr: number) {
    return this.sql.activeForPr(repo, pr);
  }
  countUserRequestsSince(githubLogin: string, since: Date, installationId?: number) {
    return this.sql.countUserRequestsSince(githubLogin, since, installationId);
  }
  countActive(repo?: string) {
    return this.sql.countActive(repo);
  }
  listQueuedOlderThan(date: Date) {
    return this.sql.listQueuedOlderThan(date);
  }
  listSmokeRequests(query: SmokeListQuery) {
    return this.sql.listSmokeRequests(query);
  }
  listSmokeRepos() {
    return this.sql.listSmokeRepos();
  }
  audit(input: AuditInput) {
    return this.sql.audit(input);
  }
  auditLog(options?: { limit?: number; repo?: string; requestId?: string }) {
    return this.sql.auditLog(options);
  }
  enqueueJob(job: NewJob, claim?: { key: string; ttlSeconds: number }) {
    return this.sql.enqueueJob(job, claim);
  }
  leaseJob(id: string, owner: string, seconds: number) {
    return this.sql.leaseJob(id, owner, seconds);
  }
  renewJob(id: string, owner: string, seconds: number) {
    return this.sql.renewJob(id, owner, seconds);
  }
  completeJob(id: string, owner: string) {
    return this.sql.completeJob(id, owner);
  }
  failJob(id: string, owner: string, retryAfterSeconds?: number) {
    this.sql.failJob(id, owner, retryAfterSeconds);
  }
  listStaleJobs(unleasedSeconds: number) {
    return this.sql.listStaleJobs(unleasedSeconds);
  }
  status(): StoreStatus {
    return { kind: "durable-object", ok: true, detail: `SQLite Durable Object (schema v${this.sql.schemaVersion()}, ${this.sql.countRequests()} smoke requests)` };
  }
  close() {}
}

/** The Store the worker uses: every call goes to the one store object, over RPC. */
export function durableObjectStore(namespace: DurableObjectNamespace): Store {
  const stub = () => namespace.get(namespace.idFromName("hcp-bot"));
  return new Proxy({} as Store, {
    get: (_, name) => (name === "then" ? undefined : (...args: unknown[]) => stub()[name as string]!(...args)),
  });
}
