// The store behind idempotency, quotas and the audit log. SQLite is the embedded
// default (one Node process, a data folder on disk); Redis (REDIS_URL) is shared by
// replicas; memory is for tests and edge.
import { MemoryStore } from "./memory/store.ts";
import { SqliteStore } from "./sqlite/store.ts";
import type { RedisStoreSettings } from "./redis/store.ts";
import type { Store, StoreOptions } from "./types.ts";

export * from "./types.ts";
export { MemoryStore } from "./memory/store.ts";
export { SqliteStore, DB_FILE } from "./sqlite/store.ts";
export { utcDayStart } from "./records.ts";

export type StoreSettings = { kind: "sqlite"; dataDir: string } | { kind: "memory" } | ({ kind: "redis" } & RedisStoreSettings);

/**
 * Opens the configured store; a SqliteStore failure is a StoreError naming the path.
 * Async although SQLite opens synchronously, so a networked store (Redis) fits the same call.
 */
export async function openStore(settings: StoreSettings, options: StoreOptions = {}): Promise<Store> {
  if (settings.kind === "redis") {
    // Loaded only when used: the embedded deployment never needs a Redis client.
    const { RedisStore } = await import("./redis/store.ts");
    return RedisStore.open(settings, options);
  }
  return settings.kind === "sqlite" ? SqliteStore.open(settings.dataDir, options) : new MemoryStore(options);
}
