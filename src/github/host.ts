// What the GitHub App's behaviour needs from the runtime it runs in: an authenticated Octokit
// and a log. Probot satisfies this on Node; an adapter over @octokit/app satisfies it on Deno
// and Cloudflare Workers (src/edge). Nothing here names Probot, so the behaviour bundles for
// edge runtimes. Deliveries reach the behaviour through the intake and its jobs
// (src/github/intake.ts, handlers.ts), never through a host's own event emitter.
import type { Octokit as CoreOctokit } from "@octokit/core";
import type { PaginateInterface } from "@octokit/plugin-paginate-rest";
import type { Log } from "../shared/log.ts";
import type { BotRest } from "./rest.ts";

/** The Octokit the behaviour calls: core (request, graphql, hooks) + the REST methods of src/github/rest.ts + paginate. */
export type BotOctokit = CoreOctokit & { rest: BotRest } & { paginate: PaginateInterface };

export interface AppHost {
  /** The app itself (JWT) without an id; an installation with one. */
  auth(installationId?: number): Promise<BotOctokit>;
  log: Log;
}
