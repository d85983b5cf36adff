// The runner's own report in the job log, and how the bot finds it again.
//
// The job log holds everything the code under test printed, so nothing in it can be trusted
// by its text alone. smoke-run makes its report recognisable without trusting the text:
//
// 1. Before it starts the run, smoke-run draws a random nonce N (32 bytes, in memory only,
//    never in the environment or a file) and prints the commitment SHA-256(N). Nothing of the
//    PR has run yet: the steps before it (input checks, installing hcp-bot, the checkout)
//    print no line that starts like this one.
// 2. After the run's whole process tree is gone, smoke-run prints N, and right after it (one
//    small write, so nothing can interleave) the SHA-256 and size of the bytes it wrote to
//    smoke.log and verdict.json.
//
// The bot takes the FIRST commitment line of the job log (the PR can only print later
// ones) and accepts a delimiter only when its nonce hashes to that commitment. Code under
// test cannot print a valid delimiter without reading smoke-run's memory, so it cannot cut
// the log early, hide what follows, or bring its own hashes. Pure: WebCrypto only.

export const COMMITMENT_PREFIX = "hcp-bot smoke-run: report commitment sha256:";
export const DELIMITER_PREFIX = "hcp-bot smoke-run: report nonce ";
const HASH_PREFIX = "hcp-bot smoke-run: sha256 ";

/**
 * The files the runner hashes, in the order it prints them: the run's log and verdict, and
 * for an A/B run (`--compare`) the reference leg's log and verdict.
 */
export const REPORTED_FILES = ["smoke.log", "verdict.json", "reference.log", "reference.verdict.json"] as const;
export type ReportedFile = (typeof REPORTED_FILES)[number];

export interface FileDigest {
  sha256: string;
  bytes: number;
}

export function commitmentLine(commitment: string): string {
  return `${COMMITMENT_PREFIX}${commitment}`;
}

export function delimiterLine(nonce: string): string {
  return `${DELIMITER_PREFIX}${nonce}`;
}

export function digestLine(name: ReportedFile, digest: FileDigest): string {
  return `${HASH_PREFIX}${name} ${digest.sha256} ${digest.bytes}`;
}

export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export type RunnerReport =
  | {
      ok: true;
      /** The run's own output: the job log lines between the commitment and the delimiter, timestamps removed. */
      log: string;
      digests: Partial<Record<ReportedFile, FileDigest>>;
    }
  | { ok: false; problem: string; /** The job log after the first commitment (or all of it), timestamps removed. */ log: string };

// GitHub prefixes every job-log line with the runner's timestamp.
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?/;
const COMMITMENT_RE = /^hcp-bot smoke-run: report commitment sha256:([0-9a-f]{64})$/;
const DELIMITER_RE = /^hcp-bot smoke-run: report nonce ([0-9a-f]{64})$/;
const DIGEST_RE = /^hcp-bot smoke-run: sha256 (smoke\.log|verdict\.json|reference\.log|reference\.verdict\.json) ([0-9a-f]{64}) (\d{1,15})$/;

function stripTimestamp(line: string): string {
  return line.replace(TIMESTAMP, "").replace(/\r$/, "");
}

/** Finds the runner's report in a job log as GitHub serves it. */
export async function findRunnerReport(jobLog: string): Promise<RunnerReport> {
  const lines = jobLog.split("\n").map(stripTimestamp);
  const start = lines.findIndex((l) => COMMITMENT_RE.test(l));
  if (start < 0) return { ok: false, problem: "the job log has no report commitment from hcp-bot smoke-run (the runner did not start, or this is not its job)", log: lines.join("\n") };
  const commitment = COMMITMENT_RE.exec(lines[start]!)![1]!;
  const rest = lines.slice(start + 1);
  for (let i = 0; i < rest.length; i++) {
    const m = DELIMITER_RE.exec(rest[i]!);
    if (!m || (await sha256Hex(m[1]!)) !== commitment) continue;
    const digests: Partial<Record<ReportedFile, FileDigest>> = {};
    for (const line of rest.slice(i + 1, i + 1 + REPORTED_FILES.length)) {
      const d = DIGEST_RE.exec(line);
      if (!d) break;
      digests[d[1] as ReportedFile] ??= { sha256: d[2]!, bytes: Number(d[3]) };
    }
    return { ok: true, log: joinLines(rest.slice(0, i)), digests };
  }
  return { ok: false, problem: "the job log has no report from hcp-bot smoke-run matching its commitment (the runner was killed, or did not finish)", log: joinLines(rest) };
}

function joinLines(lines: readonly string[]): string {
  return lines.length ? `${lines.join("\n")}\n` : "";
}
