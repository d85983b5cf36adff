// One contract, every Store (test/store/contract-stores.ts), continued: quotas, the audit
// log, records that expire, smoke-run history, status and close.
import { describe, expect, it } from "vitest";
import { StoreError, utcDayStart } from "../../src/store/index.ts";
import { createVerdictParser } from "../../src/core/verdict/index.ts";
import { request } from "./helpers.ts";
import { contractSetup, IMPLEMENTATIONS } from "./contract-stores.ts";

describe.each(IMPLEMENTATIONS)("%s", (_name, make) => {
  const setup = () => contractSetup(make);

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
