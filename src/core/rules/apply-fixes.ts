// `--fix` and `--diff`: the edits the findings' fixes already carry, applied to the texts. A fix is
// applied whole or not at all; one whose edits overlap an edit already taken waits for the next run
// (after which its finding is re-judged); a file with a parse error is never edited, since its
// findings were judged on what could be read.
import type { Finding } from "../model/finding.ts";
import type { Edit, SourceFile } from "../model/source.ts";

export interface FixResult {
  /** New text per file path, only for files that change. */
  texts: Map<string, string>;
  /** The findings whose fix was applied. */
  fixed: Finding[];
}

/** A finding `--fix` can apply: its fix has edits, all in files that were read and parsed. */
export function isFixable(f: Finding, editable: ReadonlySet<string>): boolean {
  return !!f.fix && f.fix.edits.length > 0 && f.fix.edits.every((e) => editable.has(e.file));
}

const overlaps = (a: Edit, b: Edit): boolean =>
  a.range.start.offset < b.range.end.offset && b.range.start.offset < a.range.end.offset ||
  // Two insertions at one point: their order would be a guess.
  (a.range.start.offset === b.range.start.offset && (a.range.start.offset === a.range.end.offset || b.range.start.offset === b.range.end.offset));

const sameEdit = (a: Edit, b: Edit): boolean => a.range.start.offset === b.range.start.offset && a.range.end.offset === b.range.end.offset && a.newText === b.newText;

/** `unparsed`: paths with a parse error (never edited). */
export function applyFixes(findings: readonly Finding[], files: readonly SourceFile[], unparsed: ReadonlySet<string>): FixResult {
  const editable = new Set(files.map((f) => f.path).filter((p) => !unparsed.has(p)));
  const taken = new Map<string, Edit[]>();
  const fixed: Finding[] = [];
  for (const f of findings) {
    if (!isFixable(f, editable)) continue;
    const edits = f.fix!.edits;
    const fresh = edits.filter((e) => !(taken.get(e.file) ?? []).some((t) => sameEdit(t, e)));
    if (fresh.some((e) => (taken.get(e.file) ?? []).some((t) => overlaps(t, e)))) continue;
    for (const e of fresh) taken.set(e.file, [...(taken.get(e.file) ?? []), e]);
    fixed.push(f);
  }
  const texts = new Map<string, string>();
  for (const file of files) {
    const edits = taken.get(file.path);
    if (!edits) continue;
    const text = applyEdits(file.text, edits);
    if (text !== file.text) texts.set(file.path, text);
  }
  return { texts, fixed };
}

/** Applies non-overlapping edits to one text (from the end, so earlier offsets stay valid). */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.range.start.offset - a.range.start.offset)) {
    out = out.slice(0, e.range.start.offset) + e.newText + out.slice(e.range.end.offset);
  }
  return out;
}

/**
 * Files `--fix` must not edit: one with a parse error (its findings were judged on what could
 * be read), one that was not analyzed, and one that is not valid UTF-8 (a replacement
 * character in the decoded text: writing it back would not give the original bytes).
 */
export function uneditablePaths(diagnostics: ReadonlyArray<{ file: string; code: string }>, files: readonly SourceFile[]): Set<string> {
  const out = new Set(diagnostics.filter((d) => d.code === "parse-error" || d.code === "unreadable" || d.code === "too-large" || d.code === "too-complex").map((d) => d.file));
  for (const f of files) if (f.text.includes("\uFFFD")) out.add(f.path);
  return out;
}
