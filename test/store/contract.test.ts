// One contract, every Store: the same tests run against MemoryStore, SqliteStore, KvStore and
// RedisStore (a real redis-server; the Durable Object runs the SQLite store's SQL).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openKv } from "@deno/kv";
import { MemoryStore, SqliteStore, StoreError, utcDayStart, type Store, type StoreOptions } from "../../src/store/index.ts";
import { KvStore, type Kv } from "../../src/store/kv.ts";
import { RedisStore } from "../../src/store/redis/store.ts";
import { startRedis } from "../support/redis.ts";
import { createVerdictParser } from "../../src/core/verdict/index.ts";
import { Clock, request } from "./helpers.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const IMPLEMENTATIONS: [string, (options: StoreOptions) => Store][] = [
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

describe.each(IMPLEMENTATIONS)("%s", (_name, make) => {
  function setup() {
    const clock = new Clock();
    let n = 0;
    const store = make({ now: clock.now, newId: () => `req-${++n}` });
    return { clock, store };
  }

  describe("run binding", () => {
    it("sets a request's run id once: another run cannot take it over", async () => {
      const { store } = setup();
      const r = await store.createSmokeRequest(request());
      expect((await store.updateSmokeRequest(r.id, { runId: 11 })).ok).toBe(true);
      expect((await store.updateSmokeRequest(r.id, { runId: 11, runUrl: "https://x.invalid/11" })).ok).toBe(true);
      const other = await store.updateSmokeRequest(r.id, { runId: 12 });
      expect(other).toMatchObject({ ok: false, reason: "run-bound" });
      expect((await store.findByRunId(12))).toBeUndefined();
      expect((await store.getSmokeRequest(r.id))?.runId).toBe(11);
      await store.close();
    });
  });

  describe("claim (idempotency)", () => {
    it("is true once, then false while the claim lives", async () => {
      const { store } = setup();
      expect(await store.claim("gh:delivery:1", 3600)).toBe(true);
      expect(await store.claim("gh:delivery:1", 3600)).toBe(false);
      expect(await store.claim("gh:delivery:2", 3600)).toBe(true);
      await store.close();
    });

    it("can be claimed again once released", async () => {
      const { store } = setup();
      expect(await store.claim("comment:7", 3600)).toBe(true);
      await store.release("comment:7");
      expect(await store.claim("comment:7", 3600)).toBe(true);
      expect(await store.claim("comment:7", 3600)).toBe(false);
      await store.release("never-claimed");
      await store.close();
    });

    it("can be claimed again once the TTL has passed", async () => {
      const { store, clock } = setup();
      expect(await store.claim("slack:retry:x", 60)).toBe(true);
      clock.advance(59);
      expect(await store.claim("slack:retry:x", 60)).toBe(false);
      clock.advance(1);
      expect(await store.claim("slack:retry:x", 60)).toBe(true);
      expect(await store.claim("slack:retry:x", 60)).toBe(false);
      await store.close();
    });

    it("a failed re-claim does not extend the first claim", async () => {
      const { store, clock } = setup();
      await store.claim("k", 10);
      clock.advance(9);
      expect(await store.claim("k", 1000)).toBe(false);
      clock.advance(1);
      expect(await store.claim("k", 10)).toBe(true);
      await store.close();
    });

    it("lets exactly one of many concurrent claims of one key win", async () => {
      const { store } = setup();
      const results = await Promise.all(Array.from({ length: 50 }, () => store.claim("comment:42", 600)));
      expect(results.filter(Boolean)).toHaveLength(1);
      await store.close();
    });

    it("refuses bad keys and TTLs with a StoreError", async () => {
      const { store } = setup();
      await expect(store.claim("", 10)).rejects.toThrow(StoreError);
      await expect(store.claim("x".repeat(513), 10)).rejects.toThrow(/1 to 512 characters/);
      await expect(store.claim("k", 0)).rejects.toThrow(/positive/);
      await expect(store.claim("k", Number.NaN)).rejects.toThrow(/positive/);
      await store.close();
    });
  });

  describe("claim owners", () => {
    it("grants a claim again to its owner (a job run again), never to another owner or to no owner", async () => {
      const { store } = setup();
      expect(await store.claim("comment:9", 600, "job-a")).toBe(true);
      expect(await store.claim("comment:9", 600, "job-a")).toBe(true);
      expect(await store.claim("comment:9", 600, "job-b")).toBe(false);
      expect(await store.claim("comment:9", 600)).toBe(false);
      expect(await store.claim("plain", 600)).toBe(true);
      expect(await store.claim("plain", 600, "job-a")).toBe(false);
      await store.close();
    });
  });

  describe("durable jobs", () => {
    const job = (key = "acme/mb#1", payload = '{"n":1}') => ({ key, kind: "github", payload });

    it("writes a job with its claim at once; a second job with the same claim is not written", async () => {
      const { store, clock } = setup();
      const first = await store.enqueueJob(job(), { key: "webhook:d-1", ttlSeconds: 3600 });
      expect(first).toMatchObject({ key: "acme/mb#1", kind: "github", payload: '{"n":1}', claim: "webhook:d-1", attempts: 0, leaseOwner: null, leaseUntil: null, createdAt: clock.now() });
      expect(await store.enqueueJob(job(), { key: "webhook:d-1", ttlSeconds: 3600 })).toBeUndefined();
      expect(await store.claim("webhook:d-1", 3600)).toBe(false); // the claim was written with the job
      clock.advance(120);
      expect((await store.listStaleJobs(60)).map((j) => j.id)).toEqual([first!.id]);
      await store.close();
    });

    it("lets one of many concurrent enqueues with one claim win", async () => {
      const { store } = setup();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.enqueueJob(job("k", String(i)), { key: "webhook:same", ttlSeconds: 60 })));
      expect(results.filter(Boolean)).toHaveLength(1);
      await store.close();
    });

    it("runs jobs of one key one at a time, oldest first; other keys are not held up", async () => {
      const { store } = setup();
      const a = (await store.enqueueJob(job("pr#1")))!;
      const b = (await store.enqueueJob(job("pr#1")))!;
      const c = (await store.enqueueJob(job("pr#2")))!;
      expect(await store.leaseJob(b.id, "w1", 60)).toEqual({ ok: false, reason: "behind", waitingFor: a.id });
      expect(await store.leaseJob(c.id, "w1", 60)).toMatchObject({ ok: true, job: { id: c.id, leaseOwner: "w1", attempts: 1 } });
      expect(await store.leaseJob(a.id, "w2", 60)).toMatchObject({ ok: true, job: { id: a.id, leaseOwner: "w2" } });
      expect(await store.leaseJob(a.id, "w3", 60)).toMatchObject({ ok: false, reason: "busy" });
      expect(await store.completeJob(a.id, "w2")).toBe(true);
      expect(await store.leaseJob(a.id, "w2", 60)).toEqual({ ok: false, reason: "gone" });
      expect(await store.leaseJob(b.id, "w3", 60)).toMatchObject({ ok: true, job: { id: b.id } });
      await store.close();
    });

    it("lets only one of many concurrent leases of a job win", async () => {
      const { store } = setup();
      const a = (await store.enqueueJob(job()))!;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.leaseJob(a.id, `w${i}`, 60)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      await store.close();
    });

    it("renews a lease for its owner without counting an attempt; an expired lease goes to the next owner", async () => {
      const { store, clock } = setup();
      const a = (await store.enqueueJob(job()))!;
      await store.leaseJob(a.id, "w1", 30);
      clock.advance(20);
      expect(await store.leaseJob(a.id, "w1", 30)).toMatchObject({ ok: true, job: { attempts: 1, leaseUntil: new Date(clock.t + 30_000) } });
      expect(await store.listStaleJobs(3600)).toEqual([]);
      clock.advance(31); // the owner died: nobody renews
      expect((await store.listStaleJobs(3600)).map((j) => j.id)).toEqual([a.id]);
      expect(await store.leaseJob(a.id, "w2", 30)).toMatchObject({ ok: true, job: { leaseOwner: "w2", attempts: 2 } });
      expect(await store.completeJob(a.id, "w1")).toBe(false); // the old owner lost it
      expect(await store.completeJob(a.id, "w2")).toBe(true);
      await store.close();
    });

    it("keeps a failed job for a retry after its delay, and gives one up with its claim released", async () => {
      const { store, clock } = setup();
      const a = (await store.enqueueJob(job(), { key: "webhook:d-2", ttlSeconds: 3600 }))!;
      await store.leaseJob(a.id, "w1", 60);
      await store.failJob(a.id, "w1", 10);
      expect(await store.leaseJob(a.id, "w2", 60)).toMatchObject({ ok: false, reason: "delayed" });
      expect(await store.listStaleJobs(3600)).toEqual([]);
      clock.advance(10);
      expect((await store.listStaleJobs(3600)).map((j) => j.id)).toEqual([a.id]);
      expect(await store.leaseJob(a.id, "w2", 60)).toMatchObject({ ok: true, job: { attempts: 2 } });
      await store.failJob(a.id, "w1"); // not its owner any more: nothing happens
      expect(await store.claim("webhook:d-2", 3600)).toBe(false);
      await store.failJob(a.id, "w2");
      expect(await store.leaseJob(a.id, "w2", 60)).toEqual({ ok: false, reason: "gone" });
      expect(await store.claim("webhook:d-2", 3600)).toBe(true); // a redelivery may run it now
      await store.close();
    });

    it("refuses a bad job, owner or lease with a StoreError", async () => {
      const { store } = setup();
      await expect(store.enqueueJob({ key: "", kind: "github", payload: "{}" })).rejects.toThrow(/invalid job: key/);
      await expect(store.enqueueJob({ key: "k", kind: "Bad Kind", payload: "{}" })).rejects.toThrow(/invalid job: kind/);
      const a = (await store.enqueueJob(job()))!;
      await expect(store.leaseJob(a.id, "", 60)).rejects.toThrow(/lease owner/);
      await expect(store.leaseJob(a.id, "w", 0)).rejects.toThrow(/positive number of seconds/);
      await store.close();
    });

    it("keeps a large payload intact", async () => {
      const { store } = setup();
      const payload = JSON.stringify({ body: "é🙂x".repeat(100_000) });
      const a = (await store.enqueueJob(job("big", payload)))!;
      const leased = await store.leaseJob(a.id, "w", 60);
      expect(leased.ok && leased.job.payload).toBe(payload);
      await store.close();
    });
    it("keeps a delivery of several MB intact (a Durable Object's SQLite refuses one value over 2 MB): leased, listed stale, completed", async () => {
      const { store, clock } = setup();
      // An odd prefix puts surrogate pairs across every half-MiB boundary; 3 bytes a unit in UTF-8 for the rest.
      const payload = JSON.stringify({ body: `${"x".repeat(524_286)}${"🙂".repeat(10)}${"€".repeat(1_500_000)}` });
      const a = (await store.enqueueJob(job("huge", payload)))!;
      const leased = await store.leaseJob(a.id, "w", 60);
      expect(leased.ok && leased.job.payload === payload).toBe(true);
      clock.advance(61_000);
      const stale = await store.listStaleJobs(3600);
      expect(stale.find((j) => j.id === a.id)?.payload === payload).toBe(true);
      const again = await store.leaseJob(a.id, "w2", 60);
      expect(again.ok && again.job.payload === payload).toBe(true);
      expect(await store.completeJob(a.id, "w2")).toBe(true);
      expect(await store.leaseJob(a.id, "w3", 60)).toMatchObject({ ok: false, reason: "gone" });
      await store.close();
    });
  });

  describe("smoke requests", () => {
    it("creates a request with defaults and reads it back", async () => {
      const { store, clock } = setup();
      const created = await store.createSmokeRequest(request({ slackUser: "T1:U1", slackChannel: "C1" }));
      expect(created).toMatchObject({
        id: "req-1",
        status: "requested",
        runId: null,
        checkRunId: null,
        verdictStatus: null,
        slackUser: "T1:U1",
        slackChannel: "C1",
        slackTs: null,
        reason: null,
        createdAt: clock.now(),
        updatedAt: clock.now(),
        dispatchedAt: null,
        finishedAt: null,
      });
      expect(await store.getSmokeRequest("req-1")).toEqual(created);
      expect(await store.getSmokeRequest("nope")).toBeUndefined();
      await store.close();
    });

    it("stores a refused request as finished", async () => {
      const { store, clock } = setup();
      const r = await store.createSmokeRequest(request({ status: "refused", reason: "quota: 10 runs today" }));
      expect(r).toMatchObject({ status: "refused", reason: "quota: 10 runs today", finishedAt: clock.now() });
      await store.close();
    });

    it("refuses an invalid record with a StoreError naming the field", async () => {
      const { store } = setup();
      await expect(store.createSmokeRequest(request({ sha: "main" }))).rejects.toThrow(/invalid smoke request: sha: a 40-character commit SHA/);
      await expect(store.createSmokeRequest(request({ repo: "no-slash" }))).rejects.toThrow(/repo/);
      await store.close();
    });

    it("walks the lifecycle with timestamps that follow the status", async () => {
      const { store, clock } = setup();
      const { id } = await store.createSmokeRequest(request());
      clock.advance(5);
      const dispatched = await store.updateSmokeRequest(id, { status: "dispatched", runId: 777, checkRunId: 55, slackTs: "1700000000.000100" });
      expect(dispatched).toMatchObject({ ok: true, request: { status: "dispatched", runId: 777, checkRunId: 55, dispatchedAt: clock.now(), slackTs: "1700000000.000100" } });
      clock.advance(5);
      await store.updateSmokeRequest(id, { status: "queued" });
      clock.advance(60);
      const started = new Date(clock.t - 1000);
      expect(await store.updateSmokeRequest(id, { status: "running", startedAt: started })).toMatchObject({ ok: true, request: { startedAt: started } });
      clock.advance(300);
      const done = await store.updateSmokeRequest(id, { status: "completed", verdictStatus: "PASS", verdictSummary: "2 iterations, HCP groups seen" });
      expect(done).toMatchObject({ ok: true, request: { status: "completed", verdictStatus: "PASS", finishedAt: clock.now(), updatedAt: clock.now() } });
      expect(await store.findByRunId(777)).toMatchObject({ id, status: "completed", verdictSummary: "2 iterations, HCP groups seen" });
      // Non-status fields may still change after the end (a Slack message posted late).
      expect(await store.updateSmokeRequest(id, { slackChannel: "C9" })).toMatchObject({ ok: true, request: { slackChannel: "C9", status: "completed" } });
      await store.close();
    });

    it("allows forward jumps (queued -> completed) and refuses going back or leaving a terminal status", async () => {
      const { store } = setup();
      const { id } = await store.createSmokeRequest(request());
      await store.updateSmokeRequest(id, { status: "dispatched" });
      await store.updateSmokeRequest(id, { status: "running" });
      const back = await store.updateSmokeRequest(id, { status: "queued" });
      expect(back).toMatchObject({ ok: false, reason: "bad-transition", detail: "a smoke request cannot go from running to queued", request: { status: "running" } });
      expect(await store.updateSmokeRequest(id, { status: "running" })).toMatchObject({ ok: true });
      await store.updateSmokeRequest(id, { status: "failed", reason: "runner lost" });
      expect(await store.updateSmokeRequest(id, { status: "completed" })).toMatchObject({ ok: false, reason: "bad-transition" });
      expect(await store.getSmokeRequest(id)).toMatchObject({ status: "failed", reason: "runner lost" });

      const other = await store.createSmokeRequest(request());
      expect(await store.updateSmokeRequest(other.id, { status: "running" })).toMatchObject({ ok: false, reason: "bad-transition" });
      expect(await store.updateSmokeRequest(other.id, { status: "dispatched" })).toMatchObject({ ok: true });
      expect(await store.updateSmokeRequest(other.id, { status: "completed" })).toMatchObject({ ok: true });
      await store.close();
    });

    it("reports a missing request and rejects unknown patch fields", async () => {
      const { store } = setup();
      expect(await store.updateSmokeRequest("missing", { status: "queued" })).toEqual({ ok: false, reason: "not-found", detail: "no smoke request missing" });
      const { id } = await store.createSmokeRequest(request());
      await expect(store.updateSmokeRequest(id, { repo: "x/y" } as never)).rejects.toThrow(StoreError);
      await store.close();
    });

    it("hands out copies: mutating a returned record changes nothing stored", async () => {
      const { store } = setup();
      const r = await store.createSmokeRequest(request());
      r.overrides.push("evil=1");
      r.status = "completed";
      expect(await store.getSmokeRequest(r.id)).toMatchObject({ status: "requested", overrides: request().overrides });
      await store.close();
    });

    it("finds active requests per PR and counts the global queue", async () => {
      const { store } = setup();
      const a = await store.createSmokeRequest(request());
      const b = await store.createSmokeRequest(request());
      const c = await store.createSmokeRequest(request({ pr: 99 }));
      const d = await store.createSmokeRequest(request({ repo: "other/repo" }));
      await store.createSmokeRequest(request());
      await store.updateSmokeRequest(a.id, { status: "dispatched" });
      await store.updateSmokeRequest(b.id, { status: "dispatched" });
      await store.updateSmokeRequest(b.id, { status: "running" });
      await store.updateSmokeRequest(c.id, { status: "dispatched" });
      await store.updateSmokeRequest(d.id, { status: "dispatched" });
      await store.updateSmokeRequest(d.id, { status: "cancelled" });
      expect((await store.activeForPr("NVIDIA-NeMo/Megatron-Bridge", 1234)).map((r) => r.id)).toEqual([a.id, b.id]);
      expect(await store.activeForPr("NVIDIA-NeMo/Megatron-Bridge", 5)).toEqual([]);
      expect(await store.countActive()).toBe(3);
      expect(await store.countActive("NVIDIA-NeMo/Megatron-Bridge")).toBe(3);
      expect(await store.countActive("other/repo")).toBe(0);
      await store.close();
    });

    it("lists requests still queued after the queue timeout", async () => {
      const { store, clock } = setup();
      const old = await store.createSmokeRequest(request());
      await store.updateSmokeRequest(old.id, { status: "dispatched" });
      clock.advance(10 * 60);
      const queued = await store.createSmokeRequest(request());
      await store.updateSmokeRequest(queued.id, { status: "dispatched" });
      await store.updateSmokeRequest(queued.id, { status: "queued" });
      const running = await store.createSmokeRequest(request());
      await store.updateSmokeRequest(running.id, { status: "dispatched" });
      await store.updateSmokeRequest(running.id, { status: "running" });
      await store.createSmokeRequest(request()); // requested, never dispatched
      clock.advance(25 * 60);
      const cutoff = new Date(clock.t - 30 * 60 * 1000);
      expect((await store.listQueuedOlderThan(cutoff)).map((r) => r.id)).toEqual([old.id]);
      expect((await store.listQueuedOlderThan(clock.now())).map((r) => r.id)).toEqual([old.id, queued.id]);
      await store.close();
    });

    it("finds the newest request for a run id", async () => {
      const { store } = setup();
      expect(await store.findByRunId(1)).toBeUndefined();
      const a = await store.createSmokeRequest(request());
      await store.updateSmokeRequest(a.id, { status: "dispatched", runId: 5 });
      expect((await store.findByRunId(5))?.id).toBe(a.id);
      await store.close();
    });
  });

  describe("quotas", () => {
    it("counts a user's requests since a time, without refusals or other users", async () => {
      const { store, clock } = setup();
      await store.createSmokeRequest(request());
      await store.createSmokeRequest(request({ status: "refused", reason: "quota" }));
      await store.createSmokeRequest(request({ githubLogin: "bob" }));
      clock.advance(60);
      await store.createSmokeRequest(request());
      expect(await store.countUserRequestsSince("alice", new Date(0))).toBe(2);
      expect(await store.countUserRequestsSince("alice", new Date(clock.t - 30_000))).toBe(1);
      expect(await store.countUserRequestsSince("bob", new Date(0))).toBe(1);
      expect(await store.countUserRequestsSince("carol", new Date(0))).toBe(0);
      await store.close();
    });

    it("counts GPU runs: an A/B request (compare p2p or a2a) runs two legs, in the quota and in the active caps", async () => {
      const { store } = setup();
      const ab = await store.createSmokeRequest(request({ compare: "p2p" }));
      const plain = await store.createSmokeRequest(request());
      const a2a = await store.createSmokeRequest(request({ compare: "a2a", githubLogin: "bob" }));
      expect(ab.compare).toBe("p2p");
      expect(plain.compare).toBe("none");
      expect(await store.countUserRequestsSince("alice", new Date(0))).toBe(3);
      expect(await store.countUserRequestsSince("bob", new Date(0))).toBe(2);
      for (const r of [ab, plain, a2a]) await store.updateSmokeRequest(r.id, { status: "dispatched" });
      expect(await store.countActive()).toBe(5);
      expect(await store.countActive("NVIDIA-NeMo/Megatron-Bridge")).toBe(5);
      await store.updateSmokeRequest(ab.id, { status: "completed" });
      expect(await store.countActive()).toBe(3);
      await store.close();
    });

    it("counts a user's runs on one installation when asked (a login may use the bot from two organizations)", async () => {
      const { store } = setup();
      await store.createSmokeRequest(request({ installationId: 10 }));
      await store.createSmokeRequest(request({ installationId: 10, compare: "a2a" }));
      await store.createSmokeRequest(request({ installationId: 20 }));
      await store.createSmokeRequest(request({ installationId: 10, status: "refused", reason: "quota" }));
      await store.createSmokeRequest(request()); // no installation recorded
      expect(await store.countUserRequestsSince("alice", new Date(0), 10)).toBe(3);
      expect(await store.countUserRequestsSince("alice", new Date(0), 20)).toBe(1);
      expect(await store.countUserRequestsSince("alice", new Date(0), 30)).toBe(0);
      expect(await store.countUserRequestsSince("alice", new Date(0))).toBe(5);
      await store.close();
    });

    it("keeps a request's comparison", async () => {
      const { store } = setup();
      const r = await store.createSmokeRequest(request({ compare: "p2p" }));
      expect(r.comparison).toBeNull();
      const comparison = { mode: "p2p" as const, status: "missing" as const, why: "the p2p reference leg failed", hcp: null, reference: null, speedup: null, bound: null, losses: [], flags: [], summary: "No p2p comparison: the p2p reference leg failed" };
      await store.updateSmokeRequest(r.id, { status: "dispatched" });
      await store.updateSmokeRequest(r.id, { status: "completed", comparison });
      expect((await store.getSmokeRequest(r.id))?.comparison).toEqual(comparison);
      await store.close();
    });

    it("resets at the UTC day boundary (and a rolling window still sees yesterday)", async () => {
      const { store, clock } = setup();
      clock.set("2026-03-01T23:50:00Z");
      await store.createSmokeRequest(request());
      await store.createSmokeRequest(request());
      clock.set("2026-03-01T23:59:59.999Z");
      await store.createSmokeRequest(request());
      expect(await store.countUserRequestsSince("alice", utcDayStart(clock.now()))).toBe(3);
      clock.set("2026-03-02T00:00:00Z");
      expect(await store.countUserRequestsSince("alice", utcDayStart(clock.now()))).toBe(0);
      clock.set("2026-03-02T00:10:00Z");
      await store.createSmokeRequest(request());
      expect(await store.countUserRequestsSince("alice", utcDayStart(clock.now()))).toBe(1);
      expect(await store.countUserRequestsSince("alice", new Date(clock.t - 24 * 3600 * 1000))).toBe(4);
      await store.close();
    });
  });

  describe("audit log", () => {
    it("records who asked, what, and the decision, newest first", async () => {
      const { store, clock } = setup();
      const first = await store.audit({
        action: "smoke",
        decision: "denied",
        reason: "permission read < write",
        githubLogin: "mallory",
        repo: "NVIDIA-NeMo/Megatron-Bridge",
        pr: 1234,
        sha: "b".repeat(40),
        deliveryId: "d-9",
      });
      expect(first).toMatchObject({ id: expect.any(Number), at: clock.now(), slackUser: null, runId: null, verdict: null, recipe: null });
      clock.advance(1);
      await store.audit({ action: "smoke", decision: "allowed", githubLogin: "alice", slackUser: "T1:U7", repo: "NVIDIA-NeMo/Megatron-Bridge", pr: 1234, recipe: "llama32_1b_pretrain_config", requestId: "req-1", runId: 777 });
      clock.advance(1);
      await store.audit({ action: "verdict", decision: "allowed", repo: "other/repo", runId: 778, verdict: "FAIL", at: new Date("2026-01-01T00:00:00Z") });
      const log = await store.auditLog();
      expect(log.map((r) => r.action)).toEqual(["verdict", "smoke", "smoke"]);
      expect(log[0]!.at).toEqual(new Date("2026-01-01T00:00:00Z"));
      expect(log[1]).toMatchObject({ githubLogin: "alice", slackUser: "T1:U7", decision: "allowed", runId: 777, requestId: "req-1" });
      expect(log[2]).toEqual(first);
      expect(await store.auditLog({ limit: 1 })).toHaveLength(1);
      expect((await store.auditLog({ repo: "other/repo" })).map((r) => r.verdict)).toEqual(["FAIL"]);
      await expect(store.auditLog({ limit: 0 })).rejects.toThrow(/positive integer/);
      await expect(store.audit({ action: "", decision: "allowed" })).rejects.toThrow(/invalid audit record: action/);
      await store.close();
    });
  });

  describe("records that expire (refusals of people without permission)", () => {
    it("hides a refused request and its audit record once their expiry passes, and keeps the rest", async () => {
      const { store, clock } = setup();
      const week = new Date(clock.now().getTime() + 7 * 24 * 3600 * 1000);
      const kept = await store.createSmokeRequest(request({ githubLogin: "alice" }));
      const refused = await store.createSmokeRequest(request({ repo: "mallory/spam", githubLogin: "mallory", status: "refused", reason: "no access", expiresAt: week }));
      expect(refused.expiresAt).toEqual(week);
      await store.audit({ action: "smoke", decision: "allowed", repo: kept.repo, requestId: kept.id });
      await store.audit({ action: "smoke", decision: "denied", repo: refused.repo, requestId: refused.id, githubLogin: "mallory", expiresAt: week });
      // A later update of the refused record (none is expected) keeps its expiry.
      await store.updateSmokeRequest(refused.id, { commentId: 5 });
      clock.advance(7 * 24 * 3600 - 1);
      expect((await store.getSmokeRequest(refused.id))?.expiresAt).toEqual(week);
      expect(await store.listSmokeRepos()).toEqual(["NVIDIA-NeMo/Megatron-Bridge", "mallory/spam"]);
      expect((await store.auditLog({ requestId: refused.id })).map((a) => a.decision)).toEqual(["denied"]);
      clock.advance(1);
      expect(await store.getSmokeRequest(refused.id)).toBeUndefined();
      expect(await store.listSmokeRequests({ repos: ["mallory/spam", kept.repo], limit: 10 })).toEqual([kept]);
      expect(await store.listSmokeRepos()).toEqual(["NVIDIA-NeMo/Megatron-Bridge"]);
      expect(await store.auditLog({ requestId: refused.id })).toEqual([]);
      expect(await store.auditLog({ repo: "mallory/spam" })).toEqual([]);
      expect((await store.auditLog()).map((a) => a.requestId)).toEqual([kept.id]);
      // The next write deletes them for good; what is kept stays.
      await store.audit({ action: "help", decision: "allowed" });
      expect((await store.auditLog()).map((a) => a.action)).toEqual(["help", "smoke"]);
      expect(await store.getSmokeRequest(kept.id)).toEqual(kept);
      await store.close();
    });
  });

  describe("smoke-run history", () => {
    it("lists newest first, only in the repositories given, filtered by status and requester, a page at a time", async () => {
      const { clock, store } = setup();
      const made = [];
      for (let i = 0; i < 7; i++) {
        made.push(await store.createSmokeRequest(request({ repo: i % 3 === 2 ? "acme/private" : "acme/public", githubLogin: i % 2 ? "bob" : "alice", pr: 100 + i })));
        if (i !== 3) clock.advance(60); // two requests share a timestamp: the id breaks the tie
      }
      await store.updateSmokeRequest(made[0]!.id, { status: "dispatched" });
      expect(await store.listSmokeRepos()).toEqual(["acme/private", "acme/public"]);
      expect(await store.listSmokeRequests({ repos: [], limit: 10 })).toEqual([]);
      const visible = await store.listSmokeRequests({ repos: ["acme/public"], limit: 10 });
      expect(visible.map((r) => r.pr)).toEqual([106, 104, 103, 101, 100]);
      expect(visible.every((r) => r.repo === "acme/public")).toBe(true);
      expect((await store.listSmokeRequests({ repos: ["acme/public", "acme/private"], githubLogin: "bob", limit: 10 })).map((r) => r.pr)).toEqual([105, 103, 101]);
      expect((await store.listSmokeRequests({ repos: ["acme/public"], status: "dispatched", limit: 10 })).map((r) => r.pr)).toEqual([100]);
      // Pages: the cursor is the last row's (createdAt, id), also across the shared timestamp.
      const all = await store.listSmokeRequests({ repos: ["acme/public", "acme/private"], limit: 200 });
      const paged = [];
      let before: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page = await store.listSmokeRequests({ repos: ["acme/public", "acme/private"], limit: 2, ...(before ? { before } : {}) });
        paged.push(...page);
        if (page.length < 2) break;
        before = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
      }
      expect(paged.map((r) => r.id)).toEqual(all.map((r) => r.id));
      expect(new Set(paged.map((r) => r.id)).size).toBe(7);
      await expect(store.listSmokeRequests({ repos: ["acme/public"], limit: 0 })).rejects.toThrow(StoreError);
      await store.close();
    });

    it("lists one pull request's requests (as crash recovery asks for a PR's half-made ones)", async () => {
      const { clock, store } = setup();
      const mine = [];
      for (let i = 0; i < 3; i++) {
        mine.push(await store.createSmokeRequest(request({ repo: "acme/public", pr: 7 })));
        await store.createSmokeRequest(request({ repo: "acme/public", pr: 8 }));
        await store.createSmokeRequest(request({ repo: "acme/other", pr: 7 }));
        clock.advance(60);
      }
      await store.updateSmokeRequest(mine[1]!.id, { status: "dispatched" });
      const listed = await store.listSmokeRequests({ repos: ["acme/public"], pr: 7, limit: 10 });
      expect(listed.map((r) => r.id)).toEqual([mine[2]!.id, mine[1]!.id, mine[0]!.id]);
      expect((await store.listSmokeRequests({ repos: ["acme/public"], pr: 7, status: "requested", limit: 10 })).map((r) => r.id)).toEqual([mine[2]!.id, mine[0]!.id]);
      expect(await store.listSmokeRequests({ repos: ["acme/public"], pr: 9, limit: 10 })).toEqual([]);
      expect((await store.listSmokeRequests({ repos: ["acme/public", "acme/other"], pr: 7, limit: 10 })).map((r) => `${r.repo}#${r.pr}`).sort()).toEqual([...Array(3).fill("acme/other#7"), ...Array(3).fill("acme/public#7")]);
      await store.close();
    });

    it("keeps the whole verdict of a completed request, and the audit trail by request id", async () => {
      const { store } = setup();
      const r = await store.createSmokeRequest(request());
      const other = await store.createSmokeRequest(request({ pr: 9 }));
      await store.updateSmokeRequest(r.id, { status: "dispatched", runId: 5 });
      const parser = createVerdictParser({ expectHcp: true });
      parser.push(new TextEncoder().encode(" iteration        1/       2 | lm loss: 1.034561E+01 | throughput per GPU (TFLOP/s/GPU): 123.4 |\n"));
      const verdict = parser.end(0);
      const done = await store.updateSmokeRequest(r.id, { status: "completed", verdictStatus: verdict.status, verdict });
      expect(done.ok).toBe(true);
      const back = (await store.getSmokeRequest(r.id))!;
      expect(back.verdict).toEqual(verdict);
      expect(back.verdict?.throughput.maxTflopsPerGpu).toBe(123.4);
      expect((await store.getSmokeRequest(other.id))!.verdict).toBeNull();
      await store.audit({ action: "smoke", decision: "allowed", requestId: r.id, repo: r.repo });
      await store.audit({ action: "smoke", decision: "denied", requestId: other.id, repo: r.repo });
      await store.audit({ action: "verdict", decision: "allowed", requestId: r.id, repo: r.repo, verdict: verdict.status });
      expect((await store.auditLog({ requestId: r.id })).map((a) => a.action)).toEqual(["verdict", "smoke"]);
      await store.close();
    });
  });

  describe("status and close", () => {
    it("reports ok, then not ok after close; a closed store refuses work", async () => {
      const { store } = setup();
      expect(await store.status()).toMatchObject({ ok: true, detail: expect.any(String) });
      await store.close();
      await store.close(); // twice is fine
      expect(await store.status()).toMatchObject({ ok: false });
      await expect(store.claim("k", 10)).rejects.toThrow(/the store is closed/);
      await expect(store.getSmokeRequest("x")).rejects.toThrow(/the store is closed/);
    });
  });
});
