// The fence of a durable job's lease, on every host (Node, Workers, Deno): work that must
// happen once (a check run, a review, a summary comment, a workflow dispatch) is written
// only by the run that holds the job's lease at the store, at the moment it writes.
//
// GitHub cannot check a token of ours, so the check is made at the store right before each
// write leaves: `renewJob` renews the lease only while the store still names this run as its
// owner (a compare of the owner in the same atomic step). The run that took the job after
// this one's lease passed, or a hand-back, changes the owner, and this run then writes nothing
// more. A renewal that fails for any reason (the store unreachable, an answer that came too
// late to leave room for the write) ends the run's writes too: nothing goes out on a lease
// nobody confirmed, and the job runs again under a fresh lease (its writes look for what an
// earlier run left before they create anything, src/github/writes.ts).
import type { JobStore } from "../store/types.ts";

/**
 * Thrown by a job's fence when its lease is no longer this run's (another run took it, it was
 * handed back, or the store could not confirm it in time): the job stops before its next write.
 */
export class LeaseLost extends Error {
  override name = "LeaseLost";
}

/** What a running job holds of its lease. */
export interface JobLease {
  /**
   * Renews the lease at the store (a fresh term, only while this run still owns it) or throws
   * LeaseLost; awaited right before each write the job sends. Once it has thrown, it always throws.
   */
  fence(): Promise<void>;
  /** Set once the lease was lost (or could not be confirmed): nothing more is written by this run. */
  readonly lost: LeaseLost | undefined;
}

export interface LeaseFenceOptions {
  store: Pick<JobStore, "renewJob">;
  jobId: string;
  owner: string;
  leaseSeconds: number;
  /** Milliseconds since the epoch; the host's clock. */
  now?: () => number;
}

/**
 * The fence of one run's lease. A renewal confirms a term of `leaseSeconds` that began no
 * earlier than when it was asked for; one answered after a third of that leaves too little of
 * the term for the write it guards (the store's clock read when the call was made, and another
 * replica may take the job at the term's end), so it counts as lost.
 */
export function leaseFence(o: LeaseFenceOptions): JobLease {
  const now = o.now ?? Date.now;
  const leaseMs = o.leaseSeconds * 1000;
  let lost: LeaseLost | undefined;
  const lose = (why: string, cause?: unknown) => (lost = new LeaseLost(`the lease of job ${o.jobId} ${why}; this run writes nothing more`, cause === undefined ? undefined : { cause }));
  return {
    async fence() {
      if (lost) throw lost;
      const asked = now();
      let renewed: boolean;
      try {
        renewed = await o.store.renewJob(o.jobId, o.owner, o.leaseSeconds);
      } catch (error) {
        throw lost ?? lose(`could not be renewed (${(error as Error).message})`, error);
      }
      if (lost) throw lost; // lost meanwhile (a concurrent renewal failed)
      if (!renewed) throw lose("passed to another run (or was handed back, or the job is done)");
      const took = now() - asked;
      if (took > leaseMs / 3) throw lose(`was confirmed ${took} ms after it was asked for, too late to leave room for a write`);
    },
    get lost() {
      return lost;
    },
  };
}

/** Only reads may go out without the fence: every other call (GraphQL's POST included) is a write that must happen once. */
export const isRead = (method: string | undefined): boolean => method === undefined || method === "GET" || method === "HEAD";

type FetchLike = (url: string, init?: unknown) => Promise<unknown>;

/** What the fence needs of an Octokit: its request hook, whose options carry the fetch each attempt is sent with. */
export interface Hookable {
  hook?: { before(name: "request", fn: (options: { method?: string; request?: { fetch?: FetchLike } & Record<string, unknown> }) => void | Promise<void>): void };
}

/**
 * Fences every write this Octokit sends (one made for one delivery or one job: the hook stays
 * on it). The fence runs inside the request's own fetch, so it is checked right before each
 * attempt leaves: after any wait for a rate limit or a shared pause, and again before each
 * repeat the retry plugin sends (src/github/octokit.ts), not once before them all.
 */
export function fenceWrites(octokit: Hookable, lease: JobLease): void {
  octokit.hook?.before("request", (options) => {
    if (isRead(options.method)) return;
    const send: FetchLike = options.request?.fetch ?? ((url, init) => globalThis.fetch(url, init as RequestInit));
    options.request = {
      ...options.request,
      fetch: async (url: string, init?: unknown) => {
        await lease.fence();
        return send(url, init);
      },
    };
  });
}
