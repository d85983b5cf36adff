// Reads the smoke workflow installed on the default branch (contents API) before a dispatch.
// What the file says is decided in src/core/smoke/workflow.ts; this layer fetches it, keeps
// each parsed file by its blob SHA (a file is parsed once however often it is dispatched), and
// remembers the version each repository has installed, for `/hcp status` and /healthz. The
// same module serves the Node and the edge hosts.
import type { BotOctokit } from "../host.ts";
import type { SmokePlan } from "../../core/commands/index.ts";
import type { RepoConfig } from "../../core/config/repo-config.ts";
import { untrusted } from "../../core/render/markdown.ts";
import {
  fitInputs,
  INIT_COMMAND,
  readSmokeWorkflow,
  skewNote,
  smokeInputs,
  versionNote,
  versionRelation,
  WORKFLOW_TEMPLATE_VERSION,
  type SmokeWorkflow,
  type WorkflowReading,
  type WorkflowStatus,
} from "../../core/smoke/workflow.ts";
import { recordWorkflowVersion, remember } from "./workflow-seen.ts";

export { installedWorkflowReport } from "./workflow-seen.ts";

export type InstalledWorkflow =
  | { kind: "found"; path: string; blobSha: string; workflow: SmokeWorkflow }
  | { kind: "unusable"; path: string; problem: string }
  | { kind: "missing"; path: string };

/** Parsed files by blob SHA; a blob never changes, so an entry is never stale. */
const byBlob = new Map<string, WorkflowReading>();
const MAX_CACHED = 512;

function decodeBase64(text: string): string {
  const bytes = Uint8Array.from(atob(text.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/**
 * The workflow file `.github/workflows/<file>` at `ref` (the default branch's commit the
 * dispatch will run, or the branch name). Errors other than a 404 propagate: the caller
 * cannot dispatch safely without knowing the file.
 */
export async function readInstalledWorkflow(octokit: BotOctokit, r: { owner: string; repo: string }, file: string, ref: string): Promise<InstalledWorkflow> {
  const path = `.github/workflows/${file}`;
  let data: unknown;
  try {
    ({ data } = await octokit.rest.repos.getContent({ owner: r.owner, repo: r.repo, path, ref }));
  } catch (error) {
    if ((error as { status?: number }).status !== 404) throw error;
    recordWorkflowVersion(r, path, null);
    return { kind: "missing", path };
  }
  const blob = data as { type?: string; sha?: string; content?: string; encoding?: string };
  if (Array.isArray(data) || blob.type !== "file" || !blob.sha) return { kind: "unusable", path, problem: `${path} is not a file` };
  let reading = byBlob.get(blob.sha);
  if (!reading) {
    reading = blob.encoding === "base64" && typeof blob.content === "string"
      ? readSmokeWorkflow(decodeBase64(blob.content), path)
      : { ok: false, problem: `${path} is too large to read through the contents API` };
    remember(byBlob, blob.sha, reading, MAX_CACHED);
  }
  recordWorkflowVersion(r, path, reading.ok ? reading.workflow.version : null);
  return reading.ok ? { kind: "found", path, blobSha: blob.sha, workflow: reading.workflow } : { kind: "unusable", path, problem: reading.problem };
}

export type WorkflowFit =
  | { ok: true; declared: ReadonlySet<string>; note: string | null; skipped: string[] }
  | { ok: false; reason: string };

/**
 * Before anything is queued: the installed smoke workflow exists at `workflowSha` (else the
 * default branch), has a `workflow_dispatch` trigger, and can take this request. `declared`
 * is what the dispatch may send; `note` says what it could not send (markdown).
 */
export async function fitInstalledWorkflow(
  octokit: BotOctokit,
  r: { owner: string; repo: string; defaultBranch: string },
  config: RepoConfig,
  workflowSha: string | null,
  p: { plan: SmokePlan; sha: string; pr: number },
): Promise<WorkflowFit> {
  const installed = await readInstalledWorkflow(octokit, r, config.smoke.workflow, workflowSha ?? r.defaultBranch);
  if (installed.kind === "missing") {
    return { ok: false, reason: `the workflow ${installed.path} was not found on ${r.defaultBranch}: add it with \`${INIT_COMMAND}\` (or set smoke.workflow in .github/hcp-bot.yml)` };
  }
  if (installed.kind === "unusable") return { ok: false, reason: installed.problem };
  // The request id and check run id are not known yet; only names and types are checked here.
  const fit = fitInputs(smokeInputs(p.plan, { sha: p.sha, pr: p.pr, requestId: "pending", checkRunId: 0 }), installed.workflow, installed.path);
  if (!fit.ok) return fit;
  return { ok: true, declared: new Set(Object.keys(fit.send)), note: skewNote(fit.dropped, { path: installed.path, version: installed.workflow.version }), skipped: fit.dropped.map((d) => d.name) };
}

/** `/hcp status` on either surface: the smoke workflow installed on the default branch and how its version stands. */
export async function installedWorkflowStatus(octokit: BotOctokit, r: { owner: string; repo: string; defaultBranch: string }, config: RepoConfig): Promise<WorkflowStatus> {
  const installed = await readInstalledWorkflow(octokit, r, config.smoke.workflow, r.defaultBranch);
  if (installed.kind === "missing") return { kind: "missing", path: installed.path, branch: r.defaultBranch };
  if (installed.kind === "unusable") return installed;
  const version = installed.workflow.version;
  return { kind: "found", path: installed.path, version, template: WORKFLOW_TEMPLATE_VERSION, relation: versionRelation(version) };
}

/** GitHub's `/hcp status`: a sentence when the installed smoke workflow is not this bot's template version (or cannot be used). */
export async function workflowStatusNote(octokit: BotOctokit, r: { owner: string; repo: string; defaultBranch: string }, config: RepoConfig): Promise<string | null> {
  const status = await installedWorkflowStatus(octokit, r, config);
  if (status.kind === "missing") return `No smoke workflow ${status.path} on ${status.branch}: add it with \`${INIT_COMMAND}\`.`;
  if (status.kind === "unusable") return `The smoke workflow cannot be used: ${untrusted(status.problem)}.`;
  return versionNote(status);
}
