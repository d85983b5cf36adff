// Check runs, with GitHub's limits: 50 annotations per request, 65535-char
// summary/text, conclusion required for `completed`; annotations accumulate.
import { getArray, getObject, getString, isObject, type JsonObject } from "../json.ts";
import { nowIso, type AnnotationState, type CheckRunState, type FakeState, type RepoState } from "../state.ts";
import { HttpError, intParam, invalid, notFound, paginate, requireRepo, type Handler, type HandlerContext } from "./common.ts";

export const MAX_ANNOTATIONS_PER_REQUEST = 50;
export const MAX_OUTPUT_CHARS = 65535;

function knownCommit(state: FakeState, repo: RepoState, sha: string): boolean {
  if (state.commits.has(sha)) return true;
  const key = `${repo.owner}/${repo.name}`.toLowerCase();
  return [...state.pulls.values()].some((p) => p.repoKey === key && (p.head.sha === sha || p.base.sha === sha));
}

function requireRun(ctx: HandlerContext): { repo: RepoState; run: CheckRunState } {
  const repo = requireRepo(ctx);
  const run = ctx.core.state.checkRuns.get(intParam(ctx, "check_run_id"));
  if (!run || run.repoKey !== `${repo.owner}/${repo.name}`.toLowerCase()) throw notFound(ctx);
  return { repo, run };
}

function toAnnotation(ctx: HandlerContext, raw: JsonObject, index: number): AnnotationState {
  const start = Number(raw.start_line);
  const end = Number(raw.end_line);
  if (end < start) throw invalid(ctx, "Invalid request.", [{ resource: "CheckRun", code: "invalid", field: `output.annotations[${index}].end_line`, message: "end_line must be >= start_line" }]);
  if ((raw.start_column !== undefined || raw.end_column !== undefined) && start !== end) {
    // GitHub: columns are only supported when start_line == end_line
    throw invalid(ctx, "Invalid request.", [{ resource: "CheckRun", code: "invalid", field: `output.annotations[${index}].start_column`, message: "start_column and end_column may only be used when start_line equals end_line" }]);
  }
  const level = getString(raw, "annotation_level");
  const out: AnnotationState = {
    path: getString(raw, "path") ?? "", start_line: start, end_line: end,
    annotation_level: level === "warning" || level === "failure" ? level : "notice", message: getString(raw, "message") ?? "",
    ...(typeof raw.start_column === "number" ? { start_column: raw.start_column } : {}),
    ...(typeof raw.end_column === "number" ? { end_column: raw.end_column } : {}),
    ...(typeof raw.title === "string" ? { title: raw.title } : {}),
    ...(typeof raw.raw_details === "string" ? { raw_details: raw.raw_details } : {}),
  };
  return out;
}

/** Apply `output`: title/summary/text replace, annotations append (GitHub keeps earlier ones). */
function applyOutput(ctx: HandlerContext, run: CheckRunState, output: JsonObject): void {
  const annotations = (getArray(output, "annotations") ?? []).filter(isObject);
  if (annotations.length > MAX_ANNOTATIONS_PER_REQUEST) {
    throw invalid(ctx, "Invalid request.", [{ resource: "CheckRun", code: "invalid", field: "output.annotations", message: `Only ${MAX_ANNOTATIONS_PER_REQUEST} annotations are allowed per request` }]);
  }
  for (const field of ["summary", "text"] as const) {
    const v = getString(output, field);
    if (v !== undefined && v.length > MAX_OUTPUT_CHARS) {
      throw invalid(ctx, "Invalid request.", [{ resource: "CheckRun", code: "invalid", field: `output.${field}`, message: `${field} is too long (maximum is ${MAX_OUTPUT_CHARS} characters)` }]);
    }
  }
  const parsed = annotations.map((a, i) => toAnnotation(ctx, a, i));
  run.output = {
    title: getString(output, "title") ?? run.output.title,
    summary: getString(output, "summary") ?? run.output.summary,
    text: getString(output, "text") ?? run.output.text,
  };
  run.annotations.push(...parsed);
}

/** status/conclusion/timestamps as GitHub derives them. */
function applyStatus(ctx: HandlerContext, run: CheckRunState, body: JsonObject): void {
  const status = getString(body, "status");
  const conclusion = getString(body, "conclusion");
  if (conclusion === "stale") throw invalid(ctx, "Invalid request.", [{ resource: "CheckRun", code: "invalid", field: "conclusion", message: "Only GitHub can set the stale conclusion" }]);
  if (conclusion !== undefined) {
    run.conclusion = conclusion;
    run.status = "completed";
  } else if (status !== undefined) {
    if (status === "completed" && run.conclusion === null) {
      throw invalid(ctx, "Invalid request.\n\n\"conclusion\" wasn't supplied.", [{ resource: "CheckRun", code: "missing_field", field: "conclusion" }]);
    }
    run.status = status;
  }
  const startedAt = getString(body, "started_at");
  if (startedAt !== undefined) run.startedAt = startedAt;
  if (run.status === "completed") run.completedAt = getString(body, "completed_at") ?? run.completedAt ?? nowIso();
  const details = getString(body, "details_url");
  if (details !== undefined) run.detailsUrl = details;
  const external = getString(body, "external_id");
  if (external !== undefined) run.externalId = external;
  const name = getString(body, "name");
  if (name !== undefined) run.name = name;
  const actions = getArray(body, "actions");
  if (actions !== undefined) run.actions = actions;
}

const createCheckRun: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const state = ctx.core.state;
  const headSha = getString(ctx.body, "head_sha") ?? "";
  if (!knownCommit(state, repo, headSha)) {
    throw new HttpError(422, { message: `No commit found for SHA: ${headSha}`, documentation_url: ctx.docUrl, status: "422" });
  }
  const run: CheckRunState = {
    id: state.nextId(), repoKey: `${repo.owner}/${repo.name}`.toLowerCase(), headSha, name: getString(ctx.body, "name") ?? "",
    status: "queued", conclusion: null, startedAt: nowIso(), completedAt: null, detailsUrl: null, externalId: null,
    output: { title: null, summary: null, text: null }, annotations: [], actions: [], checkSuiteId: state.nextId(),
  };
  applyStatus(ctx, run, ctx.body);
  const output = getObject(ctx.body, "output");
  if (output) applyOutput(ctx, run, output);
  state.checkRuns.set(run.id, run);
  return { status: 201, body: ctx.render.checkRun(repo, run) };
};

const updateCheckRun: Handler = (ctx) => {
  const { repo, run } = requireRun(ctx);
  // validate into a copy so a refused PATCH changes nothing
  const draft: CheckRunState = { ...run, output: { ...run.output }, annotations: [...run.annotations] };
  applyStatus(ctx, draft, ctx.body);
  const output = getObject(ctx.body, "output");
  if (output) applyOutput(ctx, draft, output);
  Object.assign(run, draft);
  return { status: 200, body: ctx.render.checkRun(repo, run) };
};

const getCheckRun: Handler = (ctx) => {
  const { repo, run } = requireRun(ctx);
  return { status: 200, body: ctx.render.checkRun(repo, run) };
};

const listAnnotations: Handler = (ctx) => {
  const { run } = requireRun(ctx);
  const page = paginate(ctx, run.annotations);
  return {
    status: 200, headers: page.headers,
    body: page.items.map((a) => ({
      path: a.path, start_line: a.start_line, end_line: a.end_line, start_column: a.start_column ?? null,
      end_column: a.end_column ?? null, annotation_level: a.annotation_level, title: a.title ?? null, message: a.message,
      raw_details: a.raw_details ?? null, blob_href: "",
    })),
  };
};

const listForRef: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const state = ctx.core.state;
  const ref = ctx.params.ref ?? "";
  const sha = state.resolveRef(repo, ref) ?? ref;
  const key = `${repo.owner}/${repo.name}`.toLowerCase();
  const checkName = ctx.query.get("check_name");
  const status = ctx.query.get("status");
  let runs = [...state.checkRuns.values()].filter((r) => r.repoKey === key && r.headSha === sha);
  if (checkName !== null) runs = runs.filter((r) => r.name === checkName);
  if (status !== null) runs = runs.filter((r) => r.status === status);
  if ((ctx.query.get("filter") ?? "latest") === "latest") {
    // `latest`: the most recent run of each name
    const newest = new Map<string, CheckRunState>();
    for (const r of runs) if ((newest.get(r.name)?.id ?? -1) < r.id) newest.set(r.name, r);
    runs = [...newest.values()];
  }
  runs.sort((a, b) => b.id - a.id);
  const page = paginate(ctx, runs);
  return { status: 200, headers: page.headers, body: { total_count: runs.length, check_runs: page.items.map((r) => ctx.render.checkRun(repo, r)) } };
};

export const checkHandlers: Record<string, Handler> = {
  "checks/create": createCheckRun,
  "checks/update": updateCheckRun,
  "checks/get": getCheckRun,
  "checks/list-annotations": listAnnotations,
  "checks/list-for-ref": listForRef,
};
