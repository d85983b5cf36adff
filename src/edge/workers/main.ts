// The Cloudflare Workers entry: `export default { fetch, queue, scheduled }` plus the store's
// Durable Object class. Webhook and Slack work goes through the JOBS queue (a consumer has
// minutes, not waitUntil's seconds, and retries); the cron trigger restarts jobs an evicted
// isolate left and runs the queue-timeout sweep. The bot is built once per isolate.
import { useAnchorScanModule } from "../../core/verdict/scan/wasm-scanner.ts";
import { createEdgeBot, misconfigured, type EdgeBot } from "../bot.ts";
import type { EdgeWebFiles } from "../web.ts";
import { consoleLog } from "../log.ts";
import { pythonFromModules } from "../python.ts";
import { anchorScan, pythonGrammar, treeSitterRuntime } from "../wasm.js";
import { durableObjectStore } from "./store-object.ts";
import type { MessageBatch, WorkerEnv } from "./types.ts";

export { HcpStore } from "./store-object.ts";

useAnchorScanModule(anchorScan);
const python = pythonFromModules(treeSitterRuntime, pythonGrammar);
const bots = new WeakMap<object, Promise<EdgeBot>>();

function settingsOf(env: WorkerEnv): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"));
}

function botFor(env: WorkerEnv): Promise<EdgeBot> {
  let bot = bots.get(env);
  if (!bot) {
    const settings = settingsOf(env);
    const log = consoleLog(settings.LOG_LEVEL, { runtime: "workerd" });
    bot = createEdgeBot(settings, {
      name: "workerd",
      store: durableObjectStore(env.STORE),
      python,
      dispatch: (job) => env.JOBS.send({ job: job.id }),
      log,
      webFiles: async () => webFilesFrom(env, await import("edge:web-files")),
    }).catch((error: unknown) => misconfigured(error, log));
    bots.set(env, bot);
  }
  return bot;
}

/**
 * The web pages' files through the ASSETS binding (Workers Static Assets: served from
 * Cloudflare's asset store, not part of the worker's upload). The worker runs first for every
 * request (run_worker_first) and sets the headers itself, the same as Node's.
 */
function webFilesFrom(env: WorkerEnv, build: { hash: string; names: readonly string[] }): EdgeWebFiles {
  const known = new Set(build.names);
  return {
    hash: build.hash,
    async read(name) {
      if (!known.has(name) || !env.ASSETS) return undefined;
      const res = await env.ASSETS.fetch(new Request(`https://assets.invalid/${name}`));
      if (res.ok) return res.arrayBuffer();
      await res.body?.cancel();
      return undefined;
    },
  };
}

/** Cloudflare Queues delay a retry by at most 12 hours; a longer wait is asked again when the message comes back. */
const MAX_QUEUE_DELAY_SECONDS = 12 * 3600;
const queueDelay = (seconds: number) => Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));

export default {
  async fetch(request: Request, env: WorkerEnv): Promise<Response> {
    return (await botFor(env)).fetch(request);
  },

  async queue(batch: MessageBatch<{ job: string }>, env: WorkerEnv): Promise<void> {
    const bot = await botFor(env);
    await Promise.all(
      batch.messages.map(async (message) => {
        const outcome = await bot.runJob(message.body.job).catch((error: unknown) => ({ kind: "retry" as const, seconds: 30, error }));
        // A wait GitHub asked for (a rate limit past the retry horizon) comes back as this delay, not a sleep here.
        if (outcome.kind === "retry") return message.retry({ delaySeconds: queueDelay(outcome.seconds) });
        if (outcome.kind !== "wait") return message.ack();
        // Waiting its turn (behind an older job of its PR that GitHub holds back, say) is not a
        // failure: a fresh message, so the queue's max_retries counts failed runs only and a
        // long wait in front does not get this job's message dropped.
        try {
          await env.JOBS.send({ job: message.body.job }, { delaySeconds: queueDelay(outcome.seconds) });
          message.ack();
        } catch {
          message.retry({ delaySeconds: queueDelay(outcome.seconds) });
        }
      }),
    );
  },

  async scheduled(_event: unknown, env: WorkerEnv): Promise<void> {
    await (await botFor(env)).scheduled();
  },
};
