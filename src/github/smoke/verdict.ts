// The verdict of a finished smoke run, from what GitHub holds about it: the jobs API (the
// job's and the "Smoke run" step's conclusions), the job log (the runner's report: its nonce
// delimiter and the SHA-256 of the files it wrote), and the log artifact. The log decides;
// the facts around it can only make the verdict worse (src/core/smoke/run-facts.ts).
import type { BotOctokit } from "../host.ts";
import { applyRunFacts, SMOKE_STEP_NAME, type RunFacts } from "../../core/smoke/run-facts.ts";
import { createRunnerReportScanner, type ScannedReport } from "../../core/smoke/runner-report.ts";
import { artifactHasLog, endWith, judgeArtifact, noRunnerHint, parserFor, type ArtifactCaps, type ArtifactJob, type ArtifactOutcome, type LegParser, type RunnerHint } from "../../core/smoke/artifact.ts";
import type { Verdict } from "../../core/verdict/index.ts";
import { missingComparison, type Comparison, type ReferenceMode } from "../../core/ab/index.ts";
import type { SmokeRequest } from "../../store/types.ts";

type Octokit = BotOctokit;

/** Compressed; a 2-iteration smoke log is a few MB, and the archive is held in memory while read. */
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;

/** templates/hcp-smoke.yml names its job `hcp smoke <request id> <sha>`. */
const SMOKE_JOB = /^hcp smoke\b/;

/**
 * Judges an artifact (src/core/smoke/artifact.ts). The Node server runs it on a worker thread
 * (src/node/artifact-judge.ts); the default runs it here, streaming and capped all the same.
 */
export type ArtifactJudge = (job: ArtifactJob) => Promise<ArtifactOutcome>;

export interface RunVerdictOptions {
  /** Largest log artifact (compressed) the bot downloads; default MAX_ARTIFACT_BYTES. */
  maxArtifactBytes?: number;
  /** How far the artifact's files may inflate; default DEFAULT_ARTIFACT_CAPS. */
  artifactCaps?: ArtifactCaps;
  judgeArtifact?: ArtifactJudge;
}

/** Lines of text to the parser in batches of about a megabyte (one encode per batch, not per line). */
function lineFeeder(parser: LegParser) {
  const encoder = new TextEncoder();
  let batch: string[] = [];
  let size = 0;
  const flush = () => {
    if (batch.length) parser.push(encoder.encode(batch.join("")));
    batch = [];
    size = 0;
  };
  return {
    line(text: string) {
      batch.push(text, "\n");
      size += text.length + 1;
      if (size >= 1 << 20) flush();
    },
    end(hint: RunnerHint) {
      flush();
      return endWith(parser, hint);
    },
  };
}

async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

interface SmokeJob {
  id: number;
  conclusion: string | null;
  steps?: { name: string; conclusion: string | null }[];
}

async function smokeJobOf(octokit: Octokit, r: { owner: string; repo: string }, runId: number): Promise<SmokeJob | undefined> {
  const { data } = await octokit.rest.actions.listJobsForWorkflowRun({ owner: r.owner, repo: r.repo, run_id: runId, per_page: 100 });
  return data.jobs.find((j) => SMOKE_JOB.test(j.name));
}

/**
 * The job log, streamed (never held whole: code under test writes it) through the runner-report
 * scanner. With `judge`, the run's output (or, without a commitment, the whole log) is judged
 * as it streams, for a verdict from the job log when the artifact cannot give one.
 */
async function scanJobLog(octokit: Octokit, r: { owner: string; repo: string }, job: SmokeJob | undefined, judge: { request: SmokeRequest } | undefined): Promise<{ report: ScannedReport; verdict?: Verdict }> {
  if (!job) return { report: await createRunnerReportScanner().end() }; // an empty log: no commitment
  const run = judge ? lineFeeder(parserFor(judge.request, noRunnerHint())) : undefined;
  const before = judge ? lineFeeder(parserFor(judge.request, noRunnerHint())) : undefined;
  const scanner = createRunnerReportScanner(judge ? (line, part) => (part === "run" ? run : before)!.line(line) : undefined);
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs", { owner: r.owner, repo: r.repo, job_id: job.id, request: { parseSuccessResponseBody: false } });
  const body = data as unknown as ReadableStream<Uint8Array> | string | ArrayBuffer | null;
  if (body instanceof ReadableStream) {
    for await (const chunk of chunksOf(body)) await scanner.push(chunk);
  } else if (body !== null) {
    await scanner.push(typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body));
  }
  const report = await scanner.end();
  if (!run || !before) return { report };
  const committed = report.ok || report.committed;
  return { report, verdict: (committed ? run : before).end(noRunnerHint()) };
}

type Download = { zip: Uint8Array } | { tooLarge: number } | undefined;

/** The run's log artifact, downloaded (compressed) unless it is over `maxBytes`. */
async function downloadArtifact(octokit: Octokit, r: { owner: string; repo: string }, request: SmokeRequest, runId: number, maxBytes: number): Promise<Download> {
  const { data: artifacts } = await octokit.rest.actions.listWorkflowRunArtifacts({ owner: r.owner, repo: r.repo, run_id: runId, per_page: 100 });
  const artifact = artifacts.artifacts.find((a) => a.name === `hcp-smoke-${request.id}` && !a.expired);
  if (!artifact) return undefined;
  // The log is written by code under test: a huge one must not take the bot's memory down.
  if (artifact.size_in_bytes > maxBytes) return { tooLarge: artifact.size_in_bytes };
  const { data } = await octokit.rest.actions.downloadArtifact({ owner: r.owner, repo: r.repo, artifact_id: artifact.id, archive_format: "zip" });
  return { zip: new Uint8Array(data as ArrayBuffer) };
}

/** Whether the judge has a smoke.log to read: an archive that is not a zip is its to report. */
function holdsLog(zip: Uint8Array): boolean {
  try {
    return artifactHasLog(zip);
  } catch {
    return true;
  }
}

const mb = (n: number) => (n / 1024 / 1024).toFixed(1);

/**
 * The verdict of a finished run: the artifact's smoke.log when it is the one the runner
 * hashed (else the job log between the runner's commitment and its report), judged with the
 * runner's facts from a verified verdict.json, then made worse by whatever GitHub's facts
 * contradict.
 */
export async function verdictForRun(
  octokit: Octokit,
  r: { owner: string; repo: string },
  request: SmokeRequest,
  runId: number,
  options: RunVerdictOptions = {},
): Promise<{ verdict: Verdict; note?: string; comparison?: Comparison }> {
  const maxArtifactBytes = options.maxArtifactBytes ?? MAX_ARTIFACT_BYTES;
  const job = await smokeJobOf(octokit, r, runId);
  const download = await downloadArtifact(octokit, r, request, runId, maxArtifactBytes);
  const zip = download && "zip" in download && holdsLog(download.zip) ? download.zip : undefined;
  // The job log is judged only when the artifact gives no log to judge.
  const fallback = !(download && "tooLarge" in download) && !zip;
  const { report, verdict: fromJobLog } = await scanJobLog(octokit, r, job, fallback ? { request } : undefined);
  const facts: Omit<RunFacts, "evidence"> = {
    job: job ? { conclusion: job.conclusion, stepConclusion: job.steps?.find((s) => s.name === SMOKE_STEP_NAME)?.conclusion ?? null } : null,
    report: report.ok ? { ok: true } : { ok: false, problem: report.problem },
  };
  const emptyLog = (evidence: RunFacts["evidence"]) => applyRunFacts(endWith(parserFor(request, noRunnerHint()), noRunnerHint()), { ...facts, evidence });
  const mode = referenceModeOf(request);

  if (download && "tooLarge" in download) {
    return {
      verdict: emptyLog({ kind: "job-log", why: "the log artifact was too large to read" }),
      note: `The log artifact is ${mb(download.tooLarge)} MB compressed, over the ${mb(maxArtifactBytes)} MB the bot reads; run \`hcp-bot verdict\` on it locally.`,
      ...(mode ? { comparison: missingComparison(mode, "the log artifact was too large to read") } : {}),
    };
  }
  if (zip) {
    const judge = options.judgeArtifact ?? judgeArtifact;
    const { expectHcp, overrides, gpus, compare, cp, sizes } = request;
    const outcome = await judge({ zip, request: { expectHcp, overrides, gpus, compare, cp, sizes }, report, ...(options.artifactCaps ? { caps: options.artifactCaps } : {}) });
    if (outcome.kind === "judged") {
      const verdict = applyRunFacts(outcome.verdict, { ...facts, evidence: outcome.evidence });
      const comparison = outcome.comparison ?? (mode ? missingComparison(mode, outcome.evidence.kind === "unreadable" ? outcome.evidence.problem : "the log artifact was not read") : undefined);
      return { verdict, ...(comparison ? { comparison } : {}) };
    }
  }
  const why = download ? "the log artifact holds no smoke.log at its root" : "no log artifact was uploaded";
  const noComparison = mode ? { comparison: missingComparison(mode, `${why}, so neither leg's log can be compared`) } : {};
  if (!job || !fromJobLog) return { verdict: emptyLog({ kind: "job-log", why }), note: "The run left no log to read.", ...noComparison };
  return { verdict: applyRunFacts(fromJobLog, { ...facts, evidence: { kind: "job-log", why } }), note: `${why[0]!.toUpperCase()}${why.slice(1)}; the verdict comes from the job log.`, ...noComparison };
}

function referenceModeOf(request: SmokeRequest): ReferenceMode | undefined {
  return request.compare === "p2p" || request.compare === "a2a" ? request.compare : undefined;
}
