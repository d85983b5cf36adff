// Durable work on the Node server, with the edge hosts' job runner (src/jobs): a webhook's
// work and a Slack command's work are written to the store as a job, together with the
// claim that keeps a redelivery out, before the answer; then this process runs the job
// under a lease. A process killed mid-job leaves the job in the store, and whichever replica
// sees its lease pass (at start-up and every half lease) runs it again, exactly once. A
// store that cannot record the job refuses the delivery (503, so GitHub's redelivery can try
// again later; Slack's user is told to try again) rather than accepting work it could lose.
//
// A delivery passes through the app's handlers twice, as on the edge: when it arrives
// (Probot verified it; the handler says which key its work has, and the job is written),
// and in the job (the delivery received again by Probot, now with the work run). Which pass
// a handler is in is known from the payload object: the job hands Probot a payload it
// parsed itself, and Probot's context carries that same object to the handlers. (Not an
// AsyncLocalStorage: on Node 20 one turns on a hook for every promise in the process,
// which the profile of a burst of Slack acks showed at about a tenth of the answering thread.)
import type { RunnerContext, WorkRunner } from "../github/app.ts";
import type { HostLog } from "../github/host.ts";
import { KeyedQueue } from "../github/queue.ts";
import { fenceWrites, type Hookable } from "../jobs/fence.ts";
import { createJobRunner, deliveryClaim, type JobLease, type JobPolicy, type JobRunner } from "../jobs/runner.ts";
import type { SlackWork } from "../slack/commands.ts";
import type { DeferredCommand, SlackCoreDeps } from "../slack/endpoint.ts";
import type { Job, Store } from "../store/types.ts";

/** A delivery as its job carries it (what Probot's `receive` takes again). */
export interface StoredDelivery {
  id: string;
  name: string;
  payload: unknown;
}

/** Thrown where new work cannot be accepted; Probot answers with its `status`. */
export class Unavailable extends Error {
  override name = "Unavailable";
  readonly status = 503;
}

interface Collector {
  jobId: string;
  work: Promise<void>[];
  /** The job's lease, checked at the store before each write to GitHub (src/jobs/fence.ts). */
  lease: JobLease;
}

export interface DurableOptions {
  store: Store;
  policy: JobPolicy;
  log: HostLog;
  /** Parallel jobs in this process. */
  concurrency?: number;
  /** Awaited before each job runs here (the server: until no answer is being written, bounded). */
  beforeRun?: () => Promise<void>;
}

export interface DurableWork {
  /** For createApp: writes the job on arrival, runs the work inside the job. */
  runner: WorkRunner;
  /** For the Slack app: writes the command's job with its claim. */
  slackAccept: SlackCoreDeps["accept"];
  /** How a stored delivery is received again (Probot's `receive`), and how Slack work runs. */
  bind(hooks: { receive: (delivery: StoredDelivery) => Promise<void>; runSlack?: (work: SlackWork, command: DeferredCommand, lease: JobLease) => Promise<void> }): void;
  /** Runs jobs nobody runs (a lease passed, or a job never started); at start-up and on a timer. */
  recover(): Promise<void>;
  start(): void;
  /** True once draining began: new work is refused. */
  readonly draining: boolean;
  /**
   * Stops accepting work, waits up to `ms` for running jobs, then hands the rest back
   * (their leases released, so another replica takes them at once). Resolves with how
   * many were handed back.
   */
  drain(ms: number): Promise<number>;
  /** Resolves when no job of this process is queued or running. */
  idle(): Promise<void>;
  stop(): void;
}

export function createDurableWork(o: DurableOptions): DurableWork {
  const { store, policy, log } = o;
  /** The payloads of the deliveries jobs are running now, and what collects their work. */
  const inJob = new WeakMap<object, Collector>();
  const collectorOf = (ctx: { payload: unknown }) => (typeof ctx.payload === "object" && ctx.payload !== null ? inJob.get(ctx.payload) : undefined);
  const queue = new KeyedQueue(o.concurrency ?? 4, log);
  const local = new Set<string>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let hooks: Parameters<DurableWork["bind"]>[0] | undefined;
  let draining = false;

  const jobs: JobRunner = createJobRunner({
    store,
    policy,
    log,
    async execute(job, lease) {
      if (!hooks) throw new Error("durable work is not bound to the app yet");
      if (job.kind === "github") {
        const collector: Collector = { jobId: job.id, work: [], lease };
        const delivery = JSON.parse(job.payload) as StoredDelivery;
        if (typeof delivery.payload !== "object" || delivery.payload === null) throw new Error(`job ${job.id} holds no delivery payload`);
        inJob.set(delivery.payload, collector);
        try {
          await hooks.receive(delivery);
          await Promise.all(collector.work);
        } finally {
          inJob.delete(delivery.payload);
        }
        return;
      }
      if (job.kind === "slack" && hooks.runSlack) {
        const { work, command } = JSON.parse(job.payload) as { work: SlackWork; command: DeferredCommand };
        return hooks.runSlack(work, command, lease);
      }
      throw new Error(`no runner for a ${job.kind} job here`);
    },
  });

  function later(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    t.unref();
    timers.add(t);
  }

  /** Runs a job here after the answer; a wait or a retry is tried again here (recovery covers a death meanwhile). */
  function runHere(job: Pick<Job, "id" | "key">, tries = 0): void {
    if (draining || local.has(job.id)) return;
    local.add(job.id);
    void queue.enqueue(
      job.key,
      async () => {
        try {
          const outcome = await jobs.run(job.id);
          if ((outcome.kind === "wait" || outcome.kind === "retry") && tries < 20) later(() => runHere(job, tries + 1), outcome.seconds * 1000);
        } finally {
          local.delete(job.id);
        }
      },
      async () => {
        await new Promise((resolve) => setImmediate(resolve)); // the answer is written first
        await o.beforeRun?.(); // and the answers that arrived meanwhile (no slot is held while waiting)
      },
    );
  }

  async function accept(job: { key: string; kind: string; payload: string }, claim: { key: string; ttlSeconds: number }): Promise<boolean> {
    if (draining) throw new Unavailable("this replica is shutting down; deliver again (another replica or the restarted one takes it)");
    let written: Job | undefined;
    try {
      written = await store.enqueueJob(job, claim);
    } catch (error) {
      log.error({ err: error }, "the store cannot record new work; refusing it");
      throw new Unavailable(`the store cannot record this work now (${(error as Error).message}); deliver again later`, { cause: error });
    }
    if (!written) return false;
    runHere(written);
    return true;
  }

  const runner: WorkRunner = {
    async run(ctx, key, work) {
      const collector = collectorOf(ctx);
      if (collector) {
        // The delivery's Octokit is its own (Probot makes one per delivery): each write it
        // sends is fenced by the job's lease (src/jobs/fence.ts), as on the edge.
        const octokit = (ctx as RunnerContext & { octokit?: Hookable }).octokit;
        if (octokit) fenceWrites(octokit, collector.lease);
        const running = work();
        running.catch(() => {}); // awaited (and its error raised) by execute above
        collector.work.push(running);
        return;
      }
      const delivery: StoredDelivery = { id: ctx.id, name: ctx.name, payload: ctx.payload };
      const accepted = await accept({ key, kind: "github", payload: JSON.stringify(delivery) }, deliveryClaim(ctx.id));
      if (!accepted) log.info({ delivery: ctx.id }, "delivery already accepted; ignoring the redelivery");
    },
    claimOwner: (ctx) => collectorOf(ctx)?.jobId,
  };

  async function recover(): Promise<void> {
    if (draining) return;
    for (const job of await jobs.stale()) runHere(job);
  }

  return {
    runner,
    slackAccept: (claim, key, work, command) => accept({ key, kind: "slack", payload: JSON.stringify({ work, command }) }, claim),
    bind(h) {
      hooks = h;
    },
    recover,
    start() {
      const tick = () => {
        recover()
          .catch((error: unknown) => log.warn({ err: error }, "recovering stale jobs failed; trying again later"))
          .finally(() => {
            if (!draining) later(tick, (policy.leaseSeconds * 1000) / 2);
          });
      };
      tick();
    },
    get draining() {
      return draining;
    },
    async drain(ms) {
      draining = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const finished = await Promise.race([queue.idle().then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
      if (finished) return 0;
      return jobs.handBack();
    },
    idle: () => queue.idle(),
    stop() {
      draining = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
