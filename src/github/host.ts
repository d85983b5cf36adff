// What the GitHub App's behaviour needs from the server it runs in: register webhook
// handlers, get an authenticated Octokit, log. Probot satisfies this on Node; an adapter
// over @octokit/app satisfies it on Deno and Cloudflare Workers (src/edge). Nothing here
// names Probot, so the behaviour bundles for edge runtimes.
import type { Octokit as CoreOctokit } from "@octokit/core";
import type { PaginateInterface } from "@octokit/plugin-paginate-rest";
import type { EmitterWebhookEvent, EmitterWebhookEventName } from "@octokit/webhooks";
import type { Log } from "../shared/log.ts";
import type { BotRest } from "./rest.ts";

/** The Octokit the behaviour calls: core (request, graphql, hooks) + the REST methods of src/github/rest.ts + paginate. */
export type BotOctokit = CoreOctokit & { rest: BotRest } & { paginate: PaginateInterface };

/** The shared Log port (src/shared/log.ts), under the name the behaviour's modules use. */
export type HostLog = Log;

/**
 * One webhook delivery as a handler sees it: `id` (the delivery id, which a redelivery
 * keeps), `name`, `payload`, and an Octokit authenticated as the event's installation.
 */
export type WebhookContext<E extends EmitterWebhookEventName> = EmitterWebhookEvent<E> & { octokit: BotOctokit };

export interface AppHost {
  on<E extends EmitterWebhookEventName>(event: E | E[], handler: (context: WebhookContext<E>) => Promise<void>): void;
  /** The app itself (JWT) without an id; an installation with one. */
  auth(installationId?: number): Promise<BotOctokit>;
  log: HostLog;
}
