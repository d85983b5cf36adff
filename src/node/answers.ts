// Answers first: the work after an answer (a durable job's run) waits, for a bounded time,
// until the server has no request in the middle of being answered. A burst of 100 Slack
// commands otherwise had its later acks wait behind the work the earlier acks had just
// started (GitHub reads, pre-flight checks, dispatches) on the same thread; a job only ever
// waits `maxMs`, so steady traffic cannot starve the work.
import type { Server } from "node:http";

export interface AnswerWatch {
  /** Requests received and not yet answered (their response not finished or closed). */
  readonly inFlight: number;
  /** Resolves once no request is being answered, or after `maxMs`, whichever is first. */
  quiet(maxMs: number): Promise<void>;
}

export function watchAnswers(http: Server): AnswerWatch {
  let inFlight = 0;
  const waiting = new Set<() => void>();
  http.on("request", (_req, res) => {
    inFlight++;
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      inFlight--;
      if (inFlight === 0) for (const wake of [...waiting]) wake();
    };
    res.once("finish", finished).once("close", finished);
  });
  return {
    get inFlight() {
      return inFlight;
    },
    quiet(maxMs) {
      if (inFlight === 0) return Promise.resolve();
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          waiting.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, maxMs);
        timer.unref();
        waiting.add(wake);
      });
    },
  };
}
