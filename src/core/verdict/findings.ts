// What the detectors report while the log streams by: evidence lines, failure candidates and
// notes, each capped so a verdict over a multi-GB log stays small. decide() reads them.
import type { Cause, Evidence } from "./schema.ts";

const MAX_TEXT = 300;
const MAX_CANDIDATES = 32;
const MAX_NOTES = 16;

const EVIDENCE_CAPS: Record<Evidence["kind"], number> = {
  hcp: 6,
  "flat-cp": 3,
  probe: 4,
  "untrusted-probe": 4,
  "decentralized-pg": 1,
  config: 8,
  iteration: 2,
  failure: 10,
  "child-failed": 4,
  marker: 4,
  throughput: 2,
};

export function clip(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

export function num(text: string | undefined | null): number | null {
  if (text === undefined || text === null) return null;
  const n = Number(text.trim());
  return Number.isFinite(n) ? n : null;
}

export class Findings {
  readonly evidence: Evidence[] = [];
  /** Failures seen in the log, in order (decide() ranks them). */
  readonly candidates: Cause[] = [];
  readonly notes: string[] = [];
  private readonly counts: Partial<Record<Evidence["kind"], number>> = {};

  note(text: string): void {
    if (this.notes.length < MAX_NOTES && !this.notes.includes(text)) this.notes.push(text);
  }

  addEvidence(kind: Evidence["kind"], line: number, text: string): void {
    const n = this.counts[kind] ?? 0;
    if (n >= EVIDENCE_CAPS[kind]) return;
    this.counts[kind] = n + 1;
    this.evidence.push({ kind, line, text: clip(text) });
  }

  /** One candidate per (kind, rule, rank, upstream check): the first occurrence is the one quoted. */
  addCandidate(c: Cause): void {
    const duplicate = this.candidates.some((o) => o.kind === c.kind && o.ruleId === c.ruleId && o.rank === c.rank && o.upstream === c.upstream);
    if (duplicate || this.candidates.length >= MAX_CANDIDATES) return;
    this.candidates.push(c);
    if (c.line !== null && c.text !== undefined) this.addEvidence("failure", c.line, c.text);
  }
}
