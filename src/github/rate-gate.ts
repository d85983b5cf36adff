// GitHub's rate limits shared between replicas: when one replica is told to wait (a
// `retry-after`, a spent `x-ratelimit-remaining` with its reset, a secondary limit), it
// records "not before" in a gate the replicas share (Redis), and every replica waits for it
// before its next call, instead of each finding the limit by hitting it. Probot shares
// limits the same way through Bottleneck over ioredis, but only inside its own throttling
// plugin, which the bot turns off (src/node/octokit.ts); this gate sits under the bot's retry
// policy (src/github/octokit.ts), which still decides whether and how long to wait on the
// answer it got. A gate that cannot be read never blocks a call.
import { rateLimitWaitMs } from "./octokit.ts";

export interface RateGate {
  /** Milliseconds before calls may go out again (0: now). */
  waitMs(): Promise<number>;
  /** Nobody calls before `untilMs` (epoch ms); a later pause already set is kept. */
  pauseUntil(untilMs: number): Promise<void>;
}

/** The longest a call waits on the gate: a longer pause is the retry policy's to judge. */
const MAX_GATE_WAIT_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function rateGatePlugin(gate: RateGate) {
  return (octokit: { hook: { wrap: (name: "request", fn: (request: (o: unknown) => Promise<unknown>, options: unknown) => Promise<unknown>) => void } }) => {
    octokit.hook.wrap("request", async (request, options) => {
      const wait = await gate.waitMs().catch(() => 0);
      if (wait > 0) await sleep(Math.min(wait, MAX_GATE_WAIT_MS));
      try {
        return await request(options);
      } catch (error) {
        const limited = rateLimitWaitMs(error as Parameters<typeof rateLimitWaitMs>[0]);
        if (limited !== undefined && limited > 0) await gate.pauseUntil(Date.now() + limited).catch(() => undefined);
        throw error;
      }
    });
  };
}
