// The GitHub App on an edge runtime: an adapter over @octokit/app that satisfies the host
// interface createApp is written against (on, auth, log), so the same handlers run here as
// under Probot on Node. A delivery reaches the handlers in its durable job, after the answer
// (src/edge/webhook.ts verified and routed it before, with src/github/routes.ts, the table
// the handlers take their keys from).
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import type { WorkRunner } from "../github/app.ts";
import { fenceWrites, type Hookable, type JobLease } from "../jobs/fence.ts";
import type { AppHost, BotOctokit, HostLog } from "../github/host.ts";
import { restFromTable } from "../github/rest.ts";
import { EDGE_RETRY_POLICY, retryPlugin, SYSTEM_CLOCK, type Clock, type RetryObserver, type RetryPolicy } from "../github/octokit.ts";

/** A webhook delivery as a job carries it. */
export interface Delivery {
  id: string;
  name: string;
  payload: { action?: string; installation?: { id: number } } & Record<string, unknown>;
}

type Handler = (context: { id: string; name: string; payload: unknown; octokit: BotOctokit }) => Promise<void>;

/** Per delivery, the work its handlers handed the runner. */
interface Collector {
  jobId: string;
  work: Promise<void>[];
}

export interface EdgeGitHubOptions {
  appId: number;
  /** PKCS#8 PEM (src/edge/key.ts converts GitHub's PKCS#1). */
  privateKey: string;
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
  /**
   * Runs the delivery's work inside the durable job `jobId`, every write it sends fenced by the
   * job's lease (src/jobs/fence.ts, as on Node); rejects when the work failed.
   */
  work(delivery: Delivery, jobId: string, lease: JobLease): Promise<void>;
}

// A request waits at most the policy's horizon here (EDGE_RETRY_POLICY's ten minutes); past it the job fails and runs again later.
// `rest` holds the endpoints of src/github/rest.ts only, not @octokit/plugin-rest-endpoint-methods' whole table.
const edgeOctokit = (policy: RetryPolicy, clock: Clock, observer: RetryObserver | undefined) => Octokit.plugin(restFromTable, paginateRest, retryPlugin(policy, clock, observer) as never);

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
      const running = work();
      running.catch(() => {}); // awaited (and its error raised) by work() below
      collector.work.push(running);
    },
    claimOwner: (context) => collectors.get(context)?.jobId,
  };

  async function deliver(delivery: Delivery, collector: Collector, lease: JobLease): Promise<void> {
    const names = [delivery.name, ...(delivery.payload.action ? [`${delivery.name}.${delivery.payload.action}`] : [])];
    const matched = names.flatMap((n) => handlers.get(n) ?? []);
    if (matched.length === 0) return;
    const installation = delivery.payload.installation?.id;
    // An installation's Octokit is made for this delivery (@octokit/app's getInstallationOctokit), so
    // its fence stays with it. The App's own client is shared by the whole isolate and is not
    // hooked: its JWT can write to no repository (GitHub sends every App delivery that acts on
    // one with its installation).
    const octokit = installation ? await host.auth(installation) : await host.auth();
    if (installation) fenceWrites(octokit as unknown as Hookable, lease);
    for (const handler of matched) {
      const context = { id: delivery.id, name: delivery.name, payload: delivery.payload, octokit };
      collectors.set(context, collector);
      await handler(context);
    }
  }

  return {
    host,
    runner,
    async work(delivery, jobId, lease) {
      const collector: Collector = { jobId, work: [] };
      await deliver(delivery, collector, lease);
      await Promise.all(collector.work);
    },
  };
}
