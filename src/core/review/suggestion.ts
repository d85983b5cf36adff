// Turns a fix's text edits into a GitHub `suggestion` block. GitHub replaces whole lines:
// the comment spans lines start..end of the new file and the block holds their new text,
// so the comment range equals the edit range by construction.
import type { Edit } from "../model/source.ts";
import { LineIndex } from "../model/source.ts";

export interface Suggestion {
  path: string;
  startLine: number;
  endLine: number;
  /** The replacement for lines startLine..endLine, without a trailing newline. */
  replacement: string;
}

/**
 * The suggestion for edits that all touch one file; undefined when they span files or
 * overlap. `index` is the file's line index at the PR head.
 */
export function suggestionFor(edits: readonly Edit[], index: LineIndex): Suggestion | undefined {
  if (edits.length === 0) return undefined;
  const path = edits[0]!.file;
  if (edits.some((e) => e.file !== path)) return undefined;
  const sorted = [...edits].sort((a, b) => a.range.start.offset - b.range.start.offset);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.range.start.offset < sorted[i - 1]!.range.end.offset) return undefined;
  }
  const startLine = sorted[0]!.range.start.line;
  const endLine = Math.max(...sorted.map((e) => e.range.end.line));
  const from = index.lineStart(startLine);
  const to = index.lineEnd(endLine);
  let replacement = "";
  let cursor = from;
  for (const e of sorted) {
    replacement += index.text.slice(cursor, e.range.start.offset) + e.newText;
    cursor = e.range.end.offset;
  }
  replacement += index.text.slice(cursor, to);
  return { path, startLine, endLine, replacement };
}

/** A fenced block that cannot be closed early by backticks inside the replacement. */
export function suggestionBlock(replacement: string): string {
  const longest = Math.max(2, ...[...replacement.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}suggestion\n${replacement}\n${fence}`;
}
