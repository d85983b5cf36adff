// GitHub Actions: workflow_dispatch (with return_run_details; a workflow added with its file
// is read at the dispatched commit), runs, jobs, artifacts and logs. Downloads answer 302 to
// a loopback URL, like GitHub's signed storage URLs.
import { parse as parseYaml } from "yaml";
import { getBoolean, getObject, getString } from "../json.ts";
import { storedZip } from "../zip.ts";
import { isSha, nowIso, toBuffer, type ArtifactState, type JobState, type RepoState, type WorkflowRunState, type WorkflowState } from "../state.ts";
import { HttpError, intParam, invalid, notFound, paginate, requireRepo, type Handler, type HandlerContext } from "./common.ts";

function keyOf(repo: RepoState): string {
  return `${repo.owner}/${repo.name}`.toLowerCase();
}

/** workflow_id is a number or the workflow's file name, as on GitHub. */
function requireWorkflow(ctx: HandlerContext, repo: RepoState): WorkflowState {
  const raw = ctx.params.workflow_id ?? "";
  const wf = [...ctx.core.state.workflows.values()].find((w) =>
    w.repoKey === keyOf(repo) && (/^\d+$/.test(raw) ? w.id === Number(raw) : w.path.split("/").at(-1) === raw),
  );
  if (!wf) throw notFound(ctx);
  return wf;
}

function requireRun(ctx: HandlerContext): { repo: RepoState; run: WorkflowRunState } {
  const repo = requireRepo(ctx);
  const run = ctx.core.state.workflowRuns.get(intParam(ctx, "run_id"));
  if (!run || run.repoKey !== keyOf(repo)) throw notFound(ctx);
  return { repo, run };
}

type Declared = Readonly<Record<string, { required?: boolean; default?: unknown }>>;

/** GitHub's checks of a dispatch's inputs: no undeclared one, every required one given or defaulted. */
function checkInputs(ctx: HandlerContext, declared: Declared | undefined, inputs: Record<string, unknown>): void {
  if (!declared) return;
  const unexpected = Object.keys(inputs).filter((k) => !(k in declared));
  if (unexpected.length > 0) throw invalid(ctx, `Unexpected inputs provided: [${unexpected.map((k) => JSON.stringify(k)).join(", ")}]`);
  for (const [name, decl] of Object.entries(declared)) {
    const defaulted = decl.default !== undefined && decl.default !== null && decl.default !== "";
    if (decl.required && !(name in inputs) && !defaulted) throw invalid(ctx, `Required input '${name}' not provided`);
  }
}

/** The workflow as its file on the dispatched commit says: GitHub runs that file, not a registration. */
function workflowAt(ctx: HandlerContext, wf: WorkflowState, sha: string): { inputs?: Declared; runName?: string; jobName?: string } {
  if (!wf.fromFile) return wf;
  const text = ctx.core.state.commits.get(sha)?.get(wf.path);
  if (text === undefined) throw notFound(ctx);
  const doc = parseYaml(typeof text === "string" ? text : Buffer.from(text).toString("utf8")) as Record<string, unknown> | null;
  const on = doc?.on ?? doc?.true;
  const events = typeof on === "string" ? { [on]: null } : Array.isArray(on) ? Object.fromEntries(on.map((e) => [String(e), null])) : ((on ?? {}) as Record<string, unknown>);
  if (!("workflow_dispatch" in events)) throw invalid(ctx, "Workflow does not have 'workflow_dispatch' trigger");
  const trigger = (events.workflow_dispatch ?? {}) as { inputs?: Declared };
  const jobs = Object.values((doc?.jobs ?? {}) as Record<string, { name?: unknown }>);
  const runName = typeof doc?.["run-name"] === "string" ? doc["run-name"] : undefined;
  const jobName = typeof jobs[0]?.name === "string" ? jobs[0].name : undefined;
  return { inputs: trigger.inputs ?? {}, ...(runName ? { runName } : {}), ...(jobName ? { jobName } : {}) };
}

/** `run-name` as GitHub renders it for a dispatch: `${{ inputs.x }}` replaced by the input. */
function renderRunName(template: string, inputs: Record<string, unknown>): string {
  return template.replace(/\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}/g, (_, name: string) => String(inputs[name] ?? ""));
}

const dispatch: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const state = ctx.core.state;
  const wf = requireWorkflow(ctx, repo);
  const ref = getString(ctx.body, "ref") ?? "";
  // a branch or tag name; a bare sha is refused like on GitHub
  const sha = isSha(ref) ? undefined : state.resolveRef(repo, ref);
  if (sha === undefined) throw invalid(ctx, `No ref found for: ${ref}`);
  const inputs = getObject(ctx.body, "inputs") ?? {};
  const file = workflowAt(ctx, wf, sha);
  checkInputs(ctx, file.inputs, inputs);
  const previous = [...state.workflowRuns.values()].filter((r) => r.workflowId === wf.id).length;
  const now = nowIso();
  const run: WorkflowRunState = {
    id: state.nextId(), repoKey: keyOf(repo), workflowId: wf.id, runNumber: previous + 1,
    headBranch: ref.replace(/^refs\/(heads|tags)\//, ""), headSha: sha, event: "workflow_dispatch", inputs,
    ...(file.runName ? { displayTitle: renderRunName(file.runName, inputs) } : {}),
    // An installation token acts as the app; any other token as the user it names (none here: the app).
    status: "queued", conclusion: null, createdAt: now, updatedAt: now, actor: ctx.core.bot,
  };
  state.workflowRuns.set(run.id, run);
  if (file.jobName) {
    const job = { id: state.nextId(), runId: run.id, name: renderRunName(file.jobName, inputs), status: "queued", conclusion: null, log: "", steps: [] };
    state.jobs.set(job.id, job);
  }
  state.dispatches.push({ repoKey: run.repoKey, workflowId: wf.id, ref, inputs, runId: run.id });
  if (getBoolean(ctx.body, "return_run_details") !== true || !state.dispatchReturnsRunDetails) return { status: 204 };
  const runUrl = `${ctx.render.api}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}`;
  return { status: 200, body: { workflow_run_id: run.id, run_url: runUrl, html_url: `${ctx.render.web}/${repo.owner}/${repo.name}/actions/runs/${run.id}` } };
};

const getRun: Handler = (ctx) => {
  const { repo, run } = requireRun(ctx);
  return { status: 200, body: ctx.render.workflowRun(repo, run) };
};

const listRuns: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const wf = requireWorkflow(ctx, repo);
  const q = ctx.query;
  const runs = [...ctx.core.state.workflowRuns.values()]
    .filter((r) => r.workflowId === wf.id)
    .filter((r) => (q.get("event") ?? r.event) === r.event && (q.get("head_sha") ?? r.headSha) === r.headSha)
    .filter((r) => (q.get("branch") ?? r.headBranch) === r.headBranch && (q.get("status") ?? r.status) === r.status)
    .sort((a, b) => b.id - a.id);
  const page = paginate(ctx, runs);
  return { status: 200, headers: page.headers, body: { total_count: runs.length, workflow_runs: page.items.map((r) => ctx.render.workflowRun(repo, r)) } };
};

const cancelRun: Handler = (ctx) => {
  const { run } = requireRun(ctx);
  if (run.status === "completed") {
    throw new HttpError(409, { message: "Cannot cancel a workflow run that is completed.", documentation_url: ctx.docUrl, status: "409" });
  }
  run.status = "completed";
  run.conclusion = "cancelled";
  run.updatedAt = nowIso();
  for (const job of ctx.core.state.jobs.values()) {
    if (job.runId === run.id && job.status !== "completed") Object.assign(job, { status: "completed", conclusion: "cancelled" });
  }
  return { status: 202, body: {} };
};

function artifactZip(a: ArtifactState): Buffer {
  return a.zip ? Buffer.from(a.zip.buffer, a.zip.byteOffset, a.zip.byteLength) : storedZip(a.files);
}

const listArtifacts: Handler = (ctx) => {
  const { repo, run } = requireRun(ctx);
  const name = ctx.query.get("name");
  const all = [...ctx.core.state.artifacts.values()].filter((a) => a.runId === run.id && (name === null || a.name === name));
  const page = paginate(ctx, all);
  return {
    status: 200, headers: page.headers,
    body: { total_count: all.length, artifacts: page.items.map((a) => ctx.render.artifact(repo, a, artifactZip(a).length)) },
  };
};

const downloadArtifact: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const artifact = ctx.core.state.artifacts.get(intParam(ctx, "artifact_id"));
  if (!artifact || artifact.repoKey !== keyOf(repo) || ctx.params.archive_format !== "zip") throw notFound(ctx);
  if (artifact.expired) throw new HttpError(410, { message: "Artifact has expired", documentation_url: ctx.docUrl, status: "410" });
  const location = ctx.core.registerDownload(artifactZip(artifact), "application/zip");
  return { status: 302, headers: { location } };
};

const listJobs: Handler = (ctx) => {
  const { repo, run } = requireRun(ctx);
  const jobs = [...ctx.core.state.jobs.values()].filter((j) => j.runId === run.id);
  const page = paginate(ctx, jobs);
  return { status: 200, headers: page.headers, body: { total_count: jobs.length, jobs: page.items.map((j) => ctx.render.job(repo, j)) } };
};

function requireJob(ctx: HandlerContext): { repo: RepoState; job: JobState } {
  const repo = requireRepo(ctx);
  const job = ctx.core.state.jobs.get(intParam(ctx, "job_id"));
  const run = job ? ctx.core.state.workflowRuns.get(job.runId) : undefined;
  if (!job || run?.repoKey !== keyOf(repo)) throw notFound(ctx);
  return { repo, job };
}

const getJob: Handler = (ctx) => {
  const { repo, job } = requireJob(ctx);
  return { status: 200, body: ctx.render.job(repo, job) };
};

const downloadJobLogs: Handler = (ctx) => {
  const { job } = requireJob(ctx);
  const location = ctx.core.registerDownload(toBuffer(job.log), "text/plain; charset=utf-8");
  return { status: 302, headers: { location } };
};

export const actionHandlers: Record<string, Handler> = {
  "actions/create-workflow-dispatch": dispatch,
  "actions/get-workflow-run": getRun,
  "actions/list-workflow-runs": listRuns,
  "actions/cancel-workflow-run": cancelRun,
  "actions/list-workflow-run-artifacts": listArtifacts,
  "actions/download-artifact": downloadArtifact,
  "actions/list-jobs-for-workflow-run": listJobs,
  "actions/get-job-for-workflow-run": getJob,
  "actions/download-job-logs-for-workflow-run": downloadJobLogs,
};
