// Answers first: the work after an answer (a durable job's run) waits, for a bounded time,
// until the server has no request in the middle of being answered. A burst of 100 Slack
// commands otherwise had its later acks wait behind the work the earlier acks had just
// started (GitHub reads, pre-flight checks, dispatches) on the same thread; a job only ever
// waits `maxMs`, so steady traffic cannot starve the work.
//
// "No request in flight" alone is not quiet enough: the requests of one burst reach the
// server over a few hundred milliseconds, and in the gaps between them every waiting job
// started at once (on this project's bench:load, the work of earlier acks then took most of
// the CPU while the later acks of the same burst waited). So the server is quiet once
// nothing is in flight and nothing was answered for `settleMs`.
import type { Server } from "node:http";

/** How long after the last answer the server counts as quiet (a burst's gaps are shorter). */
export const SETTLE_MS = 60;

export interface AnswerWatch {
  /** Requests received and not yet answered (their response not finished or closed). */
  readonly inFlight: number;
  /** Resolves once no request is being answered and none was for the settle time, or after `maxMs`, whichever is first. */
  quiet(maxMs: number): Promise<void>;
}

export function watchAnswers(http: Server, settleMs = SETTLE_MS, now: () => number = () => performance.now()): AnswerWatch {
  let inFlight = 0;
  let lastAnswered = Number.NEGATIVE_INFINITY;
  const waiting = new Set<() => void>();
  let settleTimer: ReturnType<typeof setTimeout> | undefined;

  const settled = () => inFlight === 0 && now() - lastAnswered >= settleMs;

  /** Wakes the waiting jobs once the settle time after the last answer has passed with nothing new. */
  function wakeWhenSettled(): void {
    if (settleTimer || waiting.size === 0) return;
    settleTimer = setTimeout(() => {
      settleTimer = undefined;
      if (settled()) for (const wake of [...waiting]) wake();
      else if (inFlight === 0) wakeWhenSettled();
    }, Math.max(1, settleMs - (now() - lastAnswered)));
    settleTimer.unref();
  }

  http.on("request", (_req, res) => {
    inFlight++;
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      inFlight--;
      lastAnswered = now();
      if (inFlight === 0) wakeWhenSettled();
    };
    res.once("finish", finished).once("close", finished);
  });
  return {
    get inFlight() {
      return inFlight;
    },
    quiet(maxMs) {
      if (settled()) return Promise.resolve();
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          waiting.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, maxMs);
        timer.unref();
        waiting.add(wake);
        if (inFlight === 0) wakeWhenSettled();
      });
    },
  };
}
