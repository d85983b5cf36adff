// The GitHub App on an edge runtime: an adapter over @octokit/app that satisfies the host
// interface the app is written against (auth, log), so the same handlers run here as under
// Probot on Node. A delivery reaches its handler in its durable job, after the answer
// (src/edge/webhook.ts took it in through the one intake, src/github/intake.ts).
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import type { AppHost, BotOctokit } from "../github/host.ts";
import { restFromTable } from "../github/rest.ts";
import { EDGE_RETRY_POLICY, retryPlugin, SYSTEM_CLOCK, type Clock, type RetryObserver, type RetryPolicy } from "../github/octokit.ts";
import type { Log } from "../shared/log.ts";

export interface EdgeGitHubOptions {
  appId: number;
  /** PKCS#8 PEM (src/edge/key.ts converts GitHub's PKCS#1). */
  privateKey: string;
  /** REST base URL: https://api.github.com or GHE_PROTOCOL://GHE_HOST/api/v3. */
  baseUrl: string;
  log: Log;
  /** The retry policy (EDGE_RETRY_POLICY unless the settings change it), its clock (tests hand in one that does not sleep) and who hears of its waits. */
  policy?: RetryPolicy;
  clock?: Clock;
  observer?: RetryObserver;
}

// A request waits at most the policy's horizon here (EDGE_RETRY_POLICY's ten minutes); past it the job fails and runs again later.
// `rest` holds the endpoints of src/github/rest.ts only, not @octokit/plugin-rest-endpoint-methods' whole table.
const edgeOctokit = (policy: RetryPolicy, clock: Clock, observer: RetryObserver | undefined) => Octokit.plugin(restFromTable, paginateRest, retryPlugin(policy, clock, observer) as never);

export function createEdgeGitHub(o: EdgeGitHubOptions): AppHost {
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
  return {
    async auth(installationId) {
      // getInstallationOctokit makes a client per call, so a job's fence stays with its own (src/github/handlers.ts).
      const octokit = installationId === undefined ? app.octokit : await app.getInstallationOctokit(installationId);
      return octokit as unknown as BotOctokit;
    },
    log: o.log,
  };
}
