// `hcp-bot lint --fix` and `--diff` (loaded only with one of them): the findings' own edits,
// applied in rounds until nothing changes, so a second `--fix` changes nothing. A fix whose
// edits overlap one already taken waits a round, and every round is judged afresh on the
// edited texts (a fix may make another finding go away, or move it). Nothing is written
// until the last round: `--diff` prints what `--fix` would write, from the same rounds.
import { applyFixes, uneditablePaths } from "../core/rules/apply-fixes.ts";
import { unifiedDiff } from "../core/render/unified-diff.ts";
import type { SourceFile } from "../core/model/source.ts";
import { writeText } from "../node/fs-callbacks.ts";
import { InputError } from "../node/files.ts";
import type { LintAnalysis } from "./lint-analyze.ts";

/** Enough for fixes that unlock each other; a cycle (one fix undoing another) stops here. */
const MAX_ROUNDS = 10;

export interface FixRounds {
  /** The analysis of the texts after the last round (what is left to report). */
  analysis: LintAnalysis;
  files: SourceFile[];
  /** Per changed path: the text read and the text after the fixes. */
  changed: Map<string, { before: string; after: string }>;
  /** Findings fixed, over all rounds. */
  fixed: number;
  /** True when the rounds ran out while fixes still changed the texts. */
  unsettled: boolean;
  /** Files with a fix that was not applied because the file has a parse error (or was not analyzed). */
  refused: string[];
}

export async function fixInRounds(files: readonly SourceFile[], first: LintAnalysis, analyze: (files: SourceFile[]) => Promise<LintAnalysis>): Promise<FixRounds> {
  const original = new Map(files.map((f) => [f.path, f.text]));
  const uneditable = uneditablePaths(first.report.diagnostics, files);
  const refused = [...new Set(first.report.findings.flatMap((f) => f.fix?.edits.map((e) => e.file) ?? []))].filter((p) => uneditable.has(p)).sort();
  let current = [...files];
  let analysis = first;
  let fixed = 0;
  let unsettled = true;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const blocked = round === 0 ? uneditable : uneditablePaths(analysis.report.diagnostics, current);
    const result = applyFixes(analysis.report.findings, current, blocked);
    if (result.texts.size === 0) {
      unsettled = false;
      break;
    }
    fixed += result.fixed.length;
    current = current.map((f) => (result.texts.has(f.path) ? { ...f, text: result.texts.get(f.path)! } : f));
    analysis = await analyze(current);
  }
  const changed = new Map<string, { before: string; after: string }>();
  for (const f of current) {
    const before = original.get(f.path)!;
    if (f.text !== before) changed.set(f.path, { before, after: f.text });
  }
  return { analysis, files: current, changed, fixed, unsettled, refused };
}

/** Writes the fixed texts; a file that cannot be written is an InputError naming it (exit 2). */
export async function writeFixed(changed: FixRounds["changed"]): Promise<void> {
  for (const [path, { after }] of changed) {
    try {
      await writeText(path, after);
    } catch (error) {
      throw new InputError(`cannot write the fixes to ${path}: ${(error as Error).message}`);
    }
  }
}

/** `--diff`: one unified diff for all changed files, in path order (applies with `git apply` or `patch -p1`). */
export function fixesAsDiff(changed: FixRounds["changed"]): string {
  return [...changed.keys()]
    .sort()
    .map((path) => unifiedDiff(path, changed.get(path)!.before, changed.get(path)!.after))
    .join("");
}
