// The SQL store's schema: append-only migrations, and how records map to rows. Shared by
// every SQLite the store runs on (node:sqlite on Node, a Durable Object on Workers).
import { AuditRecordSchema, JobSchema, SmokeRequestSchema, StoreError, type AuditRecord, type Job, type SmokeRequest } from "../types.ts";
import type { SqlRow, SqlValue } from "./driver.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Append only: a released migration is never edited, a new one is added. */
export const MIGRATIONS: readonly Migration[] = [
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
  {
    version: 4,
    name: "claim owners and durable jobs",
    sql: `
      ALTER TABLE idempotency ADD COLUMN owner TEXT;
      CREATE TABLE jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        key TEXT NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, claim_key TEXT,
        attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_until INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX jobs_key ON jobs (key, seq);
    `,
  },
  {
    version: 5,
    name: "A/B smoke: the compare mode and the comparison of a request",
    sql: `
      ALTER TABLE smoke_requests ADD COLUMN compare TEXT NOT NULL DEFAULT 'none';
      ALTER TABLE smoke_requests ADD COLUMN comparison_json TEXT;
    `,
  },
  {
    version: 6,
    name: "records that expire (refusals of people without permission)",
    sql: `
      ALTER TABLE smoke_requests ADD COLUMN expires_at INTEGER;
      ALTER TABLE audit_log ADD COLUMN expires_at INTEGER;
      CREATE INDEX smoke_requests_expires ON smoke_requests (expires_at) WHERE expires_at IS NOT NULL;
      CREATE INDEX audit_log_expires ON audit_log (expires_at) WHERE expires_at IS NOT NULL;
    `,
  },
  {
    version: 7,
    name: "job payloads in parts (a Durable Object's SQLite takes at most 2 MB in one value)",
    sql: `
      ALTER TABLE jobs ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE job_parts (job_id TEXT NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (job_id, part));
    `,
  },
];

type Cell = SqlValue;
type Row = SqlRow;

/** Request field <-> column, and how the value is stored. */
export const REQUEST_COLUMNS: readonly [keyof SmokeRequest, string, "text" | "int" | "bool" | "json" | "date"][] = [
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
  ["compare", "compare", "text"],
  ["status", "status", "text"],
  ["reason", "reason", "text"],
  ["runId", "run_id", "int"],
  ["checkRunId", "check_run_id", "int"],
  ["verdictStatus", "verdict_status", "text"],
  ["verdictSummary", "verdict_summary", "text"],
  ["verdict", "verdict_json", "json"],
  ["comparison", "comparison_json", "json"],
  ["slackChannel", "slack_channel", "text"],
  ["slackTs", "slack_ts", "text"],
  ["installationId", "installation_id", "int"],
  ["commentId", "comment_id", "int"],
  ["runUrl", "run_url", "text"],
  ["expiresAt", "expires_at", "date"],
  ["createdAt", "created_at", "date"],
  ["updatedAt", "updated_at", "date"],
  ["dispatchedAt", "dispatched_at", "date"],
  ["startedAt", "started_at", "date"],
  ["finishedAt", "finished_at", "date"],
];

export const AUDIT_COLUMNS: readonly [keyof AuditRecord, string, "text" | "int" | "date"][] = [
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
  ["expiresAt", "expires_at", "date"],
];

export function toCell(value: unknown, kind: string): Cell {
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
export function requestFromRow(row: Row): SmokeRequest {
  const obj = Object.fromEntries(REQUEST_COLUMNS.map(([field, col, kind]) => [field, fromCell(row[col] ?? null, kind)]));
  const parsed = SmokeRequestSchema.safeParse(obj);
  if (!parsed.success) throw new StoreError(`smoke request ${String(row.id)} in the database is invalid: ${parsed.error.issues[0]?.message ?? "?"}`);
  return parsed.data;
}

export function auditFromRow(row: Row): AuditRecord {
  const obj = Object.fromEntries(AUDIT_COLUMNS.map(([field, col, kind]) => [field, fromCell(row[col] ?? null, kind)]));
  const parsed = AuditRecordSchema.safeParse(obj);
  if (!parsed.success) throw new StoreError(`audit record ${String(row.id)} in the database is invalid: ${parsed.error.issues[0]?.message ?? "?"}`);
  return { ...parsed.data, at: parsed.data.at ?? new Date(0), id: Number(row.id) };
}

/** A job row back as a record; the row was written by the store itself. */
export function jobFromRow(row: Row): Job {
  const parsed = JobSchema.safeParse({
    id: row.id,
    key: row.key,
    kind: row.kind,
    payload: row.payload,
    claim: row.claim_key,
    attempts: Number(row.attempts),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until === null ? null : new Date(Number(row.lease_until)),
    createdAt: new Date(Number(row.created_at)),
  });
  if (!parsed.success) throw new StoreError(`job ${String(row.id)} in the database is invalid: ${parsed.error.issues[0]?.message ?? "?"}`);
  return parsed.data;
}
