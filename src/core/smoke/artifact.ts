// The verdict of a smoke run's log artifact (the zip the workflow uploads: smoke.log and
// verdict.json, and for an A/B run reference.log and reference.verdict.json). Code under test
// writes the logs, so the zip is hostile input: each file is inflated as a stream straight
// into the verdict parser, the iteration series and a SHA-256, never held whole, and no file
// may inflate past a cap, nor all of them together past another (a deflate bomb of 5.7 MB
// inflates to gigabytes). A file over a cap, or an archive that cannot be read, is judged as
// far as it was read and then failed with the reason: it is never a pass.
//
// Pure: the zip reader inflates with the Web DecompressionStream every host has, and the
// SHA-256 is computed incrementally (WebCrypto has no streaming digest). The Node server runs
// this on a worker thread (src/node/artifact-judge.ts), the edge hosts on their own thread.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import * as z from "zod";
import { compareLegs, createSeriesCollector, referenceOverrides, type Comparison, type IterationPoint, type ReferenceMode } from "../ab/index.ts";
import { createVerdictParser, ProbeKeySchema, requestedLayout, type Verdict } from "../verdict/index.ts";
import { listZipEntries, zipEntryChunks, ZipError, type InflateRaw, type ZipEntry } from "../zip/reader.ts";
import type { FileDigest, ReportedFile, ScannedReport } from "./runner-report.ts";

const MiB = 1024 * 1024;

/**
 * How much one file of the artifact may inflate to, and all of them together. A 2-iteration
 * smoke log is a few MB (a verbose 50-iteration one on 8 ranks some tens of MB); past these
 * the bot stops reading and the run is not judged a pass.
 */
export const DEFAULT_ARTIFACT_CAPS: ArtifactCaps = { entryBytes: 128 * MiB, totalBytes: 160 * MiB };
/** verdict.json is a few KB; anything bigger is not a verdict.json the runner wrote, and is not read. */
export const MAX_HINT_BYTES = 256 * 1024;

export interface ArtifactCaps {
  /** Inflated bytes one file may have. */
  entryBytes: number;
  /** Inflated bytes of every file read, together. */
  totalBytes: number;
}

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

let noHint: RunnerHint | undefined;
/** No facts of the run: every field unknown. */
export function noRunnerHint(): RunnerHint {
  return (noHint ??= RunnerHintSchema.parse({}));
}

/** What a leg's log is judged against: the HCP leg's request, or the reference leg's layout. */
export interface LegRequest {
  expectHcp: boolean;
  overrides: readonly string[];
  gpus: number;
}

/** The request an artifact is judged for (the fields of the stored SmokeRequest it needs). */
export interface ArtifactRequest extends LegRequest {
  compare?: "none" | ReferenceMode | undefined;
  cp: number;
  sizes: readonly [number, number] | null;
}

/** The verdict parser for a leg's log, judged with the runner's facts `hint`. */
export function parserFor(request: LegRequest, hint: RunnerHint) {
  return createVerdictParser({
    expectHcp: request.expectHcp,
    // The dispatched overrides hold the plan's cp, cp_comm_type and sizes; a pass needs a
    // report from each of the plan's GPUs (one rank each).
    ...requestedLayout([...request.overrides]),
    worldSize: request.gpus,
    ...(hint.throughput.gpu ? { gpu: hint.throughput.gpu } : {}),
    ...(hint.probeKey ? { probeKey: hint.probeKey } : {}),
  });
}

export type LegParser = ReturnType<typeof parserFor>;

export function endWith(parser: LegParser, hint: RunnerHint): Verdict {
  return parser.end(hint.exitCode, { timedOut: hint.timedOut, ...(hint.signal ? { signal: hint.signal } : {}) });
}

/** The judging of one artifact: its bytes, what it is judged for, and the runner's report from the job log. */
export interface ArtifactJob {
  zip: Uint8Array;
  request: ArtifactRequest;
  report: ScannedReport;
  caps?: ArtifactCaps;
}

/**
 * What the artifact showed. `no-log`: it holds no smoke.log at its root (the job log is judged
 * instead). `judged`: the log's verdict (before GitHub's facts of the run), where it came
 * from, and an A/B run's comparison.
 */
export type ArtifactOutcome =
  | { kind: "no-log" }
  | { kind: "judged"; verdict: Verdict; evidence: ArtifactEvidence; comparison?: Comparison };

/** As RunFacts["evidence"] (src/core/smoke/run-facts.ts), for an artifact that was read. */
export type ArtifactEvidence = { kind: "artifact" } | { kind: "tampered"; problem: string } | { kind: "unreadable"; problem: string };

/** Whether the archive holds a smoke.log at its root; throws ZipError when it is not a zip. */
export function artifactHasLog(zip: Uint8Array): boolean {
  return listZipEntries(zip).some((e) => e.name === "smoke.log");
}

const mib = (n: number) => `${(n / MiB).toFixed(n % MiB ? 1 : 0)} MiB`;

/** Inflated bytes left to read, per file and in all. */
class Budget {
  private used = 0;
  constructor(readonly caps: ArtifactCaps) {}
  /** How many of `n` more bytes of a file already `read` bytes long fit, and the cap that stops the rest. */
  take(read: number, n: number, max: number): { fits: number; over?: string } {
    const entryLeft = max - read;
    const totalLeft = this.caps.totalBytes - this.used;
    const fits = Math.max(0, Math.min(n, entryLeft, totalLeft));
    this.used += fits;
    if (fits === n) return { fits };
    return { fits, over: entryLeft <= totalLeft ? `${mib(max)} cap per file` : `${mib(this.caps.totalBytes)} cap for the whole artifact` };
  }
}

type Sink = (chunk: Uint8Array) => void;
/** One file of the archive, and how the host inflates. */
type FileOf = { zip: Uint8Array; entry: ZipEntry; inflateRaw?: InflateRaw | undefined };
/** A file read as a stream: its size and SHA-256, or why reading stopped. */
type Read = { bytes: number; sha256: string; problem?: undefined } | { bytes: number; problem: string; overCap: boolean };

/** Streams one entry into `sinks`, hashing it, until its end, a cap or a corrupt stream. */
async function streamEntry(file: FileOf, budget: Budget, max: number, sinks: Sink[]): Promise<Read> {
  const hash = sha256.create();
  let bytes = 0;
  try {
    for await (const value of zipEntryChunks(file.zip, file.entry, file.inflateRaw)) {
      const { fits, over } = budget.take(bytes, value.byteLength, max);
      const part = fits === value.byteLength ? value : value.subarray(0, fits);
      hash.update(part);
      for (const sink of sinks) sink(part);
      bytes += fits;
      // Leaving the loop stops the inflation.
      if (over) return { bytes, overCap: true, problem: `${file.entry.name} inflates past the bot's ${over}: only its first ${mib(bytes)} were read (a deflate bomb or runaway output; judge the whole log with \`hcp-bot verdict\`)` };
    }
    return { bytes, sha256: bytesToHex(hash.digest()) };
  } catch (error) {
    const why = error instanceof ZipError ? error.message : `its compressed data is corrupt (${error instanceof Error ? error.message : String(error)})`;
    return { bytes, overCap: false, problem: `${file.entry.name} cannot be read: ${why}` };
  }
}

/** A small file (verdict.json): its bytes, or null when missing, over MAX_HINT_BYTES or unreadable. */
async function readSmall(file: FileOf | undefined, budget: Budget): Promise<{ bytes: Uint8Array; digest: FileDigest } | null> {
  if (!file) return null;
  const parts: Uint8Array[] = [];
  const read = await streamEntry(file, budget, MAX_HINT_BYTES, [(c) => parts.push(c.slice())]);
  if (read.problem !== undefined) return null;
  const bytes = new Uint8Array(read.bytes);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.byteLength;
  }
  return { bytes, digest: { sha256: read.sha256, bytes: read.bytes } };
}

function parseHint(bytes: Uint8Array | null): RunnerHint {
  if (!bytes) return noRunnerHint();
  try {
    const parsed = RunnerHintSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? parsed.data : noRunnerHint();
  } catch {
    return noRunnerHint();
  }
}

/** Why a file of the artifact is not the one the runner hashed, or null when it is. */
function digestProblem(name: ReportedFile, actual: FileDigest | null, expected: FileDigest | undefined): string | null {
  if (!expected) return `the runner's report names no SHA-256 for ${name}`;
  if (!actual) return `${name} is missing from the artifact (or too large to read)`;
  if (actual.bytes !== expected.bytes || actual.sha256 !== expected.sha256) {
    return `${name} has SHA-256 ${actual.sha256.slice(0, 16)}… (${actual.bytes} bytes), the runner wrote ${expected.sha256.slice(0, 16)}… (${expected.bytes} bytes)`;
  }
  return null;
}

const digests = (report: ScannedReport) => (report.ok ? report.digests : {});

/** One leg's log judged as it streams: its verdict, series and the file's digest (or why it was not read whole). */
async function judgeLeg(file: FileOf, budget: Budget, request: LegRequest, hint: RunnerHint) {
  const parser = parserFor(request, hint);
  const series = createSeriesCollector();
  const read = await streamEntry(file, budget, budget.caps.entryBytes, [(c) => parser.push(c), (c) => series.push(c)]);
  return { verdict: endWith(parser, hint), series: series.end(), read };
}

/** An artifact that could not be judged at all: the verdict of an empty log, failed with `problem` by the run's facts. */
export function unreadableOutcome(request: LegRequest, problem: string): ArtifactOutcome {
  return { kind: "judged", verdict: endWith(parserFor(request, noRunnerHint()), noRunnerHint()), evidence: { kind: "unreadable", problem } };
}

/** What the host brings to the judging: a faster inflater than DecompressionStream (Node's zlib). */
export interface JudgeHost {
  inflateRaw?: InflateRaw;
}

/** Judges the artifact: see ArtifactOutcome. Never throws on the archive's content. */
export async function judgeArtifact(job: ArtifactJob, host: JudgeHost = {}): Promise<ArtifactOutcome> {
  const budget = new Budget(job.caps ?? DEFAULT_ARTIFACT_CAPS);
  let entries: ZipEntry[];
  try {
    entries = listZipEntries(job.zip);
  } catch (error) {
    return unreadableOutcome(job.request, `it is not a readable zip (${error instanceof Error ? error.message : String(error)})`);
  }
  // Exactly at the root: the code under test can add files anywhere else.
  const entry = (name: string): FileOf | undefined => {
    const found = entries.find((e) => e.name === name);
    return found && { zip: job.zip, entry: found, inflateRaw: host.inflateRaw };
  };
  const logEntry = entry("smoke.log");
  if (!logEntry) return { kind: "no-log" };
  const verdictJson = await readSmall(entry("verdict.json"), budget);
  const known = digests(job.report);
  // A verdict.json that is not the runner's says nothing about the run.
  const hintProblem = job.report.ok ? digestProblem("verdict.json", verdictJson?.digest ?? null, known["verdict.json"]) : null;
  const hint = hintProblem || !job.report.ok ? noRunnerHint() : parseHint(verdictJson?.bytes ?? null);
  const leg = await judgeLeg(logEntry, budget, job.request, hint);
  const evidence = evidenceOf(job.report, leg.read, hintProblem);
  const mode = job.request.compare === "p2p" || job.request.compare === "a2a" ? job.request.compare : undefined;
  if (!mode) return { kind: "judged", verdict: leg.verdict, evidence };
  const { comparison, unreadable } = await comparisonOf(job, entry, budget, mode, { verdict: leg.verdict, series: leg.series }, evidence);
  // An artifact the bot could not read in full is never a pass, whichever leg it stopped in.
  return { kind: "judged", verdict: leg.verdict, evidence: unreadable ? { kind: "unreadable", problem: unreadable } : evidence, comparison };
}

function evidenceOf(report: ScannedReport, read: Read, hintProblem: string | null): ArtifactEvidence {
  if (read.problem !== undefined) return { kind: "unreadable", problem: read.problem };
  if (!report.ok) return { kind: "artifact" }; // the missing report is a fact of its own (applyRunFacts)
  const problems = [digestProblem("smoke.log", { sha256: read.sha256, bytes: read.bytes }, report.digests["smoke.log"]), hintProblem].filter((p): p is string => p !== null);
  return problems.length ? { kind: "tampered", problem: problems.join("; ") } : { kind: "artifact" };
}

/**
 * The A/B comparison of a run whose smoke.log was read: the reference leg's log and verdict.json
 * from the same artifact, each checked against the runner's report like the run's own, the
 * reference judged for its own layout (the same overrides with cp_comm_type and the sizes
 * changed, no HCP expected). Whatever is missing or not the runner's leaves the comparison
 * missing, with the reason; the HCP leg's verdict never depends on it, except that a reference
 * log the bot could not read whole (`unreadable`) leaves the artifact unread, never a pass.
 */
async function comparisonOf(
  job: ArtifactJob,
  entry: (name: string) => FileOf | undefined,
  budget: Budget,
  mode: ReferenceMode,
  hcp: { verdict: Verdict; series: IterationPoint[] },
  evidence: ArtifactEvidence,
): Promise<{ comparison: Comparison; unreadable?: string }> {
  const { request, report } = job;
  const sizes: [number, number] = request.sizes ? [request.sizes[0], request.sizes[1]] : [1, 1];
  const without = (why: string) => ({ comparison: compareLegs({ mode, cp: request.cp, sizes, hcp, reference: { missing: why } }) });
  if (!report.ok) return without(`${report.problem}, so the reference leg's log cannot be tied to the runner`);
  if (evidence.kind === "unreadable") return without(`the HCP leg's log was not read whole (${evidence.problem})`);
  const refEntry = entry("reference.log");
  if (!refEntry) {
    return without(
      report.digests["reference.log"]
        ? "reference.log is missing from the artifact (or too large to read)"
        : `the run has no ${mode} reference leg: the runner skipped it (the HCP leg failed) or the installed workflow does not pass compare (upgrade it with \`npx hcp-bot init-workflow --force\`)`,
    );
  }
  const refJson = await readSmall(entry("reference.verdict.json"), budget);
  const hintProblem = digestProblem("reference.verdict.json", refJson?.digest ?? null, report.digests["reference.verdict.json"]);
  const hint = hintProblem ? noRunnerHint() : parseHint(refJson?.bytes ?? null);
  const refRequest: LegRequest = { expectHcp: false, overrides: referenceOverrides([...request.overrides], mode), gpus: request.gpus };
  const leg = await judgeLeg(refEntry, budget, refRequest, hint);
  if (leg.read.problem !== undefined) return { ...without(`the reference leg's log was not read whole: ${leg.read.problem}`), unreadable: leg.read.problem };
  const problems = [digestProblem("reference.log", { sha256: leg.read.sha256, bytes: leg.read.bytes }, report.digests["reference.log"]), hintProblem].filter((p): p is string => p !== null);
  if (problems.length) return without(`the reference leg's files are not what the runner wrote: ${problems.join("; ")}`);
  return { comparison: compareLegs({ mode, cp: request.cp, sizes, hcp, reference: { verdict: leg.verdict, series: leg.series } }) };
}
