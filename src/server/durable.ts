// Durable work on the Node server, with the edge hosts' job runner (src/jobs): a webhook's
// work and a Slack command's work are written to the store as a job, together with the
// claim that keeps a redelivery out, before the answer; then this process runs the job
// under a lease. A process killed mid-job leaves the job in the store, and whichever replica
// sees its lease pass (at start-up and every half lease) runs it again, exactly once. A
// store that cannot record the job refuses the delivery (503, so GitHub's redelivery can try
// again later; Slack's user is told to try again) rather than accepting work it could lose.
//
// The delivery's job runs the handler of the route the intake recorded in it (src/github/handlers.ts):
// the job is the only pass through the app, as on the edge.
import { Unavailable, type Accept } from "../github/intake.ts";
import type { Log } from "../shared/log.ts";
import { KeyedQueue } from "../github/queue.ts";
import { createJobRunner, type JobLease, type JobPolicy, type JobRunner } from "../jobs/runner.ts";
import type { SlackWork } from "../slack/commands.ts";
import type { DeferredCommand, SlackCoreDeps } from "../slack/endpoint.ts";
import type { Job, Store } from "../store/types.ts";

export { Unavailable };

export interface DurableOptions {
  store: Store;
  policy: JobPolicy;
  log: Log;
  /** Parallel jobs in this process. */
  concurrency?: number;
  /** Awaited before each job runs here (the server: until no answer is being written, bounded). */
  beforeRun?: () => Promise<void>;
}

export interface DurableWork {
  /** For the intake (src/github/intake.ts): writes a delivery's job with its claim, to run here after the answer. */
  accept: Accept;
  /** For the Slack app: writes the command's job with its claim. */
  slackAccept: SlackCoreDeps["accept"];
  /** How a delivery's job runs (the app's runDelivery), and how Slack work runs. */
  bind(hooks: { runDelivery: (job: Job, lease: JobLease) => Promise<void>; runSlack?: (work: SlackWork, command: DeferredCommand, lease: JobLease) => Promise<void> }): void;
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

type Hooks = Parameters<DurableWork["bind"]>[0];

/** Runs a job of either kind with what the server bound: a delivery's with the app, a Slack command's with Slack. */
async function execute(hooks: Hooks | undefined, job: Job, lease: JobLease): Promise<void> {
  if (!hooks) throw new Error("durable work is not bound to the app yet");
  if (job.kind === "github") return hooks.runDelivery(job, lease);
  if (job.kind === "slack" && hooks.runSlack) {
    const { work, command } = JSON.parse(job.payload) as { work: SlackWork; command: DeferredCommand };
    return hooks.runSlack(work, command, lease);
  }
  throw new Error(`no runner for a ${job.kind} job here`);
}

/** Timers that keep no process up, all cleared at once (drain, stop). */
function unrefTimers() {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  return {
    later(fn: () => void, ms: number): void {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      t.unref();
      timers.add(t);
    },
    clear(): void {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

export function createDurableWork(o: DurableOptions): DurableWork {
  const { store, policy, log } = o;
  const queue = new KeyedQueue(o.concurrency ?? 4, log);
  const local = new Set<string>();
  const { later, clear } = unrefTimers();
  let hooks: Hooks | undefined;
  let draining = false;
  const jobs: JobRunner = createJobRunner({ store, policy, log, execute: (job, lease) => execute(hooks, job, lease) });

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

  async function recover(): Promise<void> {
    if (draining) return;
    for (const job of await jobs.stale()) runHere(job);
  }

  return {
    accept,
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
      clear();
      const finished = await Promise.race([queue.idle().then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
      if (finished) return 0;
      return jobs.handBack();
    },
    idle: () => queue.idle(),
    stop() {
      draining = true;
      clear();
    },
  };
}
