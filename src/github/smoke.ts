// `/hcp smoke`: authorize the person who asks, pin the commit, refuse configurations that
// cannot work (pre-flight), dispatch the GPU workflow, and turn the finished run's log
// into a verdict on the check run and the PR comment. Written against Octokit and
// webhook payloads; the decisions live in the pure core (policy, grammar, verdict).
import type { BotOctokit } from "./host.ts";
import type { Analyzer } from "../core/analyze/analyzer.ts";
import { compileGlobs } from "../core/analyze/classify.ts";
import { helpText, resolveSmokeRequest, type SmokeCommand, type SmokePlan } from "../core/commands/index.ts";
import { defaultRepoConfig, type RepoConfig } from "../core/config/repo-config.ts";
import type { Finding } from "../core/model/finding.ts";
import { findingsTable, untrusted } from "../core/render/markdown.ts";
import { conclusionForVerdict, planMarkdown, planOfRequest, SMOKE_CHECK_NAME, smokeCommentBody, smokeMarker, stateHeadline, type SmokeState, type SmokeView } from "../core/render/smoke.ts";
import { decideSmoke, effectiveRole, roleRank } from "../core/smoke/policy.ts";
import { defaultBranchSha, externalId, whyNotOurRun, type BindContext } from "./run-binding.ts";
import { pinHead } from "./pin.ts";
import { verdictForRun, type ArtifactJudge } from "./run-verdict.ts";
import type { ArtifactCaps } from "../core/smoke/artifact.ts";
import { applyComparison } from "../core/compare/index.ts";
import { commentOnce, createOnce } from "./writes.ts";
import { readBlobs, readImportedModules } from "./blobs.ts";
import { fitInstalledWorkflow } from "./workflow-file.ts";
import { smokeInputs } from "../core/smoke/workflow.ts";
import { refusalBudget } from "./refusals.ts";
import type { SmokeRequest, Store } from "../store/types.ts";

type Octokit = BotOctokit;

export interface SmokeDeps {
  store: Store;
  analyze: Analyzer;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  now?: () => Date;
  /** How long to look for the run a dispatch created when GitHub does not return its id. */
  runLookup?: { attempts: number; delayMs: number };
  /**
   * Told of every state change of a dispatched request (Slack updates its message here).
   * A failure is logged, never allowed to stop the GitHub side.
   */
  notify?: (request: SmokeRequest, state: SmokeState) => Promise<void>;
  /** Largest log artifact (compressed) the bot downloads; default 256 MiB. */
  maxArtifactBytes?: number;
  /** How far the artifact's files may inflate (per file, in all); default DEFAULT_ARTIFACT_CAPS. */
  artifactCaps?: ArtifactCaps;
  /** Where an artifact is judged: the Node server's worker thread; by default the calling thread (the edge). */
  judgeArtifact?: ArtifactJudge;
  /** The operator's cap on active runs across every installation (HCP_SMOKE_MAX_ACTIVE); none when unset. */
  maxActive?: number;
  /** The app's login (`slug[bot]`): only runs it started can be bound by their title. */
  botLogin?: (octokit: Octokit) => Promise<string>;
}

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

// Pre-flight reads the recipe modules at the pinned SHA; these hold every recipe function.
const RECIPE_GLOBS = ["src/megatron/bridge/recipes/**/*.py", "src/megatron/bridge/perf_recipes/**/*.py", "src/megatron/bridge/diffusion/recipes/**/*.py"];
const PREFLIGHT_FILE = ".hcp-smoke/launch.sh";
/** The A/B run's reference leg, checked beside the run (compare=a2a: the heads must divide by CP). */
const PREFLIGHT_REFERENCE_FILE = ".hcp-smoke/reference.sh";
const DAY_MS = 24 * 60 * 60 * 1000;

const repoName = (r: { owner: string; repo: string }) => `${r.owner}/${r.repo}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The requester's role; undefined when GitHub could not say (the caller fails closed). */
export async function repositoryRole(octokit: Octokit, r: { owner: string; repo: string }, login: string): Promise<string | undefined> {
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner: r.owner, repo: r.repo, username: login });
    return effectiveRole(data as { permission: string; role_name?: string | null });
  } catch (error) {
    // 404: not a collaborator at all; anything else: we do not know.
    return (error as { status?: number }).status === 404 ? "none" : undefined;
  }
}

async function copyPrBotSha(octokit: Octokit, r: RepoRef, pr: number): Promise<string | null | undefined> {
  try {
    const { data } = await octokit.rest.git.getRef({ owner: r.owner, repo: r.repo, ref: `heads/pull-request/${pr}` });
    return data.object.sha;
  } catch (error) {
    return (error as { status?: number }).status === 404 ? null : undefined;
  }
}

interface TreeEntry {
  path?: string;
  type?: string;
}

/** Recipe modules at the SHA plus the requested launch line, analyzed together. */
async function preflight(octokit: Octokit, r: RepoRef, sha: string, plan: SmokePlan, analyze: Analyzer): Promise<{ findings: Finding[]; recipeFound: boolean; referenceFindings: Finding[] }> {
  const { data: tree } = await octokit.rest.git.getTree({ owner: r.owner, repo: r.repo, tree_sha: sha, recursive: "true" });
  const inRecipes = compileGlobs(RECIPE_GLOBS);
  const blobs = (tree.tree as TreeEntry[]).filter((e) => e.type === "blob" && e.path).map((e) => e.path!);
  const commit = { owner: r.owner, repo: r.repo, sha };
  const texts = await readBlobs(octokit, commit, blobs.filter((p) => inRecipes(p)));
  const files = [...texts].filter((e): e is [string, string] => e[1] !== null && e[1] !== "").map(([path, text]) => ({ path, text }));
  // Builders the recipes import from outside the recipe folders, read at the same SHA (the tree says which exist).
  const inTree = new Set(blobs);
  const library = await readImportedModules(octokit, commit, files, (p) => inTree.has(p));
  files.push({ path: PREFLIGHT_FILE, text: `#!/usr/bin/env bash\n${plan.launchLine()}\n` });
  if (plan.reference) files.push({ path: PREFLIGHT_REFERENCE_FILE, text: `#!/usr/bin/env bash\n${plan.reference.launchLine()}\n` });
  const report = await analyze(files, { library });
  const launch = report.units.find((u) => u.location.file === PREFLIGHT_FILE);
  const reference = report.units.find((u) => u.location.file === PREFLIGHT_REFERENCE_FILE);
  return {
    findings: report.findings.filter((f) => f.unitId === launch?.id),
    recipeFound: launch?.complete === true,
    referenceFindings: reference ? report.findings.filter((f) => f.unitId === reference.id) : [],
  };
}

function view(request: SmokeRequest, plan?: SmokeView["plan"]): SmokeView {
  return {
    requestId: request.id,
    requester: request.githubLogin,
    sha: request.sha,
    plan: plan ?? planOfRequest(request),
    runUrl: request.runUrl,
  };
}

/** The request's story comment, posted once (found again by its marker after an ambiguous failure). */
async function reply(octokit: Octokit, r: RepoRef, pr: number, body: string, requestId: string, deps: SmokeDeps): Promise<number> {
  return commentOnce(octokit, r, pr, body, smokeMarker(requestId), await botLoginOf(octokit, deps));
}

/**
 * Finds the run a dispatch created (when GitHub returned no id): by the request id in its
 * run-name, then only if GitHub's facts about it say it is ours (run-binding.ts).
 */
export async function findRun(octokit: Octokit, c: BindContext, request: SmokeRequest, lookup: { attempts: number; delayMs: number }) {
  for (let attempt = 0; attempt < lookup.attempts; attempt++) {
    const { data } = await octokit.rest.actions.listWorkflowRuns({ owner: c.owner, repo: c.repo, workflow_id: c.workflow, event: "workflow_dispatch", branch: c.defaultBranch, per_page: 30 });
    for (const run of data.workflow_runs.filter((w) => (w.display_title ?? w.name ?? "").includes(request.id))) {
      if ((await whyNotOurRun(octokit, c, request, run.id)) === null) return { id: run.id, url: run.html_url };
    }
    await sleep(lookup.delayMs);
  }
  return undefined;
}

async function botLoginOf(octokit: Octokit, deps: SmokeDeps): Promise<string> {
  return deps.botLogin ? deps.botLogin(octokit) : "hcp-bot[bot]";
}

async function dispatchWorkflow(octokit: Octokit, r: RepoRef, config: RepoConfig, request: SmokeRequest, plan: SmokePlan, checkRunId: number, declared: ReadonlySet<string>, deps: SmokeDeps) {
  const lookup = deps.runLookup ?? { attempts: 5, delayMs: 1000 };
  const bind = { ...r, workflow: config.smoke.workflow, botLogin: await botLoginOf(octokit, deps) };
  const bound = { ...request, checkRunId };
  const send = async (): Promise<{ id: number | null; url: string | null }> => {
    const response = await octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner: r.owner,
      repo: r.repo,
      workflow_id: config.smoke.workflow,
      // The workflow definition comes from the default branch; the code under test is the pinned SHA input.
      ref: r.defaultBranch,
      // Only the inputs the installed workflow declares (checked before anything was queued).
      inputs: Object.fromEntries(smokeInputs(plan, { sha: request.sha, pr: request.pr, requestId: request.id, checkRunId }).filter(([name]) => declared.has(name))),
      return_run_details: true,
      // `return_run_details` is in GitHub's API description but not yet in Octokit's typed route parameters.
    } as never);
    const details = (response as { status: number; data?: { workflow_run_id?: number; html_url?: string; run_url?: string } }).data;
    return details?.workflow_run_id ? { id: details.workflow_run_id, url: details.html_url ?? null } : { id: null, url: null };
  };
  // A dispatch is a GPU run: after a 5xx, the run it may have started is looked for first.
  const sent = await createOnce(send, () => findRun(octokit, bind, bound, lookup));
  if (sent.id) return sent;
  // The dispatch went through: a failing lookup must not mark the request failed while its run
  // goes on. Left unbound, the run binds by its run-name when its first event arrives.
  const found = await findRun(octokit, bind, bound, lookup).catch(() => undefined);
  return found ? { id: found.id, url: found.url } : { id: null, url: null };
}

export async function requestSmoke(
  octokit: Octokit,
  r: RepoRef,
  config: RepoConfig,
  prNumber: number,
  requester: Requester,
  cmd: SmokeCommand,
  origin: SmokeOrigin,
  deps: SmokeDeps,
): Promise<SmokeOutcome> {
  const now = deps.now ?? (() => new Date());
  const resolved = resolveSmokeRequest(cmd, config.smoke);
  if (!resolved.ok) return { kind: "refused", reason: resolved.error };
  const plan = resolved.plan;

  const { data: pr } = await octokit.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number: prNumber });
  // The commit is pinned now: only this SHA runs, whatever is pushed later (and, for a comment,
  // only if it was already the head when the comment was written: see pinHead below).
  const sha = pr.head.sha;
  const requesterRole = await repositoryRole(octokit, r, requester.login);
  const fork = pr.head.repo?.full_name !== pr.base.repo.full_name;
  const author = pr.user?.login ?? "";
  const authorRole = author === requester.login ? requesterRole : await repositoryRole(octokit, r, author);
  const untrustedHead = fork || authorRole === undefined || roleRank(authorRole) < roleRank("write");
  const mirrored = config.smoke.require_copy_pr_bot && untrustedHead ? await copyPrBotSha(octokit, r, prNumber) : undefined;
  const active = (await deps.store.activeForPr(repoName(r), prNumber))[0];
  const decision = decideSmoke({
    requester,
    requesterRole,
    requiredLevel: config.smoke.permission,
    pr: { number: prNumber, state: pr.state as "open" | "closed", draft: pr.draft ?? false, merged: pr.merged ?? false },
    untrustedHead,
    copyPrBot: { required: config.smoke.require_copy_pr_bot, mirroredSha: mirrored },
    pinnedSha: sha,
    runs: plan.compare === "none" ? 1 : 2,
    activeRun: active ? { requestId: active.id, url: active.runUrl ?? undefined } : undefined,
    // Quotas are the repository's and the installation's own; only the operator caps them all.
    requestsToday: await deps.store.countUserRequestsSince(requester.login, new Date(now().getTime() - DAY_MS), r.installationId),
    perUserPerDay: config.smoke.quotas.per_user_per_day,
    activeRuns: await deps.store.countActive(repoName(r)),
    maxQueued: config.smoke.quotas.max_queued,
    ...(deps.maxActive ? { globalCap: { active: await deps.store.countActive(), max: deps.maxActive } } : {}),
  });
  const base = {
    repo: repoName(r),
    pr: prNumber,
    sha,
    source: origin.source,
    githubLogin: requester.login,
    slackUser: requester.slackUser ?? null,
    deliveryId: origin.deliveryId,
    recipe: plan.recipe,
    cp: plan.cp,
    sizes: plan.sizes,
    gpus: plan.gpus,
    iters: plan.iters,
    overrides: plan.overrides,
    expectHcp: plan.expectHcp,
    compare: plan.compare,
    installationId: r.installationId,
  };
  const audit = (decision: "allowed" | "denied", reason: string | null, requestId: string | null, runId: number | null = null, expiry?: { expiresAt: Date }) =>
    deps.store.audit({ action: "smoke", decision, reason, githubLogin: requester.login, slackUser: requester.slackUser ?? null, repo: repoName(r), pr: prNumber, sha, recipe: plan.recipe, deliveryId: origin.deliveryId, requestId, runId, ...expiry });

  if (!decision.allowed) {
    // Bots are ignored silently; people without permission within REFUSAL_LIMITS, with records
    // that expire; everything else is recorded and answered.
    if (decision.code === "bot") return { kind: "refused", reason: decision.reason };
    let expiry: { expiresAt: Date } | undefined;
    if (decision.code === "permission") {
      expiry = await refusalBudget(deps.store, { installationId: r.installationId, login: requester.login, repo: repoName(r), pr: prNumber }, now());
      if (!expiry) return { kind: "refused", reason: decision.reason, silent: true };
    }
    const refused = await deps.store.createSmokeRequest({ ...base, status: "refused", reason: decision.reason, ...expiry });
    await audit("denied", decision.reason, refused.id, null, expiry);
    return { kind: "refused", reason: decision.reason };
  }

  // The commit as of the comment: refused when the branch moved since, unless the command names it.
  const pinned = await pinHead(octokit, { sha, ref: pr.head.ref, repo: pr.head.repo?.full_name ?? repoName(r) }, cmd.sha, origin.commentCreatedAt);
  if (!pinned.ok) {
    const refused = await deps.store.createSmokeRequest({ ...base, status: "refused", reason: pinned.reason });
    await audit("denied", pinned.reason, refused.id);
    return { kind: "refused", reason: pinned.reason };
  }

  // The workflow file the dispatch will run, read at the commit it will run from: a dispatch it
  // cannot take is refused now, not answered 422 after a check run was queued.
  const workflowSha = await defaultBranchSha(octokit, r);
  const workflow = await fitInstalledWorkflow(octokit, r, config, workflowSha, { plan, sha, pr: prNumber });
  if (!workflow.ok) {
    const refused = await deps.store.createSmokeRequest({ ...base, status: "refused", reason: workflow.reason });
    await audit("denied", workflow.reason, refused.id);
    return { kind: "refused", reason: workflow.reason };
  }

  const check = await preflight(octokit, r, sha, plan, deps.analyze);
  const errors = check.findings.filter((f) => f.severity === "error");
  if (errors.length) {
    const reason = `the pre-flight check found ${errors.length} error(s) in this configuration, so no GPU time was spent`;
    const refused = await deps.store.createSmokeRequest({ ...base, status: "refused", reason });
    await audit("denied", reason, refused.id);
    return { kind: "refused", reason, findings: check.findings };
  }
  const referenceErrors = check.referenceFindings.filter((f) => f.severity === "error");
  if (referenceErrors.length && plan.reference) {
    // compare=a2a with heads that CP does not divide (HCP009), for instance: the reference leg could not run.
    const reason = `compare=${plan.compare}: the ${plan.reference.cpCommType} reference leg of this A/B run fails the pre-flight check (${referenceErrors.map((f) => f.ruleId).join(", ")}), so no GPU time was spent; ask with compare=p2p or without compare`;
    const refused = await deps.store.createSmokeRequest({ ...base, status: "refused", reason });
    await audit("denied", reason, refused.id);
    return { kind: "refused", reason, findings: check.referenceFindings };
  }
  if (cmd.dryRun) {
    await audit("allowed", "dry run: nothing dispatched", null);
    return { kind: "dry-run", plan, sha, ...(workflow.note ? { workflowNote: workflow.note } : {}) };
  }

  const request = await deps.store.createSmokeRequest({ ...base, status: "requested" });
  // workflowSha: the commit the workflow file comes from; a run bound by its title must have run exactly it.
  const v: SmokeView = { requestId: request.id, requester: requester.login, sha, plan };
  const checkRun = await createOnce(
    async () =>
      (
        await octokit.rest.checks.create({
          owner: r.owner,
          repo: r.repo,
          name: SMOKE_CHECK_NAME,
          head_sha: sha,
          status: "queued",
          external_id: externalId(request.id, workflowSha),
          output: { title: `Smoke run requested by @${requester.login}`, summary: [planMarkdown(v), workflow.note].filter(Boolean).join("\n\n") },
        })
      ).data,
    async () => {
      const { data } = await octokit.rest.checks.listForRef({ owner: r.owner, repo: r.repo, ref: sha, check_name: SMOKE_CHECK_NAME, filter: "all", per_page: 100 });
      return data.check_runs.find((c) => c.external_id === externalId(request.id, workflowSha));
    },
  );
  if (origin.commentId) {
    await octokit.rest.reactions.createForIssueComment({ owner: r.owner, repo: r.repo, comment_id: origin.commentId, content: "eyes" }).catch(() => undefined);
  }
  let run: { id: number | null; url: string | null };
  try {
    run = await dispatchWorkflow(octokit, r, config, request, plan, checkRun.id, workflow.declared, deps);
  } catch (error) {
    const status = (error as { status?: number }).status;
    const reason =
      status === 404
        ? `the workflow ${config.smoke.workflow} was not found on ${r.defaultBranch}: add it with \`npx hcp-bot init-workflow\` (or set smoke.workflow in .github/hcp-bot.yml)`
        : `GitHub refused the workflow dispatch (${status ?? "no answer"}): ${(error as Error).message}`;
    const failed = await deps.store.updateSmokeRequest(request.id, { status: "failed", reason, checkRunId: checkRun.id });
    await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: checkRun.id, status: "completed", conclusion: "failure", output: { title: "Smoke run could not start", summary: untrusted(reason) } });
    await audit("denied", reason, request.id);
    return { kind: "failed", reason, request: failed.ok ? failed.request : request };
  }
  const updated = await deps.store.updateSmokeRequest(request.id, {
    status: "dispatched",
    runId: run.id,
    runUrl: run.url,
    checkRunId: checkRun.id,
    dispatchedAt: now(),
  });
  if (run.url) await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: checkRun.id, details_url: run.url });
  // A recipe the analyzer cannot find (built dynamically, say) is not refused: run_recipe.py
  // knows better, and the run will tell. The reply says what the pre-flight could not check.
  const unchecked = check.recipeFound ? null : `The pre-flight did not find recipe ${plan.recipe} at ${sha.slice(0, 12)}, so it checked the overrides alone.`;
  const dispatched: SmokeState = { kind: "dispatched", ...(unchecked ? { note: unchecked } : {}), ...(workflow.note ? { workflow: workflow.note, skipped: workflow.skipped } : {}) };
  const commentId = await reply(octokit, r, prNumber, smokeCommentBody({ ...v, runUrl: run.url, checkRunUrl: checkRun.html_url }, dispatched), request.id, deps);
  const final = await deps.store.updateSmokeRequest(request.id, { commentId });
  await tell(final.ok ? final.request : request, dispatched, deps);
  await audit("allowed", unchecked, request.id, run.id);
  return { kind: "dispatched", request: final.ok ? final.request : updated.ok ? updated.request : request };
}

/** Text for a refused or dry-run smoke request, as a PR reply. */
export function smokeReply(outcome: SmokeOutcome, requester: string): string | undefined {
  switch (outcome.kind) {
    case "refused": {
      if (outcome.silent) return undefined;
      const table = outcome.findings?.length ? `\n\n${findingsTable(outcome.findings)}\n\nFix these (\`hcp-bot explain RULE\` documents each rule) or change the overrides, then ask again.` : "";
      return `@${untrusted(requester)} no smoke run: ${untrusted(outcome.reason)}.${table}`;
    }
    case "dry-run":
      return `**Dry run**: this is what \`/hcp smoke\` would start (nothing was dispatched).\n\n${planMarkdown({ requestId: "dry-run", requester, sha: outcome.sha, plan: outcome.plan })}${outcome.workflowNote ? `\n\n${outcome.workflowNote}` : ""}`;
    case "failed":
      return outcome.request ? undefined : `No smoke run: ${untrusted(outcome.reason)}`;
    case "dispatched":
      return undefined;
  }
}

// ---------------------------------------------------------------- following the run

/** Posts a request's story comment (once, by its marker) and tells Slack; for a request the sweep bound to its run. */
export async function postStory(octokit: Octokit, r: RepoRef, request: SmokeRequest, state: SmokeState, deps: SmokeDeps): Promise<SmokeRequest> {
  const commentId = await reply(octokit, r, request.pr, smokeCommentBody({ ...view(request), runUrl: request.runUrl }, state), request.id, deps);
  const updated = await deps.store.updateSmokeRequest(request.id, { commentId });
  await tell(updated.ok ? updated.request : request, state, deps);
  return updated.ok ? updated.request : request;
}

async function updateStory(octokit: Octokit, r: { owner: string; repo: string }, request: SmokeRequest, state: SmokeState, deps: SmokeDeps): Promise<void> {
  if (request.commentId) {
    await octokit.rest.issues.updateComment({ owner: r.owner, repo: r.repo, comment_id: request.commentId, body: smokeCommentBody(view(request), state) });
  }
  await tell(request, state, deps);
}

async function tell(request: SmokeRequest, state: SmokeState, deps: SmokeDeps): Promise<void> {
  try {
    await deps.notify?.(request, state);
  } catch (error) {
    deps.log.warn({ err: error, request: request.id }, "notifying about a smoke run failed; GitHub is up to date");
  }
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

// templates/hcp-smoke.yml: run-name "hcp-smoke <request id> (PR #n, recipe)".
const REQUEST_IN_TITLE = /hcp-smoke ([A-Za-z0-9_-]{6,})/;

/**
 * The request a run belongs to: the one bound to its id, else (when the dispatch did not
 * return the run id) the one its title names, only while that request has no run (the store
 * sets a run id once) and only when GitHub's facts about the run say it is ours: who started
 * it, from which commit of which workflow file, with which inputs (run-binding.ts). The event's
 * own fields screen out the obvious others before any API call.
 */
async function requestForRun(octokit: Octokit, r: RunRepo, run: WorkflowRunEvent, deps: SmokeDeps): Promise<SmokeRequest | undefined> {
  const repo = repoName(r);
  const byId = await deps.store.findByRunId(run.id);
  if (byId) return byId.repo === repo ? byId : undefined;
  if (run.event !== "workflow_dispatch" || !r.defaultBranch || run.head_branch !== r.defaultBranch) return undefined;
  const m = REQUEST_IN_TITLE.exec(run.display_title ?? run.name ?? "");
  if (!m) return undefined;
  const request = await deps.store.getSmokeRequest(m[1]!);
  if (!request || request.repo !== repo || request.runId !== null) return undefined;
  const workflow = r.smokeWorkflow ? await r.smokeWorkflow() : defaultRepoConfig().smoke.workflow;
  const why = await whyNotOurRun(octokit, { owner: r.owner, repo: r.repo, defaultBranch: r.defaultBranch, workflow, botLogin: await botLoginOf(octokit, deps) }, request, run.id);
  if (why) {
    deps.log.warn({ run: run.id, request: request.id, why }, "a run titled after a smoke request is not its run");
    return undefined;
  }
  const updated = await deps.store.updateSmokeRequest(request.id, { runId: run.id, runUrl: run.html_url });
  return updated.ok ? updated.request : undefined;
}

/**
 * The repository of a workflow_run / workflow_job event: its default branch when the event
 * says, and (read only when a run must be matched by title) the smoke workflow's file name.
 */
export type RunRepo = { owner: string; repo: string; defaultBranch?: string; smokeWorkflow?: () => Promise<string> };

/** workflow_run / workflow_job events: follow the run, and judge it when it completes. */
export async function followRun(octokit: Octokit, r: RunRepo, run: WorkflowRunEvent, deps: SmokeDeps): Promise<SmokeRequest | undefined> {
  const now = deps.now ?? (() => new Date());
  const request = await requestForRun(octokit, r, run, deps);
  if (request && (request.status === "cancelled" || request.status === "timed_out") && run.status !== "completed") {
    // Cancelled (or expired) before the dispatch's run could be found: stop the run now it shows up.
    await cancelRun(octokit, r, run.id);
    return request;
  }
  if (!request || !["dispatched", "queued", "running"].includes(request.status)) return request;
  if (run.status === "in_progress" && request.status !== "running") {
    const updated = await deps.store.updateSmokeRequest(request.id, { status: "running", startedAt: now() });
    if (request.checkRunId) await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: request.checkRunId, status: "in_progress", started_at: now().toISOString() });
    if (updated.ok) await updateStory(octokit, r, updated.request, { kind: "running" }, deps);
    return updated.ok ? updated.request : request;
  }
  if (run.status !== "completed") return request;
  if (run.conclusion === "cancelled") return finishCancelled(octokit, r, request, deps);
  const judged = await verdictForRun(octokit, r, request, run.id, { maxArtifactBytes: deps.maxArtifactBytes, artifactCaps: deps.artifactCaps, judgeArtifact: deps.judgeArtifact });
  const { note, comparison } = judged;
  // An A/B run's implausible speedup (AB001) makes the HCP leg's verdict worse, never better.
  const verdict = comparison ? applyComparison(judged.verdict, comparison) : judged.verdict;
  const state: SmokeState = { kind: "finished", verdict, ...(note ? { note } : {}), ...(comparison ? { comparison } : {}) };
  if (request.checkRunId) {
    await octokit.rest.checks.update({
      owner: r.owner,
      repo: r.repo,
      check_run_id: request.checkRunId,
      status: "completed",
      conclusion: conclusionForVerdict(verdict),
      completed_at: now().toISOString(),
      details_url: run.html_url,
      output: { title: stateHeadline(state).replace(/^\S+\s/, ""), summary: smokeCommentBody(view(request), state).slice(0, 65_000) },
    });
  }
  const summary = verdict.cause ? `${verdict.status}: ${verdict.cause.message}` : verdict.status;
  const withComparison = comparison ? `${summary}; A/B: ${comparison.summary}` : summary;
  const updated = await deps.store.updateSmokeRequest(request.id, { status: "completed", verdictStatus: verdict.status, verdictSummary: withComparison.slice(0, 4000), verdict, ...(comparison ? { comparison } : {}), finishedAt: now() });
  await updateStory(octokit, r, updated.ok ? updated.request : request, state, deps);
  await deps.store.audit({ action: "verdict", decision: "allowed", githubLogin: request.githubLogin, repo: request.repo, pr: request.pr, sha: request.sha, recipe: request.recipe, requestId: request.id, runId: run.id, verdict: verdict.status });
  return updated.ok ? updated.request : request;
}

async function cancelRun(octokit: Octokit, r: { owner: string; repo: string }, runId: number): Promise<void> {
  await octokit.rest.actions.cancelWorkflowRun({ owner: r.owner, repo: r.repo, run_id: runId }).catch((error: { status?: number }) => {
    if (error.status !== 409) throw error; // 409: already finished
  });
}

async function finishCancelled(octokit: Octokit, r: { owner: string; repo: string }, request: SmokeRequest, deps: SmokeDeps, by?: string): Promise<SmokeRequest> {
  const now = deps.now ?? (() => new Date());
  const updated = await deps.store.updateSmokeRequest(request.id, { status: "cancelled", finishedAt: now() });
  if (request.checkRunId) {
    await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: request.checkRunId, status: "completed", conclusion: "cancelled", completed_at: now().toISOString() });
  }
  const state: SmokeState = by ? { kind: "cancelled", by } : { kind: "cancelled" };
  await updateStory(octokit, r, updated.ok ? updated.request : request, state, deps);
  return updated.ok ? updated.request : request;
}

/** `/hcp cancel`: the same permission as starting one. Empty: a refusal past REFUSAL_LIMITS (no reply). */
export async function cancelSmoke(octokit: Octokit, r: RepoRef, config: RepoConfig, prNumber: number, requester: Requester, deps: SmokeDeps): Promise<string> {
  const role = await repositoryRole(octokit, r, requester.login);
  if (role === undefined || roleRank(role) < roleRank(config.smoke.permission)) {
    // A role GitHub could not tell is not the asker's doing: answered and kept, as before.
    const expiry = role === undefined ? undefined : await refusalBudget(deps.store, { installationId: r.installationId, login: requester.login, repo: repoName(r), pr: prNumber }, (deps.now ?? (() => new Date()))());
    if (role !== undefined && !expiry) return "";
    await deps.store.audit({ action: "cancel", decision: "denied", reason: `role ${role ?? "unknown"}`, githubLogin: requester.login, repo: repoName(r), pr: prNumber, ...expiry });
    return `@${untrusted(requester.login)} cancelling a smoke run needs ${config.smoke.permission} access.`;
  }
  const active = await deps.store.activeForPr(repoName(r), prNumber);
  if (active.length === 0) return "No smoke run is under way for this PR.";
  for (const request of active) {
    if (request.runId) await cancelRun(octokit, r, request.runId);
    await finishCancelled(octokit, r, request, deps, requester.login);
    await deps.store.audit({ action: "cancel", decision: "allowed", githubLogin: requester.login, repo: repoName(r), pr: prNumber, sha: request.sha, requestId: request.id, runId: request.runId });
  }
  return `Cancelled ${active.length} smoke run(s).`;
}

/**
 * Runs still queued after the configured limit (no GPU runner online) end timed_out:
 * the workflow run is cancelled and the check run says why.
 */
export async function expireQueued(octokitFor: (installationId: number) => Promise<Octokit>, configFor: (octokit: Octokit, request: SmokeRequest) => Promise<RepoConfig>, deps: SmokeDeps): Promise<number> {
  const now = deps.now ?? (() => new Date());
  // The shortest sensible limit is a minute; each request is then checked against its repo's own limit.
  const candidates = await deps.store.listQueuedOlderThan(new Date(now().getTime() - 60_000));
  let expired = 0;
  for (const request of candidates) {
    if (!request.installationId) continue;
    const octokit = await octokitFor(request.installationId);
    const config = await configFor(octokit, request);
    const since = request.dispatchedAt ?? request.createdAt;
    if (now().getTime() - since.getTime() < config.smoke.timeouts.queue_minutes * 60_000) continue;
    const [owner, repo] = request.repo.split("/") as [string, string];
    if (request.runId) {
      await octokit.rest.actions.cancelWorkflowRun({ owner, repo, run_id: request.runId }).catch(() => undefined);
    }
    const updated = await deps.store.updateSmokeRequest(request.id, { status: "timed_out", finishedAt: now(), reason: "no GPU runner picked the job up in time" });
    const state: SmokeState = { kind: "timed_out", minutes: config.smoke.timeouts.queue_minutes, labels: config.smoke.runner_labels };
    if (request.checkRunId) {
      await octokit.rest.checks.update({
        owner,
        repo,
        check_run_id: request.checkRunId,
        status: "completed",
        conclusion: "timed_out",
        completed_at: now().toISOString(),
        output: { title: "No GPU runner picked the smoke run up", summary: smokeCommentBody(view(request), state) },
      });
    }
    await updateStory(octokit, { owner, repo }, updated.ok ? updated.request : request, state, deps);
    await deps.store.audit({ action: "timeout", decision: "denied", reason: "queued too long", repo: request.repo, pr: request.pr, sha: request.sha, requestId: request.id, runId: request.runId });
    expired++;
  }
  return expired;
}

/** `/hcp status` on GitHub: the latest smoke request of this PR. */
export function statusText(latest: SmokeRequest | undefined): string {
  if (!latest) return "No smoke run has been requested for this PR.";
  const verdict = latest.verdictStatus ? `, verdict **${latest.verdictStatus}**${latest.verdictSummary ? `: ${untrusted(latest.verdictSummary)}` : ""}` : "";
  return `Latest smoke request \`${latest.id}\` by @${untrusted(latest.githubLogin)} on \`${latest.sha.slice(0, 12)}\`: **${latest.status}**${verdict}${latest.runUrl ? ` ([run](${latest.runUrl}))` : ""}.`;
}

export { helpText };
