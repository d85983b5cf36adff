// The Stores every contract test runs against: MemoryStore, SqliteStore, KvStore (Deno KV's
// engine through @deno/kv) and RedisStore (a real redis-server; the Durable Object runs the
// SQLite store's SQL). Each test file that imports this starts its own redis-server.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach } from "vitest";
import { openKv } from "@deno/kv";
import { MemoryStore, SqliteStore, type Store, type StoreOptions } from "../../src/store/index.ts";
import { KvStore, type Kv } from "../../src/store/kv/store.ts";
import { RedisStore } from "../../src/store/redis/store.ts";
import { startRedis } from "../support/redis.ts";
import { Clock } from "./helpers.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export const IMPLEMENTATIONS: [string, (options: StoreOptions) => Store][] = [
  ["MemoryStore", (options) => new MemoryStore(options)],
  [
    "SqliteStore",
    (options) => {
      const dir = mkdtempSync(join(tmpdir(), "hcp-store-"));
      dirs.push(dir);
      return SqliteStore.open(join(dir, "data"), options);
    },
  ],
];

/**
 * Deno KV through @deno/kv, the same database engine (denokv) that `Deno.openKv` runs on a
 * local file; the Deno tests (test/edge) run the store on Deno itself.
 */
IMPLEMENTATIONS.push(["KvStore (Deno KV)", (options) => deferred(openKv(":memory:").then((kv) => new KvStore(kv as unknown as Kv, "memory", options)))]);

/** A real redis-server; each store gets a key prefix of its own, so the tests do not see each other. */
const redis = await startRedis();
afterAll(() => redis.dispose());
let redisStores = 0;
IMPLEMENTATIONS.push(["RedisStore", (options) => deferred(RedisStore.open({ url: redis.url, prefix: `contract${++redisStores}:` }, options))]);

/** A Store whose methods wait for one that is still opening (the contract's setup is synchronous). */
function deferred(opening: Promise<Store>): Store {
  return new Proxy({} as Store, {
    get: (_, name) => async (...args: unknown[]) => {
      const store = (await opening) as unknown as Record<string | symbol, (...a: unknown[]) => unknown>;
      return store[name]!(...args);
    },
  });
}


/** A store of the given kind on a clock of its own, with request ids req-1, req-2, ... */
export function contractSetup(make: (options: StoreOptions) => Store): { clock: Clock; store: Store } {
  const clock = new Clock();
  let n = 0;
  const store = make({ now: clock.now, newId: () => `req-${++n}` });
  return { clock, store };
}
