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

/**
 * The LeaseLost behind an error, if one is: Octokit wraps what its fetch throws in a
 * RequestError (status 500, the LeaseLost as its cause), which is not GitHub failing and must
 * not be retried as if it were (src/github/octokit.ts rethrows the LeaseLost itself).
 */
export function leaseLostIn(error: unknown): LeaseLost | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof LeaseLost) return e;
  return undefined;
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

/** A run's lease as the runner holds it: the fence, and the heartbeat's renewal. */
export interface RunLease extends JobLease {
  /**
   * The heartbeat: renews the lease while this run owns it, however long the store takes to
   * answer (no write waits on it); a renewal refused or failed ends the run's writes as the fence does.
   */
  renew(): Promise<void>;
}

/**
 * The fence of one run's lease. A renewal confirms a term of `leaseSeconds` that began no
 * earlier than when it was asked for (the store reads its clock when the call is made, and
 * another replica may take the job at the term's end); the fence lets a write go only when the
 * answer came within half of that, so at least half the term is left for the write.
 */
export function leaseFence(o: LeaseFenceOptions): RunLease {
  const now = o.now ?? Date.now;
  const leaseMs = o.leaseSeconds * 1000;
  let lost: LeaseLost | undefined;
  const lose = (why: string, cause?: unknown) => (lost = new LeaseLost(`the lease of job ${o.jobId} ${why}; this run writes nothing more`, cause === undefined ? undefined : { cause }));
  /** Renews at the store; resolves with how long the answer took. */
  async function renewAtStore(): Promise<number> {
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
    return now() - asked;
  }
  return {
    async fence() {
      const took = await renewAtStore();
      if (took > leaseMs / 2) throw lose(`was confirmed ${took} ms after it was asked for, too late to leave room for a write`);
    },
    async renew() {
      await renewAtStore();
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
