// The pull-request review: read the PR's recipe files at the head SHA, analyze them, and
// post the plan (check run, inline review, summary comment). Every post is an upsert keyed
// on state GitHub holds (check run per SHA, hidden markers in the bot's own comments), so
// a redelivered webhook or a restart posts nothing twice.
import type { BotOctokit } from "./host.ts";
import { commentOnce, createOnce } from "./writes.ts";
import type { Analyzer } from "../core/analyze/analyzer.ts";
import { compileGlobs } from "../core/analyze/classify.ts";
import { CONFIG_PATH, parsePyprojectConfig, parseRepoConfig, type RepoConfig } from "../core/config/repo-config.ts";
import { lintRunOptions } from "../core/config/lint-options.ts";
import type { Finding } from "../core/model/finding.ts";
import { parsePatch } from "../core/review/diff.ts";
import { SMOKE_ACTION_IDENTIFIER } from "./routes.ts";
import { CHECK_NAME, fingerprintsIn, planReview, SUMMARY_MARKER, type Annotation, type ReviewPlan, type ReviewedFile } from "../core/review/plan.ts";
import { tePinChangeNotes, type ChangedFile } from "../core/review/te-pin.ts";
import { ALL_RULES } from "../core/rules/index.ts";
import { readBlobs, readImportedModules } from "./blobs.ts";
import { isAmbiguousFailure } from "./failures.ts";
import { GitHubUnavailable } from "./octokit.ts";
import { docUrlFor } from "../core/rules/doc-url.ts";

/** HCP_DOCS_URL where the host has an environment (Node, Deno's process shim); none on a worker without one. */
function runtimeEnv(): Readonly<Record<string, string | undefined>> {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
}

type Octokit = BotOctokit;

export interface PullTarget {
  owner: string;
  repo: string;
  number: number;
  headSha: string;
  draft: boolean;
  defaultBranch: string;
  htmlUrl?: string;
  /** The PR was just opened: nothing of the bot's can be on it unless a check run for this SHA exists. */
  opened?: boolean;
}

export interface ReviewDeps {
  analyze: Analyzer;
  botLogin: (octokit: Octokit) => Promise<string>;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

export interface ReviewOutcome {
  conclusion: ReviewPlan["conclusion"] | "config-error";
  findings: number;
  inlinePosted: number;
  summary: "created" | "updated" | "unchanged" | "none";
  checkRunId: number;
  /** Findings by rule id (metrics). */
  byRule?: Record<string, number>;
}

export const SMOKE_ACTION = {
  label: "Smoke run",
  description: "Run the 4-GPU HCP smoke test", // GitHub: at most 40 characters
  identifier: SMOKE_ACTION_IDENTIFIER,
};

// GitHub's own cap on the files list of a pull request.
const MAX_PR_FILES = 3000;
// Dependency files that carry the Transformer Engine pin: read with the PR's files so HCP010/HCP014 know the version.
const PIN_FILES = ["uv.lock", "pyproject.toml"];

/**
 * `.github/hcp-bot.yml` from the default branch only: a PR cannot change its own policy. Without
 * it, the root pyproject.toml's `[tool.hcp-bot]` table (the CLI reads the same two, lint-config.ts).
 */
export async function readRepoConfig(octokit: Octokit, t: { owner: string; repo: string; defaultBranch: string }) {
  const yml = await readDefaultBranchFile(octokit, t, CONFIG_PATH);
  if (yml !== undefined) return parseRepoConfig(yml);
  const pyproject = await readDefaultBranchFile(octokit, t, "pyproject.toml");
  return (pyproject !== undefined ? parsePyprojectConfig(pyproject) : undefined) ?? parseRepoConfig(undefined);
}

async function readDefaultBranchFile(octokit: Octokit, t: { owner: string; repo: string; defaultBranch: string }, path: string): Promise<string | undefined> {
  try {
    const res = await octokit.rest.repos.getContent({ owner: t.owner, repo: t.repo, path, ref: t.defaultBranch });
    const data = res.data as { content?: string; encoding?: string };
    return data.content !== undefined ? decodeBase64(data.content) : undefined;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return undefined;
    throw error;
  }
}

function decodeBase64(content: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(content.replace(/\s/g, "")), (c) => c.charCodeAt(0)));
}

async function listPullFiles(octokit: Octokit, t: PullTarget): Promise<ChangedFile[]> {
  const files: ChangedFile[] = [];
  for await (const page of octokit.paginate.iterator(octokit.rest.pulls.listFiles, { owner: t.owner, repo: t.repo, pull_number: t.number, per_page: 100 })) {
    for (const f of page.data) files.push({ filename: f.filename, status: f.status, patch: f.patch });
    if (files.length >= MAX_PR_FILES) break;
  }
  return files.slice(0, MAX_PR_FILES);
}

async function findCheckRun(octokit: Octokit, t: PullTarget) {
  const res = await octokit.rest.checks.listForRef({ owner: t.owner, repo: t.repo, ref: t.headSha, check_name: CHECK_NAME, filter: "latest", per_page: 10 });
  return res.data.check_runs[0];
}

type CheckRun = Awaited<ReturnType<typeof findCheckRun>>;

async function upsertCheckRun(
  octokit: Octokit,
  t: PullTarget,
  plan: ReviewPlan | { conclusion: "failure"; check: ReviewPlan["check"] },
  existing: CheckRun,
): Promise<number> {
  const { annotations, ...output } = plan.check;
  const first = annotations.slice(0, 50);
  const same =
    existing &&
    existing.status === "completed" &&
    existing.conclusion === plan.conclusion &&
    existing.output.title === output.title &&
    existing.output.summary === output.summary &&
    existing.output.annotations_count === annotations.length;
  if (same) return existing.id;
  const body = {
    owner: t.owner,
    repo: t.repo,
    status: "completed" as const,
    conclusion: plan.conclusion,
    completed_at: new Date().toISOString(),
    output: { ...output, annotations: first },
    // A button on the check run starts the smoke run, with the same checks as `/hcp smoke`.
    ...(plan.conclusion !== "skipped" ? { actions: [SMOKE_ACTION] } : {}),
  };
  const id = existing
    ? (await octokit.rest.checks.update({ ...body, check_run_id: existing.id })).data.id
    : (await octokit.rest.checks.create({ ...body, name: CHECK_NAME, head_sha: t.headSha, ...(t.htmlUrl ? { details_url: t.htmlUrl } : {}) })).data.id;
  // GitHub takes 50 annotations per request and appends those of later updates.
  for (let i = 50; i < annotations.length; i += 50) {
    await octokit.rest.checks.update({ owner: t.owner, repo: t.repo, check_run_id: id, output: { ...output, annotations: annotations.slice(i, i + 50) as Annotation[] } });
  }
  return id;
}

async function botReviewFingerprints(octokit: Octokit, t: PullTarget, login: string): Promise<Set<string>> {
  const comments = await octokit.paginate(octokit.rest.pulls.listReviewComments, { owner: t.owner, repo: t.repo, pull_number: t.number, per_page: 100 });
  return new Set(comments.filter((c) => c.user?.login === login).flatMap((c) => fingerprintsIn(c.body)));
}

async function postReview(octokit: Octokit, t: PullTarget, plan: ReviewPlan, config: RepoConfig, errors: boolean, log: ReviewDeps["log"], login: string): Promise<number> {
  if (plan.inline.length === 0) return 0;
  const event = config.review.mode === "request-changes" && errors ? "REQUEST_CHANGES" : "COMMENT";
  try {
    // After a 5xx the review may exist: it is looked for (the bot's, on this commit, with this body) before it is sent again.
    await createOnce(
      async () =>
        (
          await octokit.rest.pulls.createReview({
            owner: t.owner,
            repo: t.repo,
            pull_number: t.number,
            commit_id: t.headSha,
            event,
            body: plan.reviewBody,
            comments: plan.inline.map(({ fingerprint: _fp, ...c }) => c),
          })
        ).data.id,
      async () => {
        const { data } = await octokit.rest.pulls.listReviews({ owner: t.owner, repo: t.repo, pull_number: t.number, per_page: 100 });
        return data.find((r) => r.user?.login === login && r.commit_id === t.headSha && r.body === plan.reviewBody)?.id;
      },
    );
    return plan.inline.length;
  } catch (error) {
    // 422: a line is no longer in the diff (a newer push raced us). The check run and the summary still carry every finding.
    if ((error as { status?: number }).status === 422) {
      log.warn({ err: error }, "review comments rejected; findings stay in the check run and summary");
      return 0;
    }
    throw error;
  }
}

async function upsertSummary(octokit: Octokit, t: PullTarget, body: string, login: string, hasFindings: boolean, fresh: boolean): Promise<ReviewOutcome["summary"]> {
  const comments = fresh ? [] : await octokit.paginate(octokit.rest.issues.listComments, { owner: t.owner, repo: t.repo, issue_number: t.number, per_page: 100 });
  const mine = comments.find((c) => c.user?.login === login && c.body?.startsWith(SUMMARY_MARKER));
  if (mine) {
    if (mine.body === body) return "unchanged";
    await octokit.rest.issues.updateComment({ owner: t.owner, repo: t.repo, comment_id: mine.id, body });
    return "updated";
  }
  // A clean PR that never had findings gets no comment: the green check says it.
  if (!hasFindings) return "none";
  await commentOnce(octokit, t, t.number, body, SUMMARY_MARKER, login);
  return "created";
}

/** Links to lines at the head SHA, on whatever host serves the PR (github.com or an Enterprise Server). */
function blobUrlFor(pullHtmlUrl: string, sha: string) {
  const repoUrl = pullHtmlUrl.replace(/\/pull\/\d+$/, "");
  return (path: string, line: number) => `${repoUrl}/blob/${sha}/${path.split("/").map(encodeURIComponent).join("/")}#L${line}`;
}

export async function reviewPullRequest(octokit: Octokit, t: PullTarget, deps: ReviewDeps): Promise<ReviewOutcome> {
  const configResult = await readRepoConfig(octokit, t);
  if (!configResult.ok) {
    const checkRunId = await upsertCheckRun(octokit, t, {
      conclusion: "failure",
      check: { title: `Invalid ${CONFIG_PATH}`, summary: `The review did not run: ${configResult.problem}\n\nFix the file on the default branch (\`${t.defaultBranch}\`).`, text: "", annotations: [] },
    }, await findCheckRun(octokit, t));
    return { conclusion: "config-error", findings: 0, inlinePosted: 0, summary: "none", checkRunId };
  }
  const config = configResult.config;
  const inScope = compileGlobs(config.paths);
  const changed = await listPullFiles(octokit, t);
  const reviewed = changed.filter((f) => f.status !== "removed" && inScope(f.filename));
  const pins = PIN_FILES.filter((p) => !reviewed.some((f) => f.filename === p));
  const commit = { owner: t.owner, repo: t.repo, sha: t.headSha };
  const texts = reviewed.length ? await readBlobs(octokit, commit, [...reviewed.map((f) => f.filename), ...pins]) : new Map<string, string | null>();

  const sources = [...texts].filter((e): e is [string, string] => e[1] !== null).map(([path, text]) => ({ path, text }));
  // Builders the changed recipes import from other modules, at the same SHA (judged with them, not reported on).
  const library = sources.length ? await readImportedModules(octokit, commit, sources) : [];
  const report = await deps.analyze(sources, {
    library,
    ...lintRunOptions(config, CONFIG_PATH, {}),
  });
  const reviewedPaths = new Set(reviewed.map((f) => f.filename));
  const findings = report.findings.filter((f) => reviewedPaths.has(f.location.file) || f.related.some((r) => reviewedPaths.has(r.location.file)));
  const files: ReviewedFile[] = reviewed
    .filter((f) => texts.get(f.filename) != null)
    .map((f) => ({ path: f.filename, text: texts.get(f.filename)!, hunks: parsePatch(f.patch) }));
  const unreadable = reviewed.filter((f) => texts.get(f.filename) === null).map((f) => ({ file: f.filename, severity: "warning" as const, code: "unreadable" as const, message: "binary or too large to read through the API" }));
  const prNotes: Finding[] = tePinChangeNotes(changed);

  const login = await deps.botLogin(octokit);
  const draftMode = t.draft ? config.review.drafts : "full";
  if (draftMode === "skip") return { conclusion: "skipped", findings: 0, inlinePosted: 0, summary: "none", checkRunId: 0 };
  const commentsAllowed = config.review.mode !== "check-only" && draftMode === "full";
  const base = {
    headSha: t.headSha,
    findings,
    diagnostics: [...report.diagnostics.filter((d) => reviewedPaths.has(d.file)), ...unreadable],
    files,
    configurations: report.units.filter((u) => reviewedPaths.has(u.location.file)).length,
    rules: ALL_RULES,
    maxInlineComments: config.review.max_inline_comments,
    draft: !commentsAllowed,
    prNotes,
    blobUrl: t.htmlUrl ? blobUrlFor(t.htmlUrl, t.headSha) : undefined,
    gpusPerNode: report.project.gpusPerNode,
    docUrl: docUrlFor(runtimeEnv()),
  };
  // The check run is posted first, so a just-opened PR without one carries nothing of the bot's yet:
  // no need to list its comments. Otherwise ask only when there is something to comment.
  const existing = await findCheckRun(octokit, t);
  const fresh = t.opened === true && existing === undefined;
  const firstPlan = planReview({ ...base, alreadyCommented: new Set() });
  const plan = firstPlan.inline.length && !fresh ? planReview({ ...base, alreadyCommented: await botReviewFingerprints(octokit, t, login) }) : firstPlan;

  const checkRunId = await upsertCheckRun(octokit, t, plan, existing);
  const inlinePosted = commentsAllowed ? await postReview(octokit, t, plan, config, findings.some((f) => f.severity === "error"), deps.log, login) : 0;
  const summary = commentsAllowed ? await upsertSummary(octokit, t, plan.summaryComment, login, findings.length + prNotes.length > 0 || plan.conclusion === "failure", fresh) : "none";
  deps.log.info({ pr: `${t.owner}/${t.repo}#${t.number}`, sha: t.headSha, findings: findings.length, inlinePosted, summary, conclusion: plan.conclusion }, "HCP review done");
  const byRule: Record<string, number> = {};
  for (const f of findings) byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
  return { conclusion: plan.conclusion, findings: findings.length, inlinePosted, summary, checkRunId, byRule };
}

/** Why GitHub stopped the review, in the bot's own words (GitHub's error text is not echoed). */
function notDoneReason(error: unknown): string | undefined {
  if (error instanceof GitHubUnavailable) return `${error.message}.`;
  if (isAmbiguousFailure(error)) {
    const status = (error as { status?: number }).status;
    return status === undefined ? "GitHub could not be reached." : `GitHub answered ${status} to a request that is not repeated blindly.`;
  }
  return undefined;
}

/**
 * The visible trace of a review that GitHub kept failing: a failed check run on the head SHA
 * saying why and what runs it again. One try only (GitHub is failing); a failure is logged.
 */
export async function reportReviewNotDone(octokit: Octokit, t: PullTarget, error: unknown, log: ReviewDeps["log"]): Promise<boolean> {
  const reason = notDoneReason(error);
  if (!reason) return false;
  try {
    await octokit.rest.checks.create({
      owner: t.owner,
      repo: t.repo,
      name: CHECK_NAME,
      head_sha: t.headSha,
      status: "completed",
      conclusion: "failure",
      completed_at: new Date().toISOString(),
      output: {
        title: "HCP review not done: GitHub kept failing",
        summary: `The review could not read or post what it needs. ${reason}\n\nIt runs again on the next push to this pull request, on a redelivery of the webhook, or when you press **Re-run** on this check.`,
      },
      request: { retries: false },
    });
    return true;
  } catch (e) {
    log.warn({ err: e, pr: `${t.owner}/${t.repo}#${t.number}` }, "could not leave the check run saying the review was not done");
    return false;
  }
}
