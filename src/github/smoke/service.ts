// The smoke service: made once per process with its store, analysis, GitHub access and the
// listeners told of every state change, then handed to the GitHub handlers (src/github/app.ts)
// and to Slack (src/slack/commands.ts) by construction. The front doors differ only in how
// they name the repository: a delivery arrives in one (with its installation's Octokit), a
// Slack command names it (requestNamed and friends find the installation first).
import type { Analyzer } from "../../core/analyze/analyzer.ts";
import type { SmokeCommand } from "../../core/commands/index.ts";
import { defaultRepoConfig, type RepoConfig } from "../../core/config/repo-config.ts";
import { untrusted } from "../../core/render/markdown.ts";
import { fenceWrites, type Hookable, type JobLease } from "../../jobs/fence.ts";
import type { SmokeRequest, Store } from "../../store/types.ts";
import type { BotOctokit } from "../host.ts";
import { repoInstallations } from "../installations.ts";
import { readRepoConfig } from "../review.ts";
import { CHECK_NAME } from "../routes.ts";
import { replier } from "../writes.ts";
import { cancelSmoke } from "./cancel.ts";
import { expireQueued, followRun } from "./follow.ts";
import { requestSmokeAfterCrashes, sweepStuck } from "./recovery.ts";
import { repositoryRole } from "./request.ts";
import { smokeReply, statusText } from "./story.ts";
import type { FoundRepository, RepoRef, SmokeDeps, SmokeListener, SmokeService, SmokeTuning } from "./types.ts";
import { installedWorkflowStatus, workflowStatusNote } from "./workflow-file.ts";

/** The GitHub App as the service reaches it: the app itself (JWT) without an id, an installation with one. */
export interface SmokeGitHub {
  auth(installationId?: number): Promise<BotOctokit>;
}

export interface SmokeServiceOptions {
  store: Store;
  /** The analysis of the pre-flight (src/core/analyze/analyzer.ts): in this thread, or on the Node server's worker thread. */
  analyze: Analyzer;
  github: SmokeGitHub;
  log: SmokeDeps["log"];
  /** Fixed bot login (`slug[bot]`); looked up once through GET /app when absent. */
  botLogin?: string;
  /** Who hears of every state change, in this order (the metrics, Slack's channel messages); a failing one is logged. */
  notify?: ReadonlyArray<SmokeListener | undefined>;
  tuning?: SmokeTuning;
}

/** The app's login, looked up once (a failed lookup is tried again next time). */
function loginResolver(github: SmokeGitHub, fixed: string | undefined): (octokit: BotOctokit) => Promise<string> {
  let cached: Promise<string> | undefined = fixed ? Promise.resolve(fixed) : undefined;
  return async () => {
    cached ??= (async () => {
      const appOctokit = await github.auth();
      const { data } = await appOctokit.rest.apps.getAuthenticated();
      return `${data?.slug ?? "hcp-bot"}[bot]`;
    })().catch((error: unknown) => {
      cached = undefined;
      throw error;
    });
    return cached;
  };
}

export function createSmokeService(o: SmokeServiceOptions): SmokeService {
  const botLogin = loginResolver(o.github, o.botLogin);
  const deps: SmokeDeps = {
    ...o.tuning,
    store: o.store,
    analyze: o.analyze,
    log: o.log,
    botLogin,
    notify: (o.notify ?? []).filter((l): l is SmokeListener => l !== undefined),
  };
  const repositories = namedRepositories(o.github);

  const latestSmoke = (repoFull: string, pr: number) => latestRequest(o.store, repoFull, pr);

  const service: SmokeService = {
    botLogin,
    request: (ask) => requestSmokeAfterCrashes(ask, deps),
    cancel: (ask) => cancelSmoke(ask, deps),
    async statusReply(octokit, ref, config, pr) {
      // The installed workflow's version is said too (a failed read leaves it out; the status still answers).
      return [statusText(await latestSmoke(`${ref.owner}/${ref.repo}`, pr)), await workflowStatusNote(octokit, ref, config).catch(() => null)].filter(Boolean).join("\n\n");
    },
    async button({ octokit, ref, pr, login, deliveryId }) {
      const configResult = await readRepoConfig(octokit, ref);
      const say = replier(octokit, ref, pr, `delivery:${deliveryId}`, () => botLogin(octokit));
      if (!configResult.ok) {
        await say(`hcp-bot cannot start a smoke run here: ${untrusted(configResult.problem)}`);
        return;
      }
      const command: SmokeCommand = { kind: "smoke", overrides: [], dryRun: false };
      const outcome = await service.request({ octokit, repo: ref, config: configResult.config, pr, requester: { login, isBot: false }, command, origin: { source: "check-run-button", deliveryId } });
      const text = smokeReply(outcome, login);
      if (text) await say(text);
    },
    async followRun(octokit, repository, run) {
      const r = { owner: repository.owner.login, repo: repository.name, defaultBranch: repository.default_branch };
      const smokeWorkflow = async () => {
        const config = await readRepoConfig(octokit, r);
        return config.ok ? config.config.smoke.workflow : defaultRepoConfig().smoke.workflow;
      };
      await followRun(octokit, { ...r, smokeWorkflow }, run, deps);
    },
    async followJob(octokit, repository, job) {
      await followRun(octokit, { owner: repository.owner.login, repo: repository.name }, { id: job.run_id, status: "in_progress", conclusion: null, html_url: job.html_url ?? "" }, deps);
    },
    async sweep() {
      const octokitFor = (installationId: number) => o.github.auth(installationId);
      await expireQueued(octokitFor, async (octokit, request) => (await repoOf(octokit, request)).config, deps);
      // Requests a crash left half-made (src/github/smoke/recovery.ts).
      await sweepStuck(
        octokitFor,
        async (octokit, request) => {
          const { ref, config } = await repoOf(octokit, request);
          return { ref, workflow: config.smoke.workflow };
        },
        deps,
      );
    },
    repository: (owner, repo, lease) => repositories.find(owner, repo, lease),
    readConfig: (octokit, ref) => readRepoConfig(octokit, ref),
    role: (octokit, ref, login) => repositoryRole(octokit, ref, login),
    async requestNamed({ owner, repo, pr, requester, command, origin, lease }) {
      const found = await repositories.find(owner, repo, lease);
      if (!found) return { kind: "not-installed" };
      if (!found.config.ok) return { kind: "bad-config", reason: found.config.problem };
      return service.request({ octokit: found.octokit, repo: found.ref, config: found.config.config, pr, requester, command, origin });
    },
    async cancelNamed({ owner, repo, pr, requester, lease }) {
      const found = await repositories.find(owner, repo, lease);
      if (!found) return `hcp-bot is not installed on ${owner}/${repo}.`;
      if (!found.config.ok) return found.config.problem;
      return service.cancel({ octokit: found.octokit, repo: found.ref, config: found.config.config, pr, requester });
    },
    async statusNamed(owner, repo, pr) {
      const found = await repositories.find(owner, repo);
      if (!found) return undefined;
      const { data: pull } = await found.octokit.rest.pulls.get({ owner, repo, pull_number: pr });
      const { data: checks } = await found.octokit.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: CHECK_NAME, per_page: 1 });
      const run = checks.check_runs[0];
      // As on GitHub's /hcp status: a failed read leaves the workflow out, the status still answers.
      const workflow = found.config.ok ? await installedWorkflowStatus(found.octokit, found.ref, found.config.config).catch(() => undefined) : undefined;
      return {
        smoke: await latestSmoke(`${owner}/${repo}`, pr),
        headSha: pull.head.sha,
        ...(workflow ? { workflow } : {}),
        ...(run ? { review: { conclusion: run.conclusion, title: run.output.title ?? null, url: run.html_url } } : {}),
      };
    },
  };
  return service;
}

/** The PR's latest smoke request, by the audit log (which records refusals too). */
async function latestRequest(store: Store, repoFull: string, pr: number): Promise<SmokeRequest | undefined> {
  const log = await store.auditLog({ repo: repoFull, limit: 200 });
  const id = log.find((a) => a.pr === pr && a.requestId)?.requestId;
  return id ? store.getSmokeRequest(id) : undefined;
}

/** A stored request's repository as GitHub has it now, with its settings (the defaults when they cannot be read). */
async function repoOf(octokit: BotOctokit, request: SmokeRequest): Promise<{ ref: RepoRef; config: RepoConfig }> {
  const [owner, repo] = request.repo.split("/") as [string, string];
  const { data } = await octokit.rest.repos.get({ owner, repo });
  const result = await readRepoConfig(octokit, { owner, repo, defaultBranch: data.default_branch });
  return { ref: { owner, repo, defaultBranch: data.default_branch, installationId: request.installationId! }, config: result.ok ? result.config : defaultRepoConfig() };
}

/** Repositories named by a command (Slack's): their installation (kept a minute), Octokit, default branch and settings. */
function namedRepositories(github: SmokeGitHub): { find(owner: string, repo: string, lease?: JobLease): Promise<FoundRepository | undefined> } {
  const installations = repoInstallations(async (owner, repo) => {
    const appOctokit = await github.auth();
    try {
      return (await appOctokit.rest.apps.getRepoInstallation({ owner, repo })).data.id;
    } catch (error) {
      if ((error as { status?: number }).status === 404) return undefined;
      throw error;
    }
  });
  return {
    async find(owner, repo, lease) {
      const installationId = await installations.get(owner, repo);
      if (installationId === undefined) return undefined;
      try {
        const octokit = await github.auth(installationId);
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
  };
}
