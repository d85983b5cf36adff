// Webhook work runs after the HTTP answer (GitHub wants one within 10 s; a review that
// waits out a rate limit takes longer). Jobs for the same pull request run one after
// another, so two pushes in quick succession cannot race on the same summary comment.
import type { Log } from "../shared/log.ts";

export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];
  private pending = 0;

  constructor(
    private readonly concurrency: number,
    private readonly log: Pick<Log, "error">,
  ) {}

  /**
   * Runs `job` after every earlier job with the same key; never rejects. `before` is awaited
   * first, without holding one of the `concurrency` slots (the Node server's jobs wait there
   * for its answers to settle, and must not keep other jobs from running meanwhile).
   */
  enqueue(key: string, job: () => Promise<void>, before?: () => Promise<void>): Promise<void> {
    this.pending++;
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(() => before?.()).then(() => this.withSlot(job)).catch((error: unknown) => this.log.error({ err: error, key }, "background job failed"));
    const tail = run.finally(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
      this.pending--;
      if (this.pending === 0) this.flushIdle();
    });
    this.tails.set(key, tail);
    return tail;
  }

  /** Resolves once no job is queued or running (tests and graceful shutdown). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  get size(): number {
    return this.pending;
  }

  private async withSlot(job: () => Promise<void>): Promise<void> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      await job();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private flushIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
