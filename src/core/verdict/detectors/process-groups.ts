// Detector: torch's ProcessGroupNCCL log prefixes (TORCH_CPP_LOG_LEVEL=INFO), which name the
// Megatron groups: `[PG ID i PG GUID g(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank r]`.
// Anyone can print such a line, so a named line counts only when the same rank printed the
// group's construction line before it: `[PG ID i PG GUID g Rank r] ProcessGroupNCCL
// initialization options: size: S, global rank: R, …, PG Name: g` (the desc is attached after
// construction; the GUID is the only link, fixtures/logs/README.md). The construction line
// also gives each level's size.
import type { Findings } from "../findings.ts";

const MAX_CONSTRUCTIONS = 4096;
const MAX_EVIDENCE = 6;
// Global, not sticky at an indexOf'd position: irregexp finds the literal "[PG ID " itself,
// faster than indexOf + lastIndexOf + a sticky match on these frequent lines.
const PG_DESC_RE = /\[PG ID (\d+) PG GUID (\d+)\((?:HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L(\d+)|(CONTEXT_PARALLEL_GROUP))\) Rank (\d+)\]/g;
const CONSTRUCTION_RE = /\[PG ID (\d+) PG GUID (\d+) Rank (\d+)\] ProcessGroupNCCL initialization options: size: (\d+), global rank: (\d+),.*PG Name: (\d+)/;
const TEARDOWN_RE = /Destroy complete|Starting to destroy process group|destructor entered/;

/**
 * One key per (GUID, rank in group): a number for the ids torch prints (no string built per
 * line); the rare huge id gets a string key.
 */
function groupKey(guid: string, groupRank: string): number | string {
  const g = Number(guid);
  const r = Number(groupRank);
  return g < 0x1_0000_0000 && r < 0x10_0000 && guid.length < 11 && groupRank.length < 8 ? g * 0x10_0000 + r : `${guid}:${groupRank}`;
}

interface Construction {
  pgId: number;
  size: number;
  globalRank: number;
}

export interface ProcessGroupFacts {
  hierarchicalLines: number;
  flatLines: number;
  unlinkedLines: number;
  /** HCP levels named on linked lines. */
  levels: number[];
  /** Size of each named level by its construction line (the largest seen; null when unknown). */
  levelSizes: (number | null)[];
  /** A linked flat-CP line from teardown: the run got past every collective it was going to make. */
  flatTornDown: boolean;
}

export class ProcessGroupDetector {
  /** Construction lines by `guid:rank-in-group`. */
  private readonly constructions = new Map<number | string, Construction>();
  private hierarchicalLines = 0;
  private flatLines = 0;
  private unlinkedLines = 0;
  private flatTornDown = false;
  private readonly levelSizes = new Map<number, number | null>();
  /** Linked hierarchical lines, for the verdict's HCP evidence (the first few). */
  readonly evidence: { line: number; text: string }[] = [];

  constructor(private readonly findings: Findings) {}

  /** `ProcessGroupNCCL initialization options` (anchor `TIMEOUT(ms)`). */
  construction(seg: string): void {
    const m = CONSTRUCTION_RE.exec(seg);
    if (!m || m[2] !== m[6] || this.constructions.size >= MAX_CONSTRUCTIONS) return;
    this.constructions.set(groupKey(m[2]!, m[3]!), { pgId: Number(m[1]), size: Number(m[4]), globalRank: Number(m[5]) });
  }

  /** A line naming a CP group; `rank` is the `[rankN]:` prefix's global rank when there is one. */
  names(seg: string, rank: number | null, line: number, whole: string): void {
    let hierarchical = false;
    let flat = false;
    let unlinked = false;
    PG_DESC_RE.lastIndex = 0;
    for (let m = PG_DESC_RE.exec(seg); m !== null; m = PG_DESC_RE.exec(seg)) {
      const built = this.constructions.get(groupKey(m[2]!, m[5]!));
      if (!built || built.pgId !== Number(m[1]) || (rank !== null && built.globalRank !== rank)) {
        unlinked = true;
        continue;
      }
      if (m[3] !== undefined) {
        hierarchical = true;
        const level = Number(m[3]);
        this.levelSizes.set(level, Math.max(this.levelSizes.get(level) ?? 0, built.size));
      } else flat = true;
    }
    if (hierarchical) {
      this.hierarchicalLines++;
      if (this.evidence.length < MAX_EVIDENCE) this.evidence.push({ line, text: whole });
      this.findings.addEvidence("hcp", line, whole);
    }
    if (flat) {
      this.flatLines++;
      if (!this.flatTornDown && TEARDOWN_RE.test(seg)) this.flatTornDown = true;
      if (!hierarchical) this.findings.addEvidence("flat-cp", line, whole);
    }
    if (unlinked && !hierarchical && !flat) this.unlinkedLines++;
  }

  facts(): ProcessGroupFacts {
    const levels = [...this.levelSizes.keys()].sort((a, b) => a - b);
    return {
      hierarchicalLines: this.hierarchicalLines,
      flatLines: this.flatLines,
      unlinkedLines: this.unlinkedLines,
      levels,
      levelSizes: levels.map((l) => this.levelSizes.get(l) ?? null),
      flatTornDown: this.flatTornDown,
    };
  }
}
