// Detector: the runner's HCP-PROBE reports (probe.ts has the grammar and the MAC). Every report
// in a line is read, wherever it starts (ranks share one pipe). A report counts as evidence of
// HCP only when its MAC verifies with the run's key; any other is listed as untrusted. An
// untrusted report that says "no hierarchical groups" still counts against the run: whoever
// printed it can only make their own run fail with it, never pass.
import { clip, type Findings } from "../findings.ts";
import { parseProbeReports, verifyProbeMac, type HcpProbeReport } from "../probe.ts";

const MAX_RANKS = 4096;

/** What one rank's authenticated reports said (a rank reports once per initialize_model_parallel). */
export interface RankReport {
  rank: number;
  line: number;
  worldSize: number | null;
  cpSize: number | null;
  /** Level sizes; null: flat (no hierarchical groups). */
  levelSizes: number[] | null;
  /** Some group of this rank's report does not hold the rank, or lists another number of ranks than its size. */
  malformedGroups: boolean;
  /** A later report of the same rank said something else. */
  conflicting: boolean;
}

export interface ProbeFacts {
  /** A key was given, so MACs could be checked. */
  keyGiven: boolean;
  trusted: number;
  untrusted: number;
  /** Authenticated reports whose probe failed (they prove nothing). */
  failed: number;
  ranks: RankReport[];
  /** HCP levels named by authenticated reports. */
  levels: number[];
  /** The first untrusted report showing flat CP (levels null), or null. */
  untrustedFlat: { rank: number; line: number } | null;
}

function groupsMalformed(r: HcpProbeReport): boolean {
  return (r.levels ?? []).some((l) => l.ranks !== undefined && (l.ranks.length !== l.size || !l.ranks.includes(r.rank)));
}

function sameReport(a: RankReport, b: RankReport): boolean {
  return a.worldSize === b.worldSize && a.cpSize === b.cpSize && JSON.stringify(a.levelSizes) === JSON.stringify(b.levelSizes);
}

export class ProbeReportDetector {
  private trusted = 0;
  private untrusted = 0;
  private failed = 0;
  private readonly ranks = new Map<number, RankReport>();
  private readonly levels = new Set<number>();
  private untrustedFlat: ProbeFacts["untrustedFlat"] = null;
  /** Authenticated reports, for the verdict's HCP evidence (the first few). */
  readonly evidence: { line: number; text: string }[] = [];

  constructor(
    private readonly findings: Findings,
    private readonly key: string | undefined,
  ) {}

  line(seg: string, line: number): void {
    for (const parsed of parseProbeReports(seg)) {
      if (!parsed.ok) {
        this.findings.note(`line ${line}: malformed HCP-PROBE report ignored (${clip(parsed.error, 120)})`);
        continue;
      }
      if (this.key === undefined || !verifyProbeMac(parsed.json, this.key)) {
        this.untrusted++;
        this.findings.addEvidence("untrusted-probe", line, seg);
        if (!parsed.report.error && !(parsed.report.levels && parsed.report.levels.length > 0)) this.untrustedFlat ??= { rank: parsed.report.rank, line };
        continue;
      }
      this.trustedReport(parsed.report, line, seg);
    }
  }

  private trustedReport(r: HcpProbeReport, line: number, seg: string): void {
    this.trusted++;
    if (r.error) {
      this.failed++;
      this.findings.note(`line ${line}: the HCP probe on rank ${r.rank} failed: ${clip(r.error, 160)}`);
      return;
    }
    const levelSizes = r.levels && r.levels.length > 0 ? [...r.levels].sort((a, b) => a.level - b.level).map((l) => l.size) : null;
    for (const l of r.levels ?? []) this.levels.add(l.level);
    const report: RankReport = { rank: r.rank, line, worldSize: r.world_size ?? null, cpSize: r.cp_size ?? null, levelSizes, malformedGroups: groupsMalformed(r), conflicting: false };
    const earlier = this.ranks.get(r.rank);
    if (earlier) {
      if (!sameReport(earlier, report)) earlier.conflicting = true;
      earlier.malformedGroups ||= report.malformedGroups;
      if (levelSizes === null) earlier.levelSizes = null; // flat once is flat
    } else if (this.ranks.size < MAX_RANKS) this.ranks.set(r.rank, report);
    if (this.evidence.length < 6) this.evidence.push({ line, text: clip(seg) });
    this.findings.addEvidence("probe", line, seg);
  }

  facts(): ProbeFacts {
    return {
      keyGiven: this.key !== undefined,
      trusted: this.trusted,
      untrusted: this.untrusted,
      failed: this.failed,
      ranks: [...this.ranks.values()].sort((a, b) => a.rank - b.rank),
      levels: [...this.levels].sort((a, b) => a - b),
      untrustedFlat: this.untrustedFlat,
    };
  }
}
