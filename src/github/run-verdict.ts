// The verdict of a finished smoke run, from what GitHub holds about it: the jobs API (the
// job's and the "Smoke run" step's conclusions), the job log (the runner's report: its nonce
// delimiter and the SHA-256 of the files it wrote), and the log artifact. The log decides;
// the facts around it can only make the verdict worse (src/core/smoke/run-facts.ts).
import type { BotOctokit } from "./host.ts";
// Schemas are built on first use (z.lazy): zod schemas built at module load cost every
// CLI start and edge cold start, most of them before any request needs them.
import * as z from "zod";
import { applyRunFacts, SMOKE_STEP_NAME, type RunFacts } from "../core/smoke/run-facts.ts";
import { createRunnerReportScanner, sha256Hex, type FileDigest, type ScannedReport } from "../core/smoke/runner-report.ts";
import { createVerdictParser, ProbeKeySchema, requestedLayout, type Verdict } from "../core/verdict/index.ts";
import { listZipEntries, openZipEntry, type ZipEntry } from "../core/zip/reader.ts";
import { compareLegs, missingComparison, referenceOverrides, seriesOf, type Comparison, type ReferenceMode } from "../core/compare/index.ts";
import type { SmokeRequest } from "../store/types.ts";

type Octokit = BotOctokit;

/** Compressed; a 2-iteration smoke log is a few MB, and the archive is held in memory while read. */
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;
/** verdict.json is a few KB; anything bigger (a deflate bomb among the run's files) is not read. */
const MAX_HINT_BYTES = 256 * 1024;

/** templates/hcp-smoke.yml names its job `hcp smoke <request id> <sha>`. */
const SMOKE_JOB = /^hcp smoke\b/;

/**
 * What the runner's verdict.json says about the run itself (not about the log): how it ended
 * and on which GPU. The verdict is recomputed from the log; these are its facts of the run.
 * A field that is missing or malformed is unknown, never an error.
 */
const RunnerHintSchema = z.lazy(() =>
  z.object({
    exitCode: z.number().int().nullable().catch(null),
    timedOut: z.boolean().catch(false),
    signal: z.string().regex(/^SIG[A-Z0-9]{1,10}$/).nullable().catch(null),
    throughput: z.object({ gpu: z.string().regex(/^[A-Za-z0-9 _-]{1,40}$/).nullable().catch(null) }).catch({ gpu: null }),
    /** The run's probe key, revealed once the run exited: without it no HCP-PROBE report counts. */
    probeKey: ProbeKeySchema.nullable().catch(null),
  }),
);
export type RunnerHint = z.infer<typeof RunnerHintSchema>;

const NO_HINT: RunnerHint = RunnerHintSchema.parse({});

/** What a leg's log is judged against: the HCP leg's request, or the reference leg's layout. */
type LegRequest = Pick<SmokeRequest, "expectHcp" | "overrides" | "gpus">;

/** The verdict parser for this request's log, judged with the runner's facts `hint`. */
function parserFor(request: LegRequest, hint: RunnerHint) {
  return createVerdictParser({
    expectHcp: request.expectHcp,
    // The dispatched overrides hold the plan's cp, cp_comm_type and sizes; a pass needs a
    // report from each of the plan's GPUs (one rank each).
    ...requestedLayout(request.overrides),
    worldSize: request.gpus,
    ...(hint.throughput.gpu ? { gpu: hint.throughput.gpu } : {}),
    ...(hint.probeKey ? { probeKey: hint.probeKey } : {}),
  });
}

function endWith(parser: ReturnType<typeof parserFor>, hint: RunnerHint): Verdict {
  return parser.end(hint.exitCode, { timedOut: hint.timedOut, ...(hint.signal ? { signal: hint.signal } : {}) });
}

/** Streams a log (bytes) through the verdict parser, never holding it whole. */
function verdictFromChunks(chunks: Iterable<Uint8Array>, request: LegRequest, hint: RunnerHint): Verdict {
  const parser = parserFor(request, hint);
  for (const chunk of chunks) parser.push(chunk);
  return endWith(parser, hint);
}

/** Lines of text to the parser in batches of about a megabyte (one encode per batch, not per line). */
function lineFeeder(parser: ReturnType<typeof parserFor>) {
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

/** The entry's bytes, or null once it passes `max` bytes (reading stops there). */
async function readEntry(bytes: Uint8Array, entry: ZipEntry, max: number): Promise<Uint8Array | null> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunksOf(openZipEntry(bytes, entry))) {
    total += chunk.byteLength;
    if (total > max) return null;
    parts.push(chunk);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function parseHint(bytes: Uint8Array | null): RunnerHint {
  if (!bytes) return NO_HINT;
  try {
    const parsed = RunnerHintSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? parsed.data : NO_HINT;
  } catch {
    return NO_HINT;
  }
}

/** Why a file of the artifact is not the one the runner hashed, or null when it is. */
async function digestProblem(name: string, bytes: Uint8Array | null, expected: FileDigest | undefined): Promise<string | null> {
  if (!expected) return `the runner's report names no SHA-256 for ${name}`;
  if (!bytes) return `${name} is missing from the artifact (or too large to read)`;
  const actual = await sha256Hex(bytes);
  if (bytes.byteLength !== expected.bytes || actual !== expected.sha256) {
    return `${name} has SHA-256 ${actual.slice(0, 16)}… (${bytes.byteLength} bytes), the runner wrote ${expected.sha256.slice(0, 16)}… (${expected.bytes} bytes)`;
  }
  return null;
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
  const run = judge ? lineFeeder(parserFor(judge.request, NO_HINT)) : undefined;
  const before = judge ? lineFeeder(parserFor(judge.request, NO_HINT)) : undefined;
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
  return { report, verdict: (committed ? run : before).end(NO_HINT) };
}

type Files = { log: Uint8Array | null; verdictJson: Uint8Array | null; referenceLog: Uint8Array | null; referenceVerdictJson: Uint8Array | null };
type ArtifactFiles = Files | { tooLarge: number } | undefined;

/** smoke.log and verdict.json at the artifact's root, exactly: the code under test can add files anywhere else. */
async function artifactFiles(octokit: Octokit, r: { owner: string; repo: string }, request: SmokeRequest, runId: number, maxBytes: number): Promise<ArtifactFiles> {
  const { data: artifacts } = await octokit.rest.actions.listWorkflowRunArtifacts({ owner: r.owner, repo: r.repo, run_id: runId, per_page: 100 });
  const artifact = artifacts.artifacts.find((a) => a.name === `hcp-smoke-${request.id}` && !a.expired);
  if (!artifact) return undefined;
  // The log is written by code under test: a huge one must not take the bot's memory down.
  if (artifact.size_in_bytes > maxBytes) return { tooLarge: artifact.size_in_bytes };
  const { data } = await octokit.rest.actions.downloadArtifact({ owner: r.owner, repo: r.repo, artifact_id: artifact.id, archive_format: "zip" });
  const bytes = new Uint8Array(data as ArrayBuffer);
  const entries = listZipEntries(bytes);
  const entry = (name: string) => entries.find((e) => e.name === name);
  const read = async (name: string, max: number) => {
    const e = entry(name);
    return e ? readEntry(bytes, e, max) : null;
  };
  return {
    log: await read("smoke.log", maxBytes * 8),
    verdictJson: await read("verdict.json", MAX_HINT_BYTES),
    // An A/B run's reference leg (smoke-run --compare); read only when the request asked for one.
    referenceLog: request.compare !== "none" && request.compare ? await read("reference.log", maxBytes * 8) : null,
    referenceVerdictJson: request.compare !== "none" && request.compare ? await read("reference.verdict.json", MAX_HINT_BYTES) : null,
  };
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
  maxArtifactBytes = MAX_ARTIFACT_BYTES,
): Promise<{ verdict: Verdict; note?: string; comparison?: Comparison }> {
  const job = await smokeJobOf(octokit, r, runId);
  const files = await artifactFiles(octokit, r, request, runId, maxArtifactBytes);
  // The job log is judged only when the artifact gives no log to judge.
  const fallback = !(files && "tooLarge" in files) && !files?.log;
  const { report, verdict: fromJobLog } = await scanJobLog(octokit, r, job, fallback ? { request } : undefined);
  const facts: Omit<RunFacts, "evidence"> = {
    job: job ? { conclusion: job.conclusion, stepConclusion: job.steps?.find((s) => s.name === SMOKE_STEP_NAME)?.conclusion ?? null } : null,
    report: report.ok ? { ok: true } : { ok: false, problem: report.problem },
  };
  const judge = (chunks: Iterable<Uint8Array>, hint: RunnerHint, evidence: RunFacts["evidence"]) => applyRunFacts(verdictFromChunks(chunks, request, hint), { ...facts, evidence });

  if (files && "tooLarge" in files) {
    return {
      verdict: judge([], NO_HINT, { kind: "job-log", why: "the log artifact was too large to read" }),
      note: `The log artifact is ${mb(files.tooLarge)} MB compressed, over the ${mb(maxArtifactBytes)} MB the bot reads; run \`hcp-bot verdict\` on it locally.`,
      ...(referenceModeOf(request) ? { comparison: missingComparison(referenceModeOf(request)!, "the log artifact was too large to read") } : {}),
    };
  }
  if (files?.log) {
    const problems = report.ok
      ? [await digestProblem("smoke.log", files.log, report.digests["smoke.log"]), await digestProblem("verdict.json", files.verdictJson, report.digests["verdict.json"])].filter((p): p is string => p !== null)
      : [];
    const evidence: RunFacts["evidence"] = problems.length ? { kind: "tampered", problem: problems.join("; ") } : { kind: "artifact" };
    // A verdict.json that is not the runner's says nothing about the run.
    const hint = problems.length || !report.ok ? NO_HINT : parseHint(files.verdictJson);
    const verdict = judge([files.log], hint, evidence);
    const mode = referenceModeOf(request);
    if (!mode) return { verdict };
    return { verdict, comparison: await comparisonOf(request, mode, verdict, files, report) };
  }
  const why = files ? "the log artifact holds no smoke.log at its root" : "no log artifact was uploaded";
  const mode = referenceModeOf(request);
  const noComparison = mode ? { comparison: missingComparison(mode, `${why}, so neither leg's log can be compared`) } : {};
  if (!job || !fromJobLog) return { verdict: judge([], NO_HINT, { kind: "job-log", why }), note: "The run left no log to read.", ...noComparison };
  return { verdict: applyRunFacts(fromJobLog, { ...facts, evidence: { kind: "job-log", why } }), note: `${why[0]!.toUpperCase()}${why.slice(1)}; the verdict comes from the job log.`, ...noComparison };
}

function referenceModeOf(request: SmokeRequest): ReferenceMode | undefined {
  return request.compare === "p2p" || request.compare === "a2a" ? request.compare : undefined;
}

/**
 * The A/B comparison of a run whose smoke.log was read: the reference leg's log and verdict.json
 * from the same artifact, each checked against the runner's report like the run's own, the
 * reference judged for its own layout (the same overrides with cp_comm_type and the sizes
 * changed, no HCP expected). Whatever is missing or not the runner's leaves the comparison
 * missing, with the reason; the HCP leg's verdict never depends on it.
 */
async function comparisonOf(request: SmokeRequest, mode: ReferenceMode, verdict: Verdict, files: Files, report: ScannedReport): Promise<Comparison> {
  const sizes = request.sizes ?? [1, 1];
  const hcp = { verdict, series: files.log ? seriesOf(files.log) : [] };
  const without = (why: string) => compareLegs({ mode, cp: request.cp, sizes, hcp, reference: { missing: why } });
  if (!report.ok) return without(`${report.problem}, so the reference leg's log cannot be tied to the runner`);
  if (!files.referenceLog) {
    return without(
      report.digests["reference.log"]
        ? "reference.log is missing from the artifact (or too large to read)"
        : `the run has no ${mode} reference leg: the runner skipped it (the HCP leg failed) or the installed workflow does not pass compare (upgrade it with \`npx hcp-bot init-workflow --force\`)`,
    );
  }
  const problems = [await digestProblem("reference.log", files.referenceLog, report.digests["reference.log"]), await digestProblem("reference.verdict.json", files.referenceVerdictJson, report.digests["reference.verdict.json"])].filter((p): p is string => p !== null);
  if (problems.length) return without(`the reference leg's files are not what the runner wrote: ${problems.join("; ")}`);
  const hint = parseHint(files.referenceVerdictJson);
  const refRequest: LegRequest = { expectHcp: false, overrides: referenceOverrides(request.overrides, mode), gpus: request.gpus };
  const refVerdict = verdictFromChunks([files.referenceLog], refRequest, hint);
  return compareLegs({ mode, cp: request.cp, sizes, hcp, reference: { verdict: refVerdict, series: seriesOf(files.referenceLog) } });
}
