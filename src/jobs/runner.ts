// Runs durable jobs (src/store/types.ts, JobStore) for any host: take the job's lease, keep
// it while the work runs, then complete it, or on failure keep it for a retry after a delay
// or give it up (its claim released, so GitHub's redelivery runs it). The host decides how
// a job reaches `run` (a Queue message on Workers, the same process on Deno) and how often
// `stale` is asked for jobs an evicted isolate or a killed process left behind.
import type { Log } from "../shared/log.ts";
import type { Job, JobStore } from "../store/types.ts";
import { leaseFence, LeaseLost, type JobLease } from "./fence.ts";

export { LeaseLost, type JobLease } from "./fence.ts";

export interface JobPolicy {
  /** How long a lease lasts; it is renewed every third of that while the job runs. */
  leaseSeconds: number;
  /** Runs of a failing job before it is given up. */
  attempts: number;
  /** Delay before the first retry, doubled for each further one. */
  retrySeconds: number;
  /** A job nobody leased for this long lost the message that should have started it. */
  unleasedSeconds: number;
}

export const DEFAULT_JOB_POLICY: JobPolicy = { leaseSeconds: 120, attempts: 5, retrySeconds: 10, unleasedSeconds: 60 };

/**
 * The claim a webhook delivery's job is written with, on every host: the delivery id, held for
 * a month, so no redelivery (GitHub's, or a replica's) runs its work twice.
 */
export function deliveryClaim(deliveryId: string): { key: string; ttlSeconds: number } {
  return { key: `webhook:${deliveryId}`, ttlSeconds: 30 * 24 * 3600 };
}

export type RunOutcome =
  | { kind: "done" }
  /** Nothing to run: done before, or given up. */
  | { kind: "gone" }
  /** Not its turn yet (an older job of its key runs, another owner holds it, a retry delay): try again then. */
  | { kind: "wait"; seconds: number; reason: "behind" | "busy" | "delayed" }
  | { kind: "retry"; seconds: number; error: unknown }
  | { kind: "given-up"; error: unknown };

export interface JobRunnerOptions {
  store: JobStore;
  policy: JobPolicy;
  execute: (job: Job, lease: JobLease) => Promise<void>;
  log: Log;
  /** A fresh lease owner per run, so two runs of one job in one isolate cannot share a lease. */
  newOwner?: () => string;
}

export interface JobRunner {
  run(id: string): Promise<RunOutcome>;
  /** Jobs to start again: a lease or retry delay passed, or never started. */
  stale(): Promise<Job[]>;
  /**
   * Gives up the leases of the jobs running now (a host shutting down): each is free to lease
   * at once, by another process; the run here learns it lost its lease when it ends. Resolves
   * with how many were handed back.
   */
  handBack(): Promise<number>;
}

/** What a GitHubUnavailable error says GitHub asked for (its retryAt), in seconds from now; 0 otherwise. */
function askedSeconds(error: unknown): number {
  const retryAt = (error as { retryAt?: unknown } | null)?.retryAt;
  return typeof retryAt === "number" ? Math.max(0, Math.ceil((retryAt - Date.now()) / 1000)) : 0;
}

const secondsUntil = (date: Date) => Math.max(1, Math.ceil((date.getTime() - Date.now()) / 1000));

export function createJobRunner(o: JobRunnerOptions): JobRunner {
  const newOwner = o.newOwner ?? (() => crypto.randomUUID());
  const { store, policy } = o;
  /** The runs in progress here: job id -> lease owner and heartbeat. */
  const running = new Map<string, { owner: string; heartbeat: ReturnType<typeof setInterval> }>();

  async function run(id: string): Promise<RunOutcome> {
    const owner = newOwner();
    const lease = await store.leaseJob(id, owner, policy.leaseSeconds);
    if (!lease.ok) {
      switch (lease.reason) {
        case "gone":
          return { kind: "gone" };
        case "behind":
          return { kind: "wait", seconds: Math.min(5, policy.retrySeconds), reason: "behind" };
        case "busy":
        case "delayed":
          return { kind: "wait", seconds: secondsUntil(lease.until), reason: lease.reason };
      }
    }
    const job = lease.job;
    // The heartbeat renews through the fence: a renewal that fails ends this run's writes (the
    // next one throws LeaseLost), and the job runs again under a fresh lease.
    const fence = leaseFence({ store, jobId: id, owner, leaseSeconds: policy.leaseSeconds });
    const heartbeat = setInterval(() => {
      fence.renew().catch((error: unknown) => {
        clearInterval(heartbeat);
        o.log.warn({ err: error, job: id }, "renewing a job's lease failed; the job stops before its next write");
      });
    }, (policy.leaseSeconds * 1000) / 3);
    running.set(id, { owner, heartbeat });
    try {
      await o.execute(job, fence);
      // Work that caught the fence's LeaseLost and went on is not done: it runs again.
      if (fence.lost) throw fence.lost;
    } catch (error) {
      clearInterval(heartbeat);
      if (running.get(id)?.owner !== owner) return { kind: "wait", seconds: 0, reason: "busy" }; // handed back meanwhile
      if (error instanceof LeaseLost || fence.lost) {
        running.delete(id);
        o.log.warn({ err: error, job: id, kind: job.kind, key: job.key }, "job stopped before its next write: its lease was lost");
        // Handed back (a no-op when another run holds it), so whoever holds or takes the lease finishes it.
        await store.failJob(id, owner, 0).catch(() => undefined);
        return { kind: "wait", seconds: Math.min(5, policy.retrySeconds), reason: "busy" };
      }
      running.delete(id);
      if (job.attempts >= policy.attempts) {
        o.log.error({ err: error, job: id, kind: job.kind, key: job.key, attempts: job.attempts }, "job failed for the last time; given up");
        await store.failJob(id, owner);
        return { kind: "given-up", error };
      }
      // Never sooner than GitHub asked (a rate limit's reset or retry-after, src/github/octokit.ts).
      const seconds = Math.max(policy.retrySeconds * 2 ** (job.attempts - 1), askedSeconds(error));
      o.log.warn({ err: error, job: id, kind: job.kind, key: job.key, attempts: job.attempts, retryInSeconds: seconds }, "job failed; it runs again later");
      await store.failJob(id, owner, seconds);
      return { kind: "retry", seconds, error };
    }
    clearInterval(heartbeat);
    running.delete(id);
    if (!(await store.completeJob(id, owner))) o.log.warn({ job: id }, "job finished after its lease passed to another run");
    return { kind: "done" };
  }

  async function handBack(): Promise<number> {
    const held = [...running.entries()];
    running.clear();
    for (const [id, { owner, heartbeat }] of held) {
      clearInterval(heartbeat);
      await store.failJob(id, owner, 0).catch((error: unknown) => o.log.warn({ err: error, job: id }, "handing a job back failed; its lease passes by itself"));
    }
    return held.length;
  }

  return { run, stale: () => store.listStaleJobs(policy.unleasedSeconds), handBack };
}
