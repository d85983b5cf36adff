// The smoke service's words: what a front door (a PR comment, the check run's button, Slack)
// hands it and gets back, and what its modules share. Slack imports these types only; the
// service itself reaches Slack by construction (src/github/smoke/service.ts).
import type { Analyzer } from "../../core/analyze/analyzer.ts";
import type { SmokeCommand, SmokePlan } from "../../core/commands/index.ts";
import type { ConfigResult, RepoConfig } from "../../core/config/repo-config.ts";
import type { Finding } from "../../core/model/finding.ts";
import type { SmokeState } from "../../core/render/smoke.ts";
import type { ArtifactCaps } from "../../core/smoke/artifact.ts";
import type { WorkflowStatus } from "../../core/smoke/workflow.ts";
import type { JobLease } from "../../jobs/fence.ts";
import type { SmokeRequest, Store } from "../../store/types.ts";
import type { BotOctokit } from "../host.ts";
import type { ArtifactJudge } from "./verdict.ts";

export interface RepoRef {
  owner: string;
  repo: string;
  defaultBranch: string;
  installationId: number;
}

export interface Requester {
  login: string;
  isBot: boolean;
  slackUser?: string;
}

export interface SmokeOrigin {
  source: "github-comment" | "slack" | "check-run-button";
  deliveryId: string | null;
  commentId?: number;
  /** When the comment was written (GitHub's time): the head must not have moved since. */
  commentCreatedAt?: Date;
}

export type SmokeOutcome =
  | { kind: "dispatched"; request: SmokeRequest }
  | { kind: "dry-run"; plan: SmokePlan; sha: string; workflowNote?: string }
  /** silent: a refusal past REFUSAL_LIMITS, which is neither answered nor recorded. */
  | { kind: "refused"; reason: string; findings?: Finding[]; silent?: true }
  | { kind: "failed"; reason: string; request?: SmokeRequest };

/**
 * One `/hcp smoke`, asked in a repository whose settings were read: what was once requestSmoke's
 * eight positional parameters (and the tuple crash recovery took apart by position). It never
 * leaves the process (it holds an Octokit): a durable job stores the delivery or the Slack
 * command it came from, and this is made again from that when the job runs.
 */
export interface SmokeAsk {
  octokit: BotOctokit;
  repo: RepoRef;
  config: RepoConfig;
  pr: number;
  requester: Requester;
  command: SmokeCommand;
  origin: SmokeOrigin;
}

/** `/hcp cancel` in a repository whose settings were read. */
export type CancelAsk = Pick<SmokeAsk, "octokit" | "repo" | "config" | "pr" | "requester">;

/** Told of every state change of a dispatched request; a failure is logged, never allowed to stop the GitHub side. */
export type SmokeListener = (request: SmokeRequest, state: SmokeState) => Promise<void>;

/** Tuning for tests and the operator's settings. */
export interface SmokeTuning {
  now?: () => Date;
  /** How long to look for the run a dispatch created when GitHub does not return its id. */
  runLookup?: { attempts: number; delayMs: number };
  /** Largest log artifact (compressed) the bot downloads; default 256 MiB. */
  maxArtifactBytes?: number;
  /** How far the artifact's files may inflate (per file, in all); default DEFAULT_ARTIFACT_CAPS. */
  artifactCaps?: ArtifactCaps;
  /** Where an artifact is judged: the Node server's worker thread; by default the calling thread (the edge). */
  judgeArtifact?: ArtifactJudge;
  /** The operator's cap on active runs across every installation (HCP_SMOKE_MAX_ACTIVE); none when unset. */
  maxActive?: number;
}

/** What the smoke modules share (the service builds it once). */
export interface SmokeDeps extends SmokeTuning {
  store: Store;
  analyze: Analyzer;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  /** Everyone told of a request's state changes (src/github/smoke/story.ts tells them in order). */
  notify?: readonly SmokeListener[];
  /** The app's login (`slug[bot]`): only runs it started can be bound by their title. */
  botLogin?: (octokit: BotOctokit) => Promise<string>;
}

/** A repository named by another front door (Slack): its installation's Octokit, its ref and settings. */
export interface FoundRepository {
  octokit: BotOctokit;
  ref: RepoRef;
  config: ConfigResult;
}

/** A PR's latest smoke request and "HCP review" check run, for Slack's `/hcp status`. */
export interface SmokeStatus {
  smoke?: SmokeRequest;
  review?: { conclusion: string | null; title: string | null; url: string | null };
  headSha?: string;
  workflow?: WorkflowStatus;
}

/** A command that names its repository and pull request (Slack's), run in the job that holds `lease`. */
export interface NamedTarget {
  owner: string;
  repo: string;
  pr: number;
  requester: Requester;
  /** Every write of the Octokit the command uses is fenced by the lease (src/jobs/fence.ts). */
  lease?: JobLease;
}

export type NamedSmokeOutcome = SmokeOutcome | { kind: "not-installed" } | { kind: "bad-config"; reason: string };

/** The repository of a workflow_run / workflow_job event, as its payload names it. */
export interface EventRepository {
  owner: { login: string };
  name: string;
  default_branch: string;
}

export interface WorkflowRunEvent {
  id: number;
  status: string | null;
  conclusion: string | null;
  display_title?: string | null;
  name?: string | null;
  html_url: string;
  /** What started the run: only "workflow_dispatch" runs can be ours. */
  event?: string;
  /** The branch the run's workflow came from: ours are dispatched on the default branch. */
  head_branch?: string | null;
  /** The workflow file, `.github/workflows/hcp-smoke.yml` (sometimes with `@ref`). */
  path?: string;
}

/**
 * The repository of a workflow_run / workflow_job event: its default branch when the event
 * says, and (read only when a run must be matched by title) the smoke workflow's file name.
 */
export type RunRepo = { owner: string; repo: string; defaultBranch?: string; smokeWorkflow?: () => Promise<string> };

/**
 * The `/hcp smoke` service, made once per process (createSmokeService) and handed to the GitHub
 * handlers and to Slack. Methods taking an Octokit act in a delivery's repository; the `Named`
 * ones find the repository's installation first (a Slack command names it).
 */
export interface SmokeService {
  /** The app's login (`slug[bot]`), looked up once; the reviews use it too. */
  botLogin(octokit: BotOctokit): Promise<string>;
  /** `/hcp smoke` after the PR's half-made requests are resolved (src/github/smoke/recovery.ts). */
  request(ask: SmokeAsk): Promise<SmokeOutcome>;
  /** `/hcp cancel`; empty: a refusal past REFUSAL_LIMITS (no reply). */
  cancel(ask: CancelAsk): Promise<string>;
  /** GitHub's `/hcp status` reply: the latest request and the installed workflow's version. */
  statusReply(octokit: BotOctokit, ref: RepoRef, config: RepoConfig, pr: number): Promise<string>;
  /** The check run's "Run smoke test" button: a plain `/hcp smoke` by whoever pressed it, answered on the PR. */
  button(press: { octokit: BotOctokit; ref: RepoRef; pr: number; login: string; deliveryId: string }): Promise<void>;
  /** workflow_run events: follow the run, and judge it when it completes. */
  followRun(octokit: BotOctokit, repository: EventRepository, run: WorkflowRunEvent): Promise<void>;
  /** workflow_job events: a job that started means its run is in progress. */
  followJob(octokit: BotOctokit, repository: EventRepository, job: { run_id: number; html_url?: string | null }): Promise<void>;
  /** The periodic sweep: queue timeouts, then requests a crash left half-made. */
  sweep(): Promise<void>;
  /** The repository's installation, default branch and settings; undefined when the app is not installed there. */
  repository(owner: string, repo: string, lease?: JobLease): Promise<FoundRepository | undefined>;
  /** A repository's `.github/hcp-bot.yml` on its default branch (Slack reads the org's `.github` repository's). */
  readConfig(octokit: BotOctokit, ref: Pick<RepoRef, "owner" | "repo" | "defaultBranch">): Promise<ConfigResult>;
  /** The requester's role; undefined when GitHub could not say (the caller fails closed). */
  role(octokit: BotOctokit, ref: Pick<RepoRef, "owner" | "repo">, login: string): Promise<string | undefined>;
  requestNamed(target: NamedTarget & { command: SmokeCommand; origin: SmokeOrigin }): Promise<NamedSmokeOutcome>;
  cancelNamed(target: NamedTarget): Promise<string>;
  statusNamed(owner: string, repo: string, pr: number): Promise<SmokeStatus | undefined>;
}
