// One contract, every Store (test/store/contract-stores.ts): run binding, idempotent claims,
// durable jobs and smoke requests. The rest of the contract is in contract-records.test.ts.
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/index.ts";
import { request } from "./helpers.ts";
import { contractSetup, IMPLEMENTATIONS } from "./contract-stores.ts";

describe.each(IMPLEMENTATIONS)("%s", (_name, make) => {
  const setup = () => contractSetup(make);

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

    it("renews a lease only for the owner that holds it (the fence's check): never after another owner took it or it was handed back", async () => {
      const { store, clock } = setup();
      const a = (await store.enqueueJob(job()))!;
      expect(await store.renewJob(a.id, "w1", 30)).toBe(false); // never leased: nobody's term
      await store.leaseJob(a.id, "w1", 30);
      clock.advance(20);
      expect(await store.renewJob(a.id, "w1", 30)).toBe(true);
      expect(await store.listStaleJobs(3600)).toEqual([]);
      clock.advance(40); // expired, and nobody took it since: still w1's term
      expect(await store.renewJob(a.id, "w1", 30)).toBe(true);
      expect(await store.leaseJob(a.id, "w2", 30)).toMatchObject({ ok: false, reason: "busy" });
      clock.advance(31);
      expect(await store.leaseJob(a.id, "w2", 30)).toMatchObject({ ok: true, job: { leaseOwner: "w2", attempts: 2 } });
      expect(await store.renewJob(a.id, "w1", 30)).toBe(false); // w2 holds it now
      await store.failJob(a.id, "w2", 0); // handed back: free to lease again
      expect(await store.renewJob(a.id, "w2", 30)).toBe(false); // a hand-back ends w2's term
      expect(await store.renewJob(a.id, "w1", 30)).toBe(false);
      // leaseJob would give w1 a new term here; renewJob never does, so w1's fence stops it.
      expect(await store.leaseJob(a.id, "w3", 30)).toMatchObject({ ok: true, job: { leaseOwner: "w3" } });
      expect(await store.completeJob(a.id, "w3")).toBe(true);
      expect(await store.renewJob(a.id, "w3", 30)).toBe(false); // done
      await expect(store.renewJob(a.id, "", 30)).rejects.toThrow(/lease owner/);
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

});
