// The few things the SQL store needs from a SQLite connection, so the same queries run on
// node:sqlite (the Node server) and on a Durable Object's `ctx.storage.sql` (Cloudflare
// Workers). Both are synchronous: a store method is one transaction that nothing else in
// the process (or the object) can interleave with.

export type SqlValue = string | number | null;
export type SqlRow = Record<string, SqlValue>;

export interface SqlDriver {
  /** Runs one statement and returns the rows it yields (RETURNING included). */
  all(sql: string, params?: readonly SqlValue[]): SqlRow[];
  /** Runs a script of statements (migrations). */
  exec(sql: string): void;
  /** Runs `work` as one transaction, holding the write lock from its start; rolled back if it throws. */
  transaction<T>(work: () => T): T;
}
