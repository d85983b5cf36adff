// What GitHub and the runner's report say about a finished run, beside its log: the job's
// conclusion and the "Smoke run" step's (from the jobs API), whether the runner's report was
// found and whether the artifact's files are the ones it hashed. The log's verdict can only
// get worse from these: a missing or contradicting fact never turns into a pass.
import type { Cause, Verdict } from "../verdict/index.ts";

/** The workflow step that runs `hcp-bot smoke-run` (templates/hcp-smoke.yml). */
export const SMOKE_STEP_NAME = "Smoke run";

export interface RunFacts {
  /** The smoke job as the jobs API shows it; null when the run has no such job. */
  job: { conclusion: string | null; stepConclusion: string | null } | null;
  /** Whether the runner's report (a delimiter matching its commitment) is in the job log; the problem otherwise. */
  report: { ok: true } | { ok: false; problem: string };
  /**
   * Where the judged log came from: the artifact with both files matching the report's hashes,
   * the job log (no usable artifact), an artifact whose files are missing or differ, or one
   * the bot could not read whole (over its inflation caps, or corrupt).
   */
  evidence: { kind: "artifact" } | { kind: "job-log"; why: string } | { kind: "tampered"; problem: string } | { kind: "unreadable"; problem: string };
}

function worse(verdict: Verdict, status: Verdict["status"], cause: Cause): Verdict {
  return { ...verdict, status, cause, otherFailures: verdict.cause ? [verdict.cause, ...verdict.otherFailures].slice(0, 8) : verdict.otherFailures };
}

function fact(kind: Cause["kind"], message: string): Cause {
  return { kind, message, line: null, rank: null };
}

/** The job's or the step's conclusion in words, or null when both are success. */
function jobProblem(job: RunFacts["job"]): string | null {
  if (!job) return "the run has no smoke job in GitHub's jobs API";
  if (job.conclusion !== "success") return `GitHub reports the smoke job's conclusion as ${job.conclusion ?? "none"}`;
  if (job.stepConclusion !== "success") return `GitHub reports the "${SMOKE_STEP_NAME}" step's conclusion as ${job.stepConclusion ?? "none (no such step)"}`;
  return null;
}

/**
 * The verdict after the run's facts: a failed job or step, files that are not the runner's, or
 * an artifact that could not be read whole fail the run; a missing report or artifact leaves a pass inconclusive. A verdict that is
 * already not a pass keeps its own cause (the facts are noted).
 */
export function applyRunFacts(verdict: Verdict, facts: RunFacts): Verdict {
  const notes: string[] = [];
  let v = verdict;
  if (facts.evidence.kind === "tampered") {
    v = v.status === "fail" ? v : worse(v, "fail", fact("truncated", `the artifact is not what the runner wrote: ${facts.evidence.problem}`));
    if (v === verdict) notes.push(`the artifact is not what the runner wrote: ${facts.evidence.problem}`);
  }
  if (facts.evidence.kind === "unreadable") {
    const why = `the log artifact was not read whole: ${facts.evidence.problem}`;
    // Always the cause: what the parser says of a log cut at a cap (no exit status, ...) follows from the cut.
    v = worse(v, "fail", fact("truncated", why));
  }
  const job = jobProblem(facts.job);
  if (job) {
    if (v.status === "pass") v = worse(v, "fail", fact("nonzero-exit", `${job}, although the log alone would pass: the runner did not report a pass`));
    else notes.push(job);
  }
  if (!facts.report.ok) {
    if (v.status === "pass") v = worse(v, "inconclusive", fact("truncated", `${facts.report.problem}, so the log cannot be tied to the runner`));
    else notes.push(facts.report.problem);
  }
  if (facts.evidence.kind === "job-log") {
    if (v.status === "pass") v = worse(v, "inconclusive", fact("truncated", `${facts.evidence.why}: the job log alone is not enough evidence for a pass`));
    else notes.push(facts.evidence.why);
  }
  return notes.length ? { ...v, notes: [...v.notes, ...notes] } : v;
}
