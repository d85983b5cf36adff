// GitHub's rate limits shared between replicas: when one replica is told to wait (a
// `retry-after`, a spent `x-ratelimit-remaining` with its reset, a secondary limit), it
// records "not before" in a gate the replicas share (Redis), and every replica waits for it
// before its next call, instead of each finding the limit by hitting it. Probot shares
// limits the same way through Bottleneck over ioredis, but only inside its own throttling
// plugin, which the bot turns off (src/server/octokit.ts); this gate sits under the bot's retry
// policy (src/github/octokit.ts), which still decides whether and how long to wait on the
// answer it got. A gate that cannot be read never blocks a call.
//
// A pause has a scope, as GitHub's limits do: an installation token's limits are that
// installation's, so one installation told to wait pauses only its own calls; calls made
// as the app itself (a JWT: /app, an installation's lookup) share one app-wide pause.
import type { GateScope, RateGate } from "../store/types.ts";
import { rateLimitOf } from "./octokit.ts";

// The gate's interface is the store's (a store that shares state between replicas offers one).
export type { GateScope, RateGate } from "../store/types.ts";


/**
 * The scope of one request: an installation client's calls are the installation's, except
 * those under /app, which go out with the app's JWT (auth-app routes them so) and count
 * against the app.
 */
export function scopeOf(installationId: unknown, url: unknown): GateScope {
  const path = typeof url === "string" ? url.replace(/^[A-Z]+ /, "").replace(/^https?:\/\/[^/]+/, "") : "";
  if (/^\/app(\/|$|\?)/.test(path)) return "app";
  return Number.isSafeInteger(installationId) && (installationId as number) > 0 ? `installation:${installationId as number}` : "app";
}

/** The longest a call waits on the gate: a longer pause is the retry policy's to judge. */
const MAX_GATE_WAIT_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type ClientOptions = { auth?: { installationId?: unknown } } | undefined;

export function rateGatePlugin(gate: RateGate) {
  return (octokit: { hook: { wrap: (name: "request", fn: (request: (o: unknown) => Promise<unknown>, options: unknown) => Promise<unknown>) => void } }, clientOptions?: ClientOptions) => {
    // Probot makes one client per installation, with the installation's id in its auth options.
    const installationId = clientOptions?.auth?.installationId;
    octokit.hook.wrap("request", async (request, options) => {
      const scope = scopeOf(installationId, (options as { url?: unknown } | undefined)?.url);
      const wait = await gate.waitMs(scope).catch(() => 0);
      if (wait > 0) await sleep(Math.min(wait, MAX_GATE_WAIT_MS));
      try {
        return await request(options);
      } catch (error) {
        const limit = rateLimitOf(error as Parameters<typeof rateLimitOf>[0], Date.now());
        // A limit that names no time (a bare secondary limit or 429): GitHub's advice is at least a minute.
        const limited = limit ? (limit.askedMs ?? 60_000) : undefined;
        if (limited !== undefined && limited > 0) await gate.pauseUntil(scope, Date.now() + limited).catch(() => undefined);
        throw error;
      }
    });
  };
}
