// The GitHub App's behaviour: one handler per route of src/github/routes.ts (a review, a
// re-run, a comment's commands, the check run's button, a smoke run's workflow events), the
// gateway other front doors (Slack) act on GitHub through, and the periodic sweep. Written
// against a small host interface (src/github/host.ts) that Probot satisfies on Node and an
// @octokit/app adapter on edge runtimes, so the same handlers run on both. A delivery's
// work runs in the durable job the intake wrote (src/github/intake.ts, handlers.ts).
import { fenceWrites, type Hookable, type JobLease } from "../jobs/fence.ts";
import type { Analyzer } from "../core/analyze/analyzer.ts";
import { checkSource, helpText, parseCommentCommands, type Command } from "../core/commands/index.ts";
import { defaultRepoConfig, type ConfigResult, type RepoConfig } from "../core/config/repo-config.ts";
import { findingsTable, untrusted } from "../core/render/markdown.ts";
import { inThreadAdvise, type AdviseReplies } from "../core/render/layout/advice.ts";
import { adviseBudget } from "./refusals.ts";
import type { Job, SmokeRequest, Store } from "../store/types.ts";
import type { AppHost, BotOctokit } from "./host.ts";
import { requestSmokeAfterCrashes, sweepStuck } from "./crash-recovery.ts";
import { deliveryRunner, type DeliveryJob, type HandlerTable } from "./handlers.ts";
import { replier } from "./writes.ts";
import { repoInstallations } from "./installations.ts";
import { installedWorkflowStatus, workflowStatusNote } from "./workflow-file.ts";
import { readRepoConfig, reportReviewNotDone, reviewPullRequest, type PullTarget, type ReviewDeps } from "./review.ts";
import { CHECK_NAME } from "./routes.ts";
import {
  cancelSmoke,
  expireQueued,
  followRun,
  smokeReply,
  statusText,
  type RepoRef,
  type Requester,
  type SmokeDeps,
  type SmokeOrigin,
  type SmokeOutcome,
} from "./smoke.ts";
import type { SmokeCommand } from "../core/commands/index.ts";
import type { WorkflowStatus } from "../core/smoke/workflow.ts";

export interface AppDeps {
  /** The analysis (src/core/analyze/analyzer.ts): in this thread, or on the Node server's worker thread. */
  analyze: Analyzer;
  /** Fixed bot login (`slug[bot]`); looked up once through GET /app when absent. */
  botLogin?: string;
  /** Called after each review, for tests and metrics. */
  onReviewed?: (outcome: Awaited<ReturnType<typeof reviewPullRequest>>) => void;
  /** Idempotency keys, smoke requests, audit log. */
  store: Store;
  /** Smoke-dispatch tuning for tests, and who else hears about a run's progress (Slack). */
  smoke?: Pick<SmokeDeps, "runLookup" | "now" | "notify" | "maxArtifactBytes" | "artifactCaps" | "judgeArtifact" | "maxActive">;
  /** Renders `/hcp advise` replies: in this thread by default, on a worker thread on the Node server. */
  advise?: AdviseReplies;
}

/** The app as a host runs it. */
export interface GitHubApp {
  /** Runs a delivery's job (kind `github`): the handler of the route its intake recorded. */
  runDelivery(job: Pick<Job, "id" | "payload">, lease: JobLease): Promise<void>;
  /** What other front doors (Slack) act on GitHub through. */
  gateway: GitHubGateway;
  /** The periodic sweep of queued smoke runs (queue timeouts, requests a crash left half-made); the host owns the timer. */
  sweep(): Promise<void>;
}

/** What another front door (Slack) may do on GitHub, with the same checks as a PR comment. */
export interface GitHubGateway {
  /** The repository's installation, default branch and `.github/hcp-bot.yml`; undefined when the app is not installed there. */
  /** With a job's lease, every write of the Octokit it hands out is fenced by it (src/jobs/fence.ts). */
  repository(owner: string, repo: string, lease?: JobLease): Promise<{ octokit: BotOctokit; ref: RepoRef; config: ConfigResult } | undefined>;
  /** `lease`: the lease of the job the command runs in; its writes (the check run, the dispatch) are fenced by it. */
  requestSmoke(owner: string, repo: string, pr: number, requester: Requester, command: SmokeCommand, origin: SmokeOrigin, lease?: JobLease): Promise<SmokeOutcome | { kind: "not-installed" } | { kind: "bad-config"; reason: string }>;
  cancelSmoke(owner: string, repo: string, pr: number, requester: Requester, lease?: JobLease): Promise<string>;
  /** The latest smoke request and the latest "HCP review" check run of the PR. */
  status(owner: string, repo: string, pr: number): Promise<{ smoke?: SmokeRequest; review?: { conclusion: string | null; title: string | null; url: string | null }; headSha?: string; workflow?: WorkflowStatus } | undefined>;
}

// A comment id (or a button's delivery id) is claimed for a month: long enough that no
// redelivery can dispatch twice.
const COMMENT_CLAIM_SECONDS = 30 * 24 * 60 * 60;

function loginResolver(app: AppHost, fixed: string | undefined): (octokit: BotOctokit) => Promise<string> {
  let cached: Promise<string> | undefined = fixed ? Promise.resolve(fixed) : undefined;
  return async () => {
    cached ??= (async () => {
      const appOctokit = await app.auth();
      const { data } = await appOctokit.rest.apps.getAuthenticated();
      return `${data?.slug ?? "hcp-bot"}[bot]`;
    })().catch((error: unknown) => {
      cached = undefined;
      throw error;
    });
    return cached;
  };
}

/** What a review needs to know about a pull request, from a webhook's or the API's PR object. */
function pullTarget(
  repository: { owner: { login: string }; name: string; default_branch: string },
  pr: { number: number; head: { sha: string }; draft?: boolean | null; html_url: string },
): PullTarget {
  return {
    owner: repository.owner.login,
    repo: repository.name,
    number: pr.number,
    headSha: pr.head.sha,
    draft: pr.draft ?? false,
    defaultBranch: repository.default_branch,
    htmlUrl: pr.html_url,
  };
}

/** What the helpers below use of a delivery: its id and the Octokit of its job. */
interface Delivery {
  id: string;
  octokit: BotOctokit;
}

/** What every handler shares, composed once by createApp. */
interface AppCore {
  deps: AppDeps;
  host: AppHost;
  reviewDeps: ReviewDeps;
  smokeDeps: SmokeDeps;
}

export function createApp(deps: AppDeps, host: AppHost): GitHubApp {
  const reviewDeps: ReviewDeps = { analyze: deps.analyze, botLogin: loginResolver(host, deps.botLogin), log: host.log };
  const smokeDeps: SmokeDeps = { store: deps.store, analyze: deps.analyze, log: host.log, botLogin: reviewDeps.botLogin, ...deps.smoke };
  const core: AppCore = { deps, host, reviewDeps, smokeDeps };
  return { runDelivery: deliveryRunner(handlerTable(core), host), gateway: createGateway(core), sweep: () => sweep(core) };
}

/**
 * Runs work that may start a GPU run at most once per key, across redeliveries and restarts
 * (the job's id holds the claim, so the same job run again after an interruption may take it
 * again). When it fails (GitHub down mid-way) the key is given up, so GitHub's redelivery or
 * the user's retry runs it; a run already dispatched is then found by the one-run-per-PR rule.
 */
async function claimed(core: AppCore, job: DeliveryJob, key: string, work: () => Promise<void>): Promise<void> {
  if (!(await core.deps.store.claim(key, COMMENT_CLAIM_SECONDS, job.id))) return;
  try {
    await work();
  } catch (error) {
    await core.deps.store.release(key).catch((e: unknown) => core.host.log.warn({ err: e, key }, "could not release a claim"));
    throw error;
  }
}

/**
 * A review that GitHub kept failing leaves a check run saying so (best effort: one try), then
 * fails, so the job fails: its retry, a redelivery, the next push or the check's Re-run runs it.
 */
async function review(core: AppCore, octokit: BotOctokit, target: PullTarget): Promise<void> {
  let outcome: Awaited<ReturnType<typeof reviewPullRequest>>;
  try {
    outcome = await reviewPullRequest(octokit, target, core.reviewDeps);
  } catch (error) {
    await reportReviewNotDone(octokit, target, error, core.host.log);
    throw error;
  }
  core.deps.onReviewed?.(outcome);
}

/** Each route's work (the intake routed the delivery with src/github/routes.ts: its fields are there). */
function handlerTable(core: AppCore): HandlerTable {
  const { reviewDeps, smokeDeps } = core;
  return {
    review: async ({ payload }, octokit) => review(core, octokit, { ...pullTarget(payload.repository, payload.pull_request), opened: payload.action === "opened" }),

    rerequest: async ({ payload }, octokit) => {
      const { check_run: run, repository } = payload;
      for (const ref of run.pull_requests) {
        const { data: pr } = await octokit.rest.pulls.get({ owner: repository.owner.login, repo: repository.name, pull_number: ref.number });
        if (pr.head.sha !== run.head_sha || pr.state !== "open") continue;
        await review(core, octokit, pullTarget(repository, pr));
      }
    },

    comment: async (delivery, octokit, job) => {
      const { comment, issue, repository, sender } = delivery.payload;
      const r: RepoRef = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch, installationId: delivery.payload.installation!.id };
      const context: Delivery = { id: delivery.id, octokit };
      await claimed(core, job, `comment:${comment.id}`, () => runCommands(core, context, r, issue.number, { login: sender.login, isBot: false }, { id: comment.id, createdAt: new Date(comment.created_at) }, comment.body));
    },

    button: async (delivery, octokit, job) => {
      const { check_run: run, repository, sender } = delivery.payload;
      const pr = run.pull_requests[0]!;
      const r: RepoRef = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch, installationId: delivery.payload.installation!.id };
      await claimed(core, job, `delivery:${delivery.id}`, async () => {
        const configResult = await readRepoConfig(octokit, r);
        const say = replier(octokit, r, pr.number, `delivery:${delivery.id}`, () => reviewDeps.botLogin(octokit));
        if (!configResult.ok) {
          await say(`hcp-bot cannot start a smoke run here: ${untrusted(configResult.problem)}`);
          return;
        }
        const command: Command = { kind: "smoke", overrides: [], dryRun: false };
        const outcome = await requestSmokeAfterCrashes(octokit, r, configResult.config.smoke.workflow, [octokit, r, configResult.config, pr.number, { login: sender.login, isBot: false }, command, { source: "check-run-button", deliveryId: delivery.id }, smokeDeps], smokeDeps);
        const text = smokeReply(outcome, sender.login);
        if (text) await say(text);
      });
    },

    run: async ({ payload }, octokit) => {
      const { workflow_run: run, repository } = payload;
      const r = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch };
      const smokeWorkflow = async () => {
        const config = await readRepoConfig(octokit, r);
        return config.ok ? config.config.smoke.workflow : defaultRepoConfig().smoke.workflow;
      };
      await followRun(octokit, { ...r, smokeWorkflow }, run, smokeDeps);
    },

    job: async ({ payload }, octokit) => {
      const { workflow_job: job, repository } = payload;
      await followRun(octokit, { owner: repository.owner.login, repo: repository.name }, { id: job.run_id, status: "in_progress", conclusion: null, html_url: job.html_url ?? "" }, smokeDeps);
    },
  };
}

async function runCommands(core: AppCore, context: Delivery, r: RepoRef, pr: number, requester: { login: string; isBot: boolean }, comment: { id: number; createdAt: Date }, body: string): Promise<void> {
  const octokit = context.octokit;
  const say = replier(octokit, r, pr, `comment:${comment.id}`, () => core.reviewDeps.botLogin(octokit));
  const configResult = await readRepoConfig(octokit, r);
  if (!configResult.ok) {
    await say(`hcp-bot cannot act on commands here: ${untrusted(configResult.problem)}`);
    return;
  }
  const config = configResult.config;
  for (const parsed of parseCommentCommands(body, { allowedKeys: config.smoke.allowed_keys })) {
    if (!parsed.ok) {
      await say(`@${untrusted(requester.login)} line ${parsed.line}: ${untrusted(parsed.error)}`);
      continue;
    }
    await runCommand(core, context, r, config, pr, requester, comment, parsed.command, say);
  }
}

async function runCommand(
  core: AppCore,
  context: Delivery,
  r: RepoRef,
  config: RepoConfig,
  pr: number,
  requester: { login: string; isBot: boolean },
  comment: { id: number; createdAt: Date },
  command: Command,
  say: (text: string) => Promise<unknown>,
): Promise<void> {
  const { deps, smokeDeps } = core;
  const octokit = context.octokit;
  switch (command.kind) {
    case "help":
      await say(helpText({ surface: "github", smoke: config.smoke }));
      return;
    case "advise":
      // Anyone who may comment may ask (nothing is read or run), within ADVISE_LIMITS; past them, silence.
      if (!(await adviseBudget(deps.store, { installationId: r.installationId, login: requester.login, repo: `${r.owner}/${r.repo}`, pr }))) return;
      await say(await (deps.advise ?? inThreadAdvise).markdown(command));
      return;
    case "smoke": {
      const outcome = await requestSmokeAfterCrashes(octokit, r, config.smoke.workflow, [octokit, r, config, pr, requester, command, { source: "github-comment", deliveryId: context.id, commentId: comment.id, commentCreatedAt: comment.createdAt }, smokeDeps], smokeDeps);
      const text = smokeReply(outcome, requester.login);
      if (text) await say(text);
      return;
    }
    case "cancel": {
      const text = await cancelSmoke(octokit, r, config, pr, requester, smokeDeps);
      if (text) await say(text); // empty: a refusal past REFUSAL_LIMITS
      return;
    }
    case "status":
      // The installed workflow's version is said too (a failed read leaves it out; the status still answers).
      await say([statusText(await latestSmoke(deps.store, `${r.owner}/${r.repo}`, pr)), await workflowStatusNote(octokit, r, config).catch(() => null)].filter(Boolean).join("\n\n"));
      return;
    case "check": {
      if (command.input.form === "pr") {
        const { data } = await octokit.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number: pr });
        await review(core, octokit, pullTarget({ owner: { login: r.owner }, name: r.repo, default_branch: r.defaultBranch }, data));
        return;
      }
      const source = checkSource(command.input);
      if (!source) return;
      const report = await deps.analyze([source], { gpusPerNode: config.gpus_per_node });
      await say(
        report.findings.length
          ? `hcp-bot checked that configuration:\n\n${findingsTable(report.findings)}`
          : "hcp-bot checked that configuration: no HCP problems found (settings the recipe itself sets were not visible to this check).",
      );
      return;
    }
  }
}

async function repoOf(octokit: BotOctokit, request: SmokeRequest): Promise<{ ref: RepoRef; config: RepoConfig }> {
  const [owner, repo] = request.repo.split("/") as [string, string];
  const { data } = await octokit.rest.repos.get({ owner, repo });
  const result = await readRepoConfig(octokit, { owner, repo, defaultBranch: data.default_branch });
  return { ref: { owner, repo, defaultBranch: data.default_branch, installationId: request.installationId! }, config: result.ok ? result.config : defaultRepoConfig() };
}

async function sweep(core: AppCore): Promise<void> {
  const auth = (installationId: number) => core.host.auth(installationId);
  await expireQueued(auth, async (octokit, request) => (await repoOf(octokit, request)).config, core.smokeDeps);
  // Requests a crash left half-made (src/github/crash-recovery.ts).
  await sweepStuck(
    auth,
    async (octokit, request) => {
      const { ref, config } = await repoOf(octokit, request);
      return { ref, workflow: config.smoke.workflow };
    },
    core.smokeDeps,
  );
}

async function latestSmoke(store: Store, repoFull: string, pr: number): Promise<SmokeRequest | undefined> {
  const log = await store.auditLog({ repo: repoFull, limit: 200 });
  const id = log.find((a) => a.pr === pr && a.requestId)?.requestId;
  return id ? store.getSmokeRequest(id) : undefined;
}

function createGateway(core: AppCore): GitHubGateway {
  const { host, smokeDeps } = core;
  const installations = repoInstallations(async (owner, repo) => {
    const appOctokit = await host.auth();
    try {
      return (await appOctokit.rest.apps.getRepoInstallation({ owner, repo })).data.id;
    } catch (error) {
      if ((error as { status?: number }).status === 404) return undefined;
      throw error;
    }
  });

  const gateway: GitHubGateway = {
    async repository(owner, repo, lease) {
      const installationId = await installations.get(owner, repo);
      if (installationId === undefined) return undefined;
      try {
        const octokit = await host.auth(installationId);
        // A client made for this call (Probot and @octokit/app make one per auth), so the fence stays with it.
        if (lease) fenceWrites(octokit as unknown as Hookable, lease);
        const { data } = await octokit.rest.repos.get({ owner, repo });
        const ref: RepoRef = { owner, repo, defaultBranch: data.default_branch, installationId };
        return { octokit, ref, config: await readRepoConfig(octokit, ref) };
      } catch (error) {
        // The App may have been uninstalled or the repository moved since the lookup was kept.
        installations.forget(owner, repo);
        throw error;
      }
    },
    async requestSmoke(owner, repo, pr, requester, command, origin, lease) {
      const found = await gateway.repository(owner, repo, lease);
      if (!found) return { kind: "not-installed" };
      if (!found.config.ok) return { kind: "bad-config", reason: found.config.problem };
      return requestSmokeAfterCrashes(found.octokit, found.ref, found.config.config.smoke.workflow, [found.octokit, found.ref, found.config.config, pr, requester, command, origin, smokeDeps], smokeDeps);
    },
    async cancelSmoke(owner, repo, pr, requester, lease) {
      const found = await gateway.repository(owner, repo, lease);
      if (!found) return `hcp-bot is not installed on ${owner}/${repo}.`;
      if (!found.config.ok) return found.config.problem;
      return cancelSmoke(found.octokit, found.ref, found.config.config, pr, requester, smokeDeps);
    },
    async status(owner, repo, pr) {
      const found = await gateway.repository(owner, repo);
      if (!found) return undefined;
      const { data: pull } = await found.octokit.rest.pulls.get({ owner, repo, pull_number: pr });
      const { data: checks } = await found.octokit.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: CHECK_NAME, per_page: 1 });
      const run = checks.check_runs[0];
      // As on GitHub's /hcp status: a failed read leaves the workflow out, the status still answers.
      const workflow = found.config.ok ? await installedWorkflowStatus(found.octokit, found.ref, found.config.config).catch(() => undefined) : undefined;
      return {
        smoke: await latestSmoke(core.deps.store, `${owner}/${repo}`, pr),
        headSha: pull.head.sha,
        ...(workflow ? { workflow } : {}),
        ...(run ? { review: { conclusion: run.conclusion, title: run.output.title ?? null, url: run.html_url } } : {}),
      };
    },
  };
  return gateway;
}
