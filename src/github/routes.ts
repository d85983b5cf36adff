// Which webhook deliveries the app acts on, and the key its work on each is ordered under
// (one job at a time per key: a PR, a workflow run). The one source of truth for both: the
// intake (src/github/intake.ts) routes a delivery with it before its answer, on every host,
// without loading the app's modules (the review, smoke and verdict code is the bulk of a
// cold start on the edge), and the job it writes records the route, whose handler in the
// app's table (keyed like ROUTES, src/github/app.ts) runs the work.
//
// Nothing here may import more than constants: it is in the first request's path.
import type { EmitterWebhookEvent, EmitterWebhookEventName } from "@octokit/webhooks";
import { CHECK_NAME } from "../core/review/check-name.ts";

export { CHECK_NAME };
/** The identifier of the review check run's "Smoke run" button. */
export const SMOKE_ACTION_IDENTIFIER = "hcp-smoke";

type Payload<E extends EmitterWebhookEventName> = EmitterWebhookEvent<E>["payload"];

/** One kind of delivery: the events it answers and the key of its work, or undefined when the app ignores this one. */
export interface Route<E extends EmitterWebhookEventName> {
  events: readonly E[];
  key(payload: Payload<E>): string | undefined;
}

const route = <E extends EmitterWebhookEventName>(events: readonly E[], key: (payload: Payload<E>) => string | undefined): Route<E> => ({ events, key });

/** The key of a pull request's work: reviews and commands on one PR run one at a time. */
export function prKey(repository: { owner: { login: string }; name: string }, number: number): string {
  return `${repository.owner.login}/${repository.name}#${number}`;
}

/** A comment that holds an `/hcp` command (at the start of a line, as Markdown would not indent it into code). */
export const HCP_COMMAND_LINE = /^\s{0,3}\/hcp\b/im;

/** A field a delivery must carry for its work to run: without it the job could only fail, five times. */
class MissingField extends Error {}

/** The value at `path` in `payload`, or a MissingField naming the path when `valid` refuses it. */
function field(payload: unknown, path: string, valid: (value: unknown) => boolean): unknown {
  let value: unknown = payload;
  for (const part of path.split(".")) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  if (!valid(value)) throw new MissingField(path);
  return value;
}

const positiveInteger = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) > 0;
const text = (value: unknown): boolean => typeof value === "string" && value.length > 0;

/** The repository a job acts in. */
function requireRepo(payload: unknown): void {
  field(payload, "repository.owner.login", text);
  field(payload, "repository.name", text);
}

/** The repository and installation a review acts in (its token is the installation's). */
function requireRepoAndInstallation(payload: unknown): void {
  requireRepo(payload);
  field(payload, "installation.id", positiveInteger);
}

export const ROUTES = {
  /** A PR opened, pushed to, reopened or marked ready: a review. */
  review: route(["pull_request.opened", "pull_request.synchronize", "pull_request.reopened", "pull_request.ready_for_review"], (p) => {
    requireRepoAndInstallation(p);
    field(p, "pull_request.head.sha", text);
    return prKey(p.repository, field(p, "pull_request.number", positiveInteger) as number);
  }),
  /** "Re-run" on the review's check run. */
  rerequest: route(["check_run.rerequested"], (p) => {
    if (field(p, "check_run.name", (v) => typeof v === "string") !== CHECK_NAME) return undefined;
    // A fork's PR is not listed on the check run: there is nothing to re-run from it.
    if (field(p, "check_run.pull_requests", Array.isArray) && p.check_run.pull_requests.length === 0) return undefined;
    requireRepoAndInstallation(p);
    return prKey(p.repository, field(p, "check_run.pull_requests.0.number", positiveInteger) as number);
  }),
  /** A new `/hcp` comment on a PR, by a person, in an installation; edits never re-run a command. */
  comment: route(["issue_comment.created"], (p) => {
    if (!p.issue.pull_request || p.sender.type === "Bot" || p.comment.user?.type === "Bot") return undefined;
    if (!HCP_COMMAND_LINE.test(p.comment.body) || !p.installation?.id) return undefined;
    return prKey(p.repository, p.issue.number);
  }),
  /** The check run's "Smoke run" button, pressed by a person on a PR's check run. */
  button: route(["check_run.requested_action"], (p) => {
    if (p.requested_action?.identifier !== SMOKE_ACTION_IDENTIFIER || p.sender.type === "Bot") return undefined;
    const pr = p.check_run.pull_requests[0];
    return pr && p.installation?.id ? prKey(p.repository, pr.number) : undefined;
  }),
  /** A smoke run's workflow queued, started or finished. */
  run: route(["workflow_run.requested", "workflow_run.in_progress", "workflow_run.completed"], (p) => {
    requireRepo(p);
    return `run:${field(p, "workflow_run.id", positiveInteger) as number}`;
  }),
  /** A smoke run's job started (a runner picked it up). */
  job: route(["workflow_job.in_progress"], (p) => {
    requireRepo(p);
    return `run:${field(p, "workflow_job.run_id", positiveInteger) as number}`;
  }),
};

/** The name of a route in ROUTES: what a delivery's job records, and the handler table's keys (src/github/app.ts). */
export type RouteName = keyof typeof ROUTES;

const byEvent = new Map<string, { name: RouteName; route: Route<EmitterWebhookEventName> }>();
for (const [name, r] of Object.entries(ROUTES) as [RouteName, Route<EmitterWebhookEventName>][]) for (const event of r.events) byEvent.set(event, { name, route: r });

/** Whether the app acts on some action of the event `name` (the others it ignores, whatever their body). */
export const routesEvent = (name: string): boolean => byEvent.has(name) || [...byEvent.keys()].some((event) => event.startsWith(`${name}.`));

export type Routing = { kind: "work"; key: string } | { kind: "ignored" } | { kind: "malformed"; reason: string };

/** A Routing whose work names the route it is for (the job records it; its handler runs it). */
export type NamedRouting = { kind: "work"; key: string; route: RouteName } | Exclude<Routing, { kind: "work" }>;

/** routeDelivery for a delivery's body as GitHub sent it: text that is not JSON is malformed too. */
export function routeBody(name: string, body: string): Routing {
  return withoutName(routeBodyNamed(name, body));
}

/** routeBody, with the name of the route whose handler runs the work. */
export function routeBodyNamed(name: string, body: string): NamedRouting {
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return { kind: "malformed", reason: `a ${name} delivery whose body is not JSON` };
  }
  return routeNamed(name, payload);
}

/**
 * What the app does with a delivery named `name` (`x-github-event`): work under a key, or
 * nothing. A payload without the fields its event has is malformed (GitHub signed it, so
 * this is a bug or a forgery with the secret, and saying so beats a 500).
 */
export function routeDelivery(name: string, payload: unknown): Routing {
  return withoutName(routeNamed(name, payload));
}

const withoutName = (r: NamedRouting): Routing => (r.kind === "work" ? { kind: "work", key: r.key } : r);

/** routeDelivery, with the name of the route whose handler runs the work. */
export function routeNamed(name: string, payload: unknown): NamedRouting {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return { kind: "malformed", reason: `a ${name} delivery whose body is not a JSON object` };
  const { action } = payload as { action?: unknown };
  const found = (typeof action === "string" ? byEvent.get(`${name}.${action}`) : undefined) ?? byEvent.get(name);
  if (!found) return { kind: "ignored" };
  try {
    const key = found.route.key(payload as Payload<EmitterWebhookEventName>);
    return key === undefined ? { kind: "ignored" } : { kind: "work", key, route: found.name };
  } catch (error) {
    const what = error instanceof MissingField ? `no valid ${error.message}` : (error as Error).message;
    return { kind: "malformed", reason: `a ${name} delivery without the fields of one (${what})` };
  }
}
