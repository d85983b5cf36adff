// One handler per route, keyed like ROUTES (src/github/routes.ts), and the run of a delivery's
// job: the intake (src/github/intake.ts) wrote the job with the route its delivery took, and
// the job calls that route's handler, once, with an Octokit for the delivery's installation
// whose every write is fenced by the job's lease (src/jobs/fence.ts). No second dispatch.
import type { EmitterWebhookEvent } from "@octokit/webhooks";
import { fenceWrites, type Hookable, type JobLease } from "../jobs/fence.ts";
import type { Job } from "../store/types.ts";
import type { AppHost, BotOctokit } from "./host.ts";
import type { StoredDelivery } from "./intake.ts";
import { routeNamed, ROUTES, type RouteName } from "./routes.ts";

type EventsOf<K extends RouteName> = (typeof ROUTES)[K]["events"][number];

/** A delivery as its route's handler sees it: the payload typed by the route's events. */
export interface RoutedDelivery<K extends RouteName> {
  /** The delivery id (a redelivery keeps it). */
  id: string;
  name: string;
  payload: EmitterWebhookEvent<EventsOf<K>>["payload"];
}

/** The durable job a handler runs in: its id holds the claims the work takes (so a re-run of the same job may take them again). */
export interface DeliveryJob {
  id: string;
  lease: JobLease;
}

export type RouteHandler<K extends RouteName> = (delivery: RoutedDelivery<K>, octokit: BotOctokit, job: DeliveryJob) => Promise<void>;

/** Each route's work. */
export type HandlerTable = { [K in RouteName]: RouteHandler<K> };

/** A handler as the runner calls it: with the delivery as its job holds it (routed, so of the payload its route's handler takes). */
type StoredHandler = (delivery: StoredDelivery, octokit: BotOctokit, job: DeliveryJob) => Promise<void>;

/** The route a job's delivery took: as the intake recorded it, or (a job written before routes were recorded) routed again. */
function routeOf(delivery: StoredDelivery): RouteName | undefined {
  if (delivery.route === undefined) {
    const routing = routeNamed(delivery.name, delivery.payload);
    return routing.kind === "work" ? routing.route : undefined;
  }
  if (!Object.hasOwn(ROUTES, delivery.route)) throw new Error(`a job for the unknown route ${JSON.stringify(delivery.route)}`);
  return delivery.route as RouteName;
}

/** Runs a delivery's job (kind `github`) with the handler of its route; rejects when the work failed. */
export function deliveryRunner(handlers: HandlerTable, host: Pick<AppHost, "auth">): (job: Pick<Job, "id" | "payload">, lease: JobLease) => Promise<void> {
  return async (job, lease) => {
    const delivery = JSON.parse(job.payload) as StoredDelivery;
    if (typeof delivery.payload !== "object" || delivery.payload === null) throw new Error(`job ${job.id} holds no delivery payload`);
    const route = routeOf(delivery);
    if (!route) return;
    const handler = (handlers as unknown as Record<RouteName, StoredHandler | undefined>)[route];
    if (!handler) throw new Error(`no handler for the route ${route}`);
    const installation = delivery.payload.installation?.id;
    // An installation's Octokit is made for this job (Probot and @octokit/app make one per
    // auth), so its fence stays with it. The App's own client is shared and is not hooked: its
    // JWT can write to no repository (GitHub sends every delivery that acts on one with its installation).
    const octokit = await host.auth(installation);
    if (installation) fenceWrites(octokit as unknown as Hookable, lease);
    await handler(delivery, octokit, { id: job.id, lease });
  };
}
