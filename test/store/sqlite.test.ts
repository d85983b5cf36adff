// SQLite-only behaviour: the file on disk, restarts, other processes, and a bad data dir.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { DB_FILE, SqliteStore, StoreError, openStore } from "../../src/store/index.ts";
import { Clock, request } from "./helpers.ts";

const dirs: string[] = [];
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "hcp-sqlite-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("SqliteStore on disk", () => {
  it("creates the data folder and hcp-bot.sqlite on first start, in WAL mode with a migrations table", async () => {
    const dataDir = join(scratch(), "nested", "data");
    const store = SqliteStore.open(dataDir);
    expect(store.file).toBe(join(dataDir, DB_FILE));
    expect(existsSync(store.file)).toBe(true);
    expect(await store.status()).toEqual({ kind: "sqlite", ok: true, detail: `${store.file} (journal wal, schema v7, 0 smoke requests)` });
    await store.close();
    const db = new DatabaseSync(join(dataDir, DB_FILE), { readOnly: true });
    expect(db.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all()).toEqual([
      { version: 1, name: "idempotency, smoke requests, audit log" },
      { version: 2, name: "installation, PR comment and run link of a smoke request" },
      { version: 3, name: "the whole verdict of a smoke request, history and audit-trail indexes" },
      { version: 4, name: "claim owners and durable jobs" },
      { version: 5, name: "A/B smoke: the compare mode and the comparison of a request" },
      { version: 6, name: "records that expire (refusals of people without permission)" },
      { version: 7, name: "job payloads in parts (a Durable Object's SQLite takes at most 2 MB in one value)" },
    ]);
    db.close();
  });

  it("keeps claims, requests and the audit log across a restart between two deliveries", async () => {
    const dataDir = join(scratch(), "data");
    const clock = new Clock();
    const first = SqliteStore.open(dataDir, { now: clock.now });
    expect(await first.claim("gh:delivery:72d3162e", 24 * 3600)).toBe(true);
    const created = await first.createSmokeRequest(request({ deliveryId: "72d3162e" }));
    await first.updateSmokeRequest(created.id, { status: "dispatched", runId: 9001 });
    await first.audit({ action: "smoke", decision: "allowed", githubLogin: "alice", deliveryId: "72d3162e", requestId: created.id, runId: 9001 });
    await first.close();

    // The same delivery arrives again (GitHub's manual redelivery reuses the id) after the bot restarted.
    clock.advance(3600);
    const second = SqliteStore.open(dataDir, { now: clock.now });
    expect(await second.claim("gh:delivery:72d3162e", 24 * 3600)).toBe(false);
    expect(await second.getSmokeRequest(created.id)).toMatchObject({ status: "dispatched", runId: 9001, sizes: [2, 2], overrides: request().overrides, expectHcp: true });
    expect((await second.findByRunId(9001))?.id).toBe(created.id);
    expect(await second.countActive()).toBe(1);
    expect(await second.auditLog()).toMatchObject([{ deliveryId: "72d3162e", runId: 9001 }]);
    // And the TTL is still honoured after the restart.
    clock.advance(23 * 3600);
    expect(await second.claim("gh:delivery:72d3162e", 24 * 3600)).toBe(true);
    await second.close();
  });

  it("shares state between two connections to one file", async () => {
    const dataDir = scratch();
    const a = SqliteStore.open(dataDir);
    const b = SqliteStore.open(dataDir);
    expect(await a.claim("k", 60)).toBe(true);
    expect(await b.claim("k", 60)).toBe(false);
    const r = await a.createSmokeRequest(request());
    expect(await b.updateSmokeRequest(r.id, { status: "dispatched" })).toMatchObject({ ok: true });
    expect(await a.getSmokeRequest(r.id)).toMatchObject({ status: "dispatched" });
    await a.close();
    await b.close();
  });

  it("lets exactly one of several processes win each concurrently claimed key", async () => {
    const dataDir = scratch();
    await SqliteStore.open(dataDir).close(); // migrate once up front, as the server does at start
    const goFile = join(dataDir, "go");
    const keys = 200;
    const workers = Array.from({ length: 6 }, () => startWorker(dataDir, goFile, keys));
    await Promise.all(workers.map((w) => w.ready));
    writeFileSync(goFile, "");
    const wins = await Promise.all(workers.map((w) => w.done));
    const all = wins.flat().sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: keys }, (_, k) => k));
  });

  it("sweeps expired keys so the table does not grow forever", async () => {
    const dataDir = scratch();
    const clock = new Clock();
    const store = SqliteStore.open(dataDir, { now: clock.now });
    for (let i = 0; i < 150; i++) await store.claim(`old:${i}`, 1);
    clock.advance(2);
    for (let i = 0; i < 100; i++) await store.claim(`new:${i}`, 600);
    await store.close();
    const db = new DatabaseSync(join(dataDir, DB_FILE), { readOnly: true });
    const { n } = db.prepare("SELECT COUNT(*) AS n FROM idempotency").get() as { n: number };
    db.close();
    expect(n).toBeLessThan(250);
  });
});

describe("SqliteStore with a bad data dir", () => {
  it("refuses a data dir that is a file", () => {
    const file = join(scratch(), "not-a-dir");
    writeFileSync(file, "x");
    expect(() => SqliteStore.open(file)).toThrow(StoreError);
    expect(() => SqliteStore.open(file)).toThrow(/cannot create the data folder .*not-a-dir \(EEXIST\); set HCP_DATA_DIR to a writable folder|is not a folder/);
  });

  it("refuses a data dir below a file", () => {
    const file = join(scratch(), "file");
    writeFileSync(file, "x");
    expect(() => SqliteStore.open(join(file, "data"))).toThrow(/cannot create the data folder .*file\/data \(ENOTDIR\); set HCP_DATA_DIR/);
  });

  it.skipIf(process.getuid?.() === 0)("refuses a data dir it cannot write", async () => {
    const { chmodSync } = await import("node:fs");
    const dir = join(scratch(), "ro");
    mkdirSync(dir, { mode: 0o500 });
    chmodSync(dir, 0o500);
    expect(() => SqliteStore.open(dir)).toThrow(/is not writable \(EACCES\)/);
  });

  it("says what to do when hcp-bot.sqlite is not a database", () => {
    const dir = scratch();
    writeFileSync(join(dir, DB_FILE), "this is not a database, it is a text file that got in the way\n".repeat(100));
    expect(() => SqliteStore.open(dir)).toThrow(StoreError);
    expect(() => SqliteStore.open(dir)).toThrow(/hcp-bot.sqlite cannot be used as the SQLite store: file is not a database. If the file is damaged, move it aside/);
  });

  it("says so when a SQLite file's pages are damaged", async () => {
    const dir = scratch();
    const store = SqliteStore.open(dir);
    await store.createSmokeRequest(request());
    await store.close();
    // Overwrite the header magic: what a truncated copy or a bad disk leaves behind.
    const { openSync, writeSync, closeSync } = await import("node:fs");
    const fd = openSync(join(dir, DB_FILE), "r+");
    writeSync(fd, Buffer.alloc(100, 0xff), 0, 100, 0);
    closeSync(fd);
    expect(() => SqliteStore.open(dir)).toThrow(/cannot be used as the SQLite store/);
  });

  it("applies migrations once: reopening keeps one row per version", async () => {
    const dir = scratch();
    await SqliteStore.open(dir).close();
    await SqliteStore.open(dir).close();
    const db = new DatabaseSync(join(dir, DB_FILE), { readOnly: true });
    expect(db.prepare("SELECT COUNT(*) AS n FROM schema_migrations").get()).toEqual({ n: 6 });
    db.close();
  });

  it("refuses a database written by a newer hcp-bot", async () => {
    const dir = scratch();
    await SqliteStore.open(dir).close();
    const db = new DatabaseSync(join(dir, DB_FILE));
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)").run();
    db.close();
    expect(() => SqliteStore.open(dir)).toThrow(/schema v99, newer than this hcp-bot knows \(v7\)/);
  });

  it("does not hand out a hand-edited invalid row", async () => {
    const dir = scratch();
    const store = SqliteStore.open(dir);
    const r = await store.createSmokeRequest(request());
    const db = new DatabaseSync(join(dir, DB_FILE));
    db.prepare("UPDATE smoke_requests SET status = 'exploded' WHERE id = ?").run(r.id);
    db.close();
    await expect(store.getSmokeRequest(r.id)).rejects.toThrow(/smoke request .* in the database is invalid/);
    await store.close();
  });
});

describe("openStore", () => {
  it("opens SQLite or memory from settings", async () => {
    const sqlite = await openStore({ kind: "sqlite", dataDir: scratch() });
    expect((await sqlite.status()).kind).toBe("sqlite");
    await sqlite.close();
    const memory = await openStore({ kind: "memory" });
    expect(await memory.status()).toMatchObject({ kind: "memory", ok: true, detail: expect.stringMatching(/lost on restart/) });
    await memory.close();
  });
});

interface Worker {
  ready: Promise<void>;
  done: Promise<number[]>;
}

/** Runs test/store/claim-worker.ts in its own Node process (through tsx). */
function startWorker(dataDir: string, goFile: string, keys: number): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "claim-worker.ts"), dataDir, goFile, String(keys)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes("ready\n")) markReady();
  });
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<number[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`claim worker exited with ${code}: ${err}`));
      const last = out.trim().split("\n").at(-1) ?? "[]";
      resolve(JSON.parse(last) as number[]);
    });
  });
  done.catch(() => markReady());
  return { ready, done };
}

describe("SqliteStore group commit", () => {
  it("settles a burst of claims made in one turn together, each exactly once, and keeps them across a reopen", async () => {
    const dir = scratch();
    const store = SqliteStore.open(dir);
    const keys = Array.from({ length: 100 }, (_, i) => `delivery:${i}`);
    const results = await Promise.all([...keys, "delivery:7"].map((k) => store.claim(k, 3600)));
    expect(results.slice(0, 100).every(Boolean)).toBe(true);
    expect(results[100]).toBe(false); // the duplicate in the same burst loses
    // A claim made just before close is committed by close itself.
    const late = store.claim("delivery:late", 3600);
    await store.close();
    expect(await late).toBe(true);
    const reopened = SqliteStore.open(dir);
    expect(await Promise.all(["delivery:0", "delivery:99", "delivery:late"].map((k) => reopened.claim(k, 3600)))).toEqual([false, false, false]);
    await reopened.close();
  });
});
