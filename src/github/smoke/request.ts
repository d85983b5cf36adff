// `/hcp smoke`: authorize the person who asks, pin the commit, refuse configurations that
// cannot work (pre-flight), dispatch the GPU workflow, and turn the finished run's log
// into a verdict on the check run and the PR comment. Written against Octokit and
// webhook payloads; the decisions live in the pure core (policy, grammar, verdict).
import type { Analyzer } from "../../core/analyze/analyzer.ts";
import { compileGlobs } from "../../core/analyze/classify.ts";
import { resolveSmokeRequest, type SmokePlan } from "../../core/commands/index.ts";
import type { RepoConfig } from "../../core/config/repo-config.ts";
import type { Finding } from "../../core/model/finding.ts";
import { untrusted } from "../../core/render/markdown.ts";
import { planMarkdown, SMOKE_CHECK_NAME, smokeCommentBody, type SmokeState, type SmokeView } from "../../core/render/smoke.ts";
import { decideSmoke, effectiveRole, roleRank, type SmokeDecision } from "../../core/smoke/policy.ts";
import { smokeInputs } from "../../core/smoke/workflow.ts";
import type { NewSmokeRequest, SmokeRequest } from "../../store/types.ts";
import { readBlobs, readImportedModules } from "../blobs.ts";
import type { BotOctokit } from "../host.ts";
import { pinHead } from "../pin.ts";
import { refusalBudget } from "../refusals.ts";
import { createOnce } from "../writes.ts";
import { defaultBranchSha, externalId, findRun } from "./binding.ts";
import { botLoginOf, reply, tell } from "./story.ts";
import type { RepoRef, SmokeAsk, SmokeDeps, SmokeOutcome } from "./types.ts";
import { fitInstalledWorkflow, type WorkflowFit } from "./workflow-file.ts";

type Octokit = BotOctokit;

// Pre-flight reads the recipe modules at the pinned SHA; these hold every recipe function.
const RECIPE_GLOBS = ["src/megatron/bridge/recipes/**/*.py", "src/megatron/bridge/perf_recipes/**/*.py", "src/megatron/bridge/diffusion/recipes/**/*.py"];
const PREFLIGHT_FILE = ".hcp-smoke/launch.sh";
/** The A/B run's reference leg, checked beside the run (compare=a2a: the heads must divide by CP). */
const PREFLIGHT_REFERENCE_FILE = ".hcp-smoke/reference.sh";
const DAY_MS = 24 * 60 * 60 * 1000;

const repoName = (r: { owner: string; repo: string }) => `${r.owner}/${r.repo}`;


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

type Pull = Awaited<ReturnType<Octokit["rest"]["pulls"]["get"]>>["data"];
type Expiry = { expiresAt: Date };

/** What every outcome of one request writes: the stored request's fields, the audit entry, and a refusal. */
interface Records {
  base: Omit<NewSmokeRequest, "status">;
  audit(decision: "allowed" | "denied", reason: string | null, requestId: string | null, runId?: number | null, expiry?: Expiry): Promise<unknown>;
  /** Records a refused request and its audit entry (an expiry: a refusal of someone without permission), and answers so. */
  refuse(reason: string, more?: { findings?: Finding[]; expiry?: Expiry }): Promise<SmokeOutcome>;
}

function records(ask: SmokeAsk, plan: SmokePlan, sha: string, deps: SmokeDeps): Records {
  const { repo: r, pr, requester, origin } = ask;
  const base = {
    repo: repoName(r),
    pr,
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
  const audit: Records["audit"] = (decision, reason, requestId, runId = null, expiry) =>
    deps.store.audit({ action: "smoke", decision, reason, githubLogin: requester.login, slackUser: requester.slackUser ?? null, repo: repoName(r), pr, sha, recipe: plan.recipe, deliveryId: origin.deliveryId, requestId, runId, ...expiry });
  return {
    base,
    audit,
    async refuse(reason, more = {}) {
      const refused = await deps.store.createSmokeRequest({ ...base, status: "refused", reason, ...more.expiry });
      await audit("denied", reason, refused.id, null, more.expiry);
      return { kind: "refused", reason, ...(more.findings ? { findings: more.findings } : {}) };
    },
  };
}

/** The policy's decision (src/core/smoke/policy.ts) on the facts GitHub and the store hold now. */
async function decide(ask: SmokeAsk, pr: Pull, plan: SmokePlan, deps: SmokeDeps): Promise<SmokeDecision> {
  const { octokit, repo: r, config, requester } = ask;
  const now = deps.now ?? (() => new Date());
  const requesterRole = await repositoryRole(octokit, r, requester.login);
  const fork = pr.head.repo?.full_name !== pr.base.repo.full_name;
  const author = pr.user?.login ?? "";
  const authorRole = author === requester.login ? requesterRole : await repositoryRole(octokit, r, author);
  const untrustedHead = fork || authorRole === undefined || roleRank(authorRole) < roleRank("write");
  const mirrored = config.smoke.require_copy_pr_bot && untrustedHead ? await copyPrBotSha(octokit, r, ask.pr) : undefined;
  const active = (await deps.store.activeForPr(repoName(r), ask.pr))[0];
  return decideSmoke({
    requester,
    requesterRole,
    requiredLevel: config.smoke.permission,
    pr: { number: ask.pr, state: pr.state as "open" | "closed", draft: pr.draft ?? false, merged: pr.merged ?? false },
    untrustedHead,
    copyPrBot: { required: config.smoke.require_copy_pr_bot, mirroredSha: mirrored },
    pinnedSha: pr.head.sha,
    runs: plan.compare === "none" ? 1 : 2,
    activeRun: active ? { requestId: active.id, url: active.runUrl ?? undefined } : undefined,
    // Quotas are the repository's and the installation's own; only the operator caps them all.
    requestsToday: await deps.store.countUserRequestsSince(requester.login, new Date(now().getTime() - DAY_MS), r.installationId),
    perUserPerDay: config.smoke.quotas.per_user_per_day,
    activeRuns: await deps.store.countActive(repoName(r)),
    maxQueued: config.smoke.quotas.max_queued,
    ...(deps.maxActive ? { globalCap: { active: await deps.store.countActive(), max: deps.maxActive } } : {}),
  });
}

/**
 * A refusal by the policy. Bots are ignored silently; people without permission within
 * REFUSAL_LIMITS, with records that expire; everything else is recorded and answered.
 */
async function refuseDecision(ask: SmokeAsk, decision: SmokeDecision & { allowed: false }, rec: Records, deps: SmokeDeps): Promise<SmokeOutcome> {
  if (decision.code === "bot") return { kind: "refused", reason: decision.reason };
  if (decision.code !== "permission") return rec.refuse(decision.reason);
  const now = deps.now ?? (() => new Date());
  const expiry = await refusalBudget(deps.store, { installationId: ask.repo.installationId, login: ask.requester.login, repo: repoName(ask.repo), pr: ask.pr }, now());
  if (!expiry) return { kind: "refused", reason: decision.reason, silent: true };
  return rec.refuse(decision.reason, { expiry });
}

/** What the checks before a dispatch found: the workflow the dispatch will run, and the pre-flight. */
type Checked = { workflowSha: string | null; workflow: WorkflowFit & { ok: true }; recipeFound: boolean };

/**
 * The checks before anything is queued: the head as of the comment, the installed workflow,
 * the pre-flight of the launch line (and of an A/B run's reference leg). A refusal ends here.
 */
async function checkBeforeDispatch(ask: SmokeAsk, pr: Pull, plan: SmokePlan, rec: Records, deps: SmokeDeps): Promise<Checked | { refused: SmokeOutcome }> {
  const { octokit, repo: r, config } = ask;
  const sha = pr.head.sha;
  // The commit as of the comment: refused when the branch moved since, unless the command names it.
  const pinned = await pinHead(octokit, { sha, ref: pr.head.ref, repo: pr.head.repo?.full_name ?? repoName(r) }, ask.command.sha, ask.origin.commentCreatedAt);
  if (!pinned.ok) return { refused: await rec.refuse(pinned.reason) };
  // The workflow file the dispatch will run, read at the commit it will run from: a dispatch it
  // cannot take is refused now, not answered 422 after a check run was queued.
  const workflowSha = await defaultBranchSha(octokit, r);
  const workflow = await fitInstalledWorkflow(octokit, r, config, workflowSha, { plan, sha, pr: ask.pr });
  if (!workflow.ok) return { refused: await rec.refuse(workflow.reason) };
  const check = await preflight(octokit, r, sha, plan, deps.analyze);
  const errors = check.findings.filter((f) => f.severity === "error");
  if (errors.length) {
    return { refused: await rec.refuse(`the pre-flight check found ${errors.length} error(s) in this configuration, so no GPU time was spent`, { findings: check.findings }) };
  }
  const referenceErrors = check.referenceFindings.filter((f) => f.severity === "error");
  if (referenceErrors.length && plan.reference) {
    // compare=a2a with heads that CP does not divide (HCP009), for instance: the reference leg could not run.
    const reason = `compare=${plan.compare}: the ${plan.reference.cpCommType} reference leg of this A/B run fails the pre-flight check (${referenceErrors.map((f) => f.ruleId).join(", ")}), so no GPU time was spent; ask with compare=p2p or without compare`;
    return { refused: await rec.refuse(reason, { findings: check.referenceFindings }) };
  }
  return { workflowSha, workflow, recipeFound: check.recipeFound };
}

/** `/hcp smoke`: authorize, pin, check, then (unless a dry run) queue the check run and dispatch. */
export async function requestSmoke(ask: SmokeAsk, deps: SmokeDeps): Promise<SmokeOutcome> {
  const resolved = resolveSmokeRequest(ask.command, ask.config.smoke);
  if (!resolved.ok) return { kind: "refused", reason: resolved.error };
  const plan = resolved.plan;
  const { data: pr } = await ask.octokit.rest.pulls.get({ owner: ask.repo.owner, repo: ask.repo.repo, pull_number: ask.pr });
  // The commit is pinned now: only this SHA runs, whatever is pushed later (and, for a comment,
  // only if it was already the head when the comment was written: see pinHead).
  const sha = pr.head.sha;
  const rec = records(ask, plan, sha, deps);
  const decision = await decide(ask, pr, plan, deps);
  if (!decision.allowed) return refuseDecision(ask, decision, rec, deps);
  const checked = await checkBeforeDispatch(ask, pr, plan, rec, deps);
  if ("refused" in checked) return checked.refused;
  if (ask.command.dryRun) {
    await rec.audit("allowed", "dry run: nothing dispatched", null);
    return { kind: "dry-run", plan, sha, ...(checked.workflow.note ? { workflowNote: checked.workflow.note } : {}) };
  }
  return dispatch(ask, plan, sha, checked, rec, deps);
}

/** The "HCP smoke" check run, queued once (found again by its external_id after an ambiguous failure). */
async function queueCheckRun(ask: SmokeAsk, request: SmokeRequest, v: SmokeView, checked: Checked) {
  const { octokit, repo: r } = ask;
  const id = externalId(request.id, checked.workflowSha);
  return createOnce(
    async () =>
      (
        await octokit.rest.checks.create({
          owner: r.owner,
          repo: r.repo,
          name: SMOKE_CHECK_NAME,
          head_sha: v.sha,
          status: "queued",
          external_id: id,
          output: { title: `Smoke run requested by @${ask.requester.login}`, summary: [planMarkdown(v), checked.workflow.note].filter(Boolean).join("\n\n") },
        })
      ).data,
    async () => {
      const { data } = await octokit.rest.checks.listForRef({ owner: r.owner, repo: r.repo, ref: v.sha, check_name: SMOKE_CHECK_NAME, filter: "all", per_page: 100 });
      return data.check_runs.find((c) => c.external_id === id);
    },
  );
}

/** A dispatch GitHub refused: the request failed, its check run says why. */
async function dispatchFailed(ask: SmokeAsk, request: SmokeRequest, checkRunId: number, error: unknown, rec: Records, deps: SmokeDeps): Promise<SmokeOutcome> {
  const { octokit, repo: r, config } = ask;
  const status = (error as { status?: number }).status;
  const reason =
    status === 404
      ? `the workflow ${config.smoke.workflow} was not found on ${r.defaultBranch}: add it with \`npx hcp-bot init-workflow\` (or set smoke.workflow in .github/hcp-bot.yml)`
      : `GitHub refused the workflow dispatch (${status ?? "no answer"}): ${(error as Error).message}`;
  const failed = await deps.store.updateSmokeRequest(request.id, { status: "failed", reason, checkRunId });
  await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: checkRunId, status: "completed", conclusion: "failure", output: { title: "Smoke run could not start", summary: untrusted(reason) } });
  await rec.audit("denied", reason, request.id);
  return { kind: "failed", reason, request: failed.ok ? failed.request : request };
}

/**
 * The writes of an allowed request, in the order src/github/smoke/recovery.ts resolves after a
 * crash: the request, the check run, the dispatch, `dispatched`, the story comment.
 */
async function dispatch(ask: SmokeAsk, plan: SmokePlan, sha: string, checked: Checked, rec: Records, deps: SmokeDeps): Promise<SmokeOutcome> {
  const { octokit, repo: r, config } = ask;
  const now = deps.now ?? (() => new Date());
  const request = await deps.store.createSmokeRequest({ ...rec.base, status: "requested" });
  // workflowSha: the commit the workflow file comes from; a run bound by its title must have run exactly it.
  const v: SmokeView = { requestId: request.id, requester: ask.requester.login, sha, plan };
  const checkRun = await queueCheckRun(ask, request, v, checked);
  if (ask.origin.commentId) {
    await octokit.rest.reactions.createForIssueComment({ owner: r.owner, repo: r.repo, comment_id: ask.origin.commentId, content: "eyes" }).catch(() => undefined);
  }
  let run: { id: number | null; url: string | null };
  try {
    run = await dispatchWorkflow(octokit, r, config, request, plan, checkRun.id, checked.workflow.declared, deps);
  } catch (error) {
    return dispatchFailed(ask, request, checkRun.id, error, rec, deps);
  }
  const updated = await deps.store.updateSmokeRequest(request.id, { status: "dispatched", runId: run.id, runUrl: run.url, checkRunId: checkRun.id, dispatchedAt: now() });
  if (run.url) await octokit.rest.checks.update({ owner: r.owner, repo: r.repo, check_run_id: checkRun.id, details_url: run.url });
  // A recipe the analyzer cannot find (built dynamically, say) is not refused: run_recipe.py
  // knows better, and the run will tell. The reply says what the pre-flight could not check.
  const unchecked = checked.recipeFound ? null : `The pre-flight did not find recipe ${plan.recipe} at ${sha.slice(0, 12)}, so it checked the overrides alone.`;
  const { workflow } = checked;
  const dispatched: SmokeState = { kind: "dispatched", ...(unchecked ? { note: unchecked } : {}), ...(workflow.note ? { workflow: workflow.note, skipped: workflow.skipped } : {}) };
  const commentId = await reply(octokit, r, ask.pr, smokeCommentBody({ ...v, runUrl: run.url, checkRunUrl: checkRun.html_url }, dispatched), request.id, deps);
  const final = await deps.store.updateSmokeRequest(request.id, { commentId });
  await tell(final.ok ? final.request : request, dispatched, deps);
  await rec.audit("allowed", unchecked, request.id, run.id);
  return { kind: "dispatched", request: final.ok ? final.request : updated.ok ? updated.request : request };
}
