// The lease fence (src/jobs/fence.ts) on a real store, and on a real Octokit against a GitHub
// on loopback: a write goes out only while the store names this run as the lease's owner,
// a fence that failed once stays failed, and reads are not held up by it.
import { createServer, type Server } from "node:http";
import { Octokit } from "@octokit/core";
import { DEFAULT_RETRY_POLICY, retryPlugin, type Clock } from "../../src/github/octokit.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fenceWrites, leaseFence, LeaseLost } from "../../src/jobs/fence.ts";
import { MemoryStore } from "../../src/store/index.ts";

const LEASE_S = 30;

async function leasedJob(store: MemoryStore, owner: string): Promise<string> {
  const job = (await store.enqueueJob({ key: "acme/mb#1", kind: "github", payload: "{}" }))!;
  expect(await store.leaseJob(job.id, owner, LEASE_S)).toMatchObject({ ok: true });
  return job.id;
}

describe("the lease fence", () => {
  it("passes while this run owns the lease; once another run took it, it throws LeaseLost, and keeps throwing", async () => {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const store = new MemoryStore({ now: () => new Date(t) });
    const id = await leasedJob(store, "run-1");
    const fence = leaseFence({ store, jobId: id, owner: "run-1", leaseSeconds: LEASE_S, now: () => t });
    await fence.fence();
    expect(fence.lost).toBeUndefined();
    t += (LEASE_S + 1) * 1000; // the run was away past its lease; another run takes the job
    expect(await store.leaseJob(id, "run-2", LEASE_S)).toMatchObject({ ok: true });
    const lost = await fence.fence().catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(LeaseLost);
    expect(fence.lost).toBe(lost);
    // run-2 hands the job back: the lease is free, but it is not run-1's term again.
    await store.failJob(id, "run-2", 0);
    await expect(fence.fence()).rejects.toBe(lost);
  });

  it("counts a store that cannot answer, or answers a write's fence after half the lease, as lost", async () => {
    const closing = new MemoryStore();
    const id = await leasedJob(closing, "run-1");
    const unreachable = leaseFence({ store: closing, jobId: id, owner: "run-1", leaseSeconds: LEASE_S });
    await closing.close();
    await expect(unreachable.fence()).rejects.toThrow(/could not be renewed/);
    expect(unreachable.lost).toBeInstanceOf(LeaseLost);

    // The renewal itself succeeds, but its answer comes 16 s after it was asked for (of a 30 s
    // lease): the heartbeat takes it, a write's fence does not.
    let t = 0;
    const store = new MemoryStore();
    const late = leaseFence({ store: { renewJob: async (...args) => ((t += 16_000), store.renewJob(...args)) }, jobId: await leasedJob(store, "run-1"), owner: "run-1", leaseSeconds: LEASE_S, now: () => t });
    await late.renew();
    expect(late.lost).toBeUndefined();
    await expect(late.fence()).rejects.toThrow(/too late to leave room for a write/);
  });
});

describe("fenceWrites on the bot's Octokit (its retry policy included)", () => {
  let github: Server;
  const seen: string[] = [];
  let baseUrl = "";
  /** Paths GitHub answers once with 429 and a retry-after. */
  const limitedOnce = new Set<string>();
  beforeAll(async () => {
    github = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (limitedOnce.delete(req.url!)) return void res.writeHead(429, { "content-type": "application/json", "retry-after": "5" }).end('{"message":"API rate limit exceeded"}');
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => github.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(github.address() as { port: number }).port}`;
  });
  afterAll(() => github.close());

  /** The retry policy's waits pass on the test's clock (and the lease with them), without sleeping. */
  const botOctokit = (clock: Clock) => new (Octokit.plugin(retryPlugin(DEFAULT_RETRY_POLICY, clock) as never))({ baseUrl }) as Octokit;

  it("sends reads without the fence and a write only while the lease holds", async () => {
    seen.length = 0;
    let t = 0;
    const store = new MemoryStore({ now: () => new Date(t) });
    const id = await leasedJob(store, "run-1");
    const octokit = botOctokit({ now: () => t, sleep: async () => {} });
    fenceWrites(octokit, leaseFence({ store, jobId: id, owner: "run-1", leaseSeconds: LEASE_S, now: () => t }));
    await octokit.request("POST /repos/{owner}/{repo}/check-runs", { owner: "acme", repo: "mb", name: "HCP review", head_sha: "a".repeat(40) });
    t += (LEASE_S + 1) * 1000;
    expect(await store.leaseJob(id, "run-2", LEASE_S)).toMatchObject({ ok: true });
    await octokit.request("GET /repos/{owner}/{repo}", { owner: "acme", repo: "mb" });
    await expect(octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { owner: "acme", repo: "mb", issue_number: 1, body: "summary" })).rejects.toBeInstanceOf(LeaseLost);
    expect(seen).toEqual(["POST /repos/acme/mb/check-runs", "GET /repos/acme/mb"]);
  });

  it("fences each attempt: a write GitHub told to wait is not sent again once the lease passed during the wait", async () => {
    seen.length = 0;
    let t = 0;
    const store = new MemoryStore({ now: () => new Date(t) });
    const id = await leasedJob(store, "run-1");
    // While the retry policy waits out the 429, the lease passes and another run takes the job.
    const clock: Clock = {
      now: () => t,
      sleep: async (ms) => {
        t += ms + (LEASE_S + 1) * 1000;
        expect(await store.leaseJob(id, "run-2", LEASE_S)).toMatchObject({ ok: true });
      },
    };
    const octokit = botOctokit(clock);
    fenceWrites(octokit, leaseFence({ store, jobId: id, owner: "run-1", leaseSeconds: LEASE_S, now: () => t }));
    limitedOnce.add("/repos/acme/mb/check-runs");
    await expect(octokit.request("POST /repos/{owner}/{repo}/check-runs", { owner: "acme", repo: "mb", name: "HCP review", head_sha: "a".repeat(40) })).rejects.toBeInstanceOf(LeaseLost);
    expect(seen).toEqual(["POST /repos/acme/mb/check-runs"]); // the 429'd attempt only
  });
});
