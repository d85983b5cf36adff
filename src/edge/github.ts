// The GitHub App on an edge runtime: an adapter over @octokit/app that satisfies the host
// interface createApp is written against (on, auth, log), so the same handlers run here as
// under Probot on Node. A delivery passes through the handlers twice: before the answer
// ("route": which key its work has, or none, and nothing runs), and in the durable job
// after the answer ("work": the handler's work runs, with the installation's Octokit).
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import { restEndpointMethods } from "@octokit/plugin-rest-endpoint-methods";
import type { WorkRunner } from "../github/app.ts";
import type { AppHost, BotOctokit, HostLog } from "../github/host.ts";
import { EDGE_RETRY_POLICY, retryPlugin, SYSTEM_CLOCK, type Clock, type RetryObserver, type RetryPolicy } from "../github/octokit.ts";

/** A webhook delivery as a job carries it. */
export interface Delivery {
  id: string;
  name: string;
  payload: { action?: string; installation?: { id: number } } & Record<string, unknown>;
}

type Handler = (context: { id: string; name: string; payload: unknown; octokit: BotOctokit }) => Promise<void>;

/** Per delivery, what its handlers asked the runner to do. */
interface Collector {
  mode: "route" | "work";
  jobId?: string;
  keys: string[];
  work: Promise<void>[];
}

export interface EdgeGitHubOptions {
  appId: number;
  /** PKCS#8 PEM (src/edge/key.ts converts GitHub's PKCS#1). */
  privateKey: string;
  webhookSecret: string;
  /** REST base URL: https://api.github.com or GHE_PROTOCOL://GHE_HOST/api/v3. */
  baseUrl: string;
  log: HostLog;
  /** The retry policy (EDGE_RETRY_POLICY unless the settings change it), its clock (tests hand in one that does not sleep) and who hears of its waits. */
  policy?: RetryPolicy;
  clock?: Clock;
  observer?: RetryObserver;
}

export interface EdgeGitHub {
  host: AppHost;
  runner: WorkRunner;
  /** The signature check; false for a missing, malformed or forged signature (never a throw). */
  verify(body: string, signature: string | null): Promise<boolean>;
  /** The key the delivery's work runs under, or undefined when the app ignores the delivery. */
  route(delivery: Delivery): Promise<string | undefined>;
  /** Runs the delivery's work (inside the durable job `jobId`); rejects when the work failed. */
  work(delivery: Delivery, jobId: string): Promise<void>;
}

// A request waits at most the policy's horizon here (EDGE_RETRY_POLICY's ten minutes); past it the job fails and runs again later.
const edgeOctokit = (policy: RetryPolicy, clock: Clock, observer: RetryObserver | undefined) => Octokit.plugin(restEndpointMethods, paginateRest, retryPlugin(policy, clock, observer) as never);

/** Before the answer nothing may call GitHub: a handler that tries is a bug, said loudly. */
const NO_OCTOKIT = new Proxy({} as BotOctokit, {
  get() {
    throw new Error("a webhook handler used Octokit before its work was scheduled; call GitHub only inside the work");
  },
});

export function createEdgeGitHub(o: EdgeGitHubOptions): EdgeGitHub {
  const octokitLog = {
    debug: () => {},
    info: () => {},
    warn: (message: string) => o.log.warn({}, message),
    error: (message: string) => o.log.error({}, message),
  };
  const app = new App({
    appId: o.appId,
    privateKey: o.privateKey,
    webhooks: { secret: o.webhookSecret },
    Octokit: edgeOctokit(o.policy ?? EDGE_RETRY_POLICY, o.clock ?? SYSTEM_CLOCK, o.observer).defaults({ baseUrl: o.baseUrl }),
    log: octokitLog,
  });
  const handlers = new Map<string, Handler[]>();
  const collectors = new WeakMap<object, Collector>();

  const host: AppHost = {
    on(event, handler) {
      for (const name of Array.isArray(event) ? event : [event]) {
        handlers.set(name, [...(handlers.get(name) ?? []), handler as unknown as Handler]);
      }
    },
    async auth(installationId) {
      const octokit = installationId === undefined ? app.octokit : await app.getInstallationOctokit(installationId);
      return octokit as unknown as BotOctokit;
    },
    log: o.log,
  };

  const runner: WorkRunner = {
    run(context, key, work) {
      const collector = collectors.get(context);
      if (!collector) throw new Error("work scheduled outside a delivery");
      collector.keys.push(key);
      if (collector.mode !== "work") return;
      const running = work();
      running.catch(() => {}); // awaited (and its error raised) by work() below
      collector.work.push(running);
    },
    claimOwner: (context) => collectors.get(context)?.jobId,
  };

  async function deliver(delivery: Delivery, collector: Collector): Promise<void> {
    const names = [delivery.name, ...(delivery.payload.action ? [`${delivery.name}.${delivery.payload.action}`] : [])];
    const matched = names.flatMap((n) => handlers.get(n) ?? []);
    if (matched.length === 0) return;
    const installation = delivery.payload.installation?.id;
    const octokit = collector.mode === "route" ? NO_OCTOKIT : installation ? await host.auth(installation) : await host.auth();
    for (const handler of matched) {
      const context = { id: delivery.id, name: delivery.name, payload: delivery.payload, octokit };
      collectors.set(context, collector);
      await handler(context);
    }
  }

  return {
    host,
    runner,
    async verify(body, signature) {
      if (!signature) return false;
      try {
        return await app.webhooks.verify(body, signature);
      } catch {
        return false; // a malformed signature (sha256=zz) throws instead of saying false
      }
    },
    async route(delivery) {
      const collector: Collector = { mode: "route", keys: [], work: [] };
      await deliver(delivery, collector);
      return collector.keys[0];
    },
    async work(delivery, jobId) {
      const collector: Collector = { mode: "work", jobId, keys: [], work: [] };
      await deliver(delivery, collector);
      await Promise.all(collector.work);
    },
  };
}
