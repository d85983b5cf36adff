// The source line under a finding, with a caret under its range, as ruff prints on a terminal:
//
//   hcp_recipes.py:14:30: error HCP001 [*] model.cp_comm_type is 'a2a+p2p' but …
//      |
//   14 |     cfg.model.cp_comm_type = "a2a+p2p"
//      |                              ^^^^^^^^^
//      = fix: Set model.hierarchical_context_parallel_sizes to [2, 2] (…)
//
// Loaded only when stdout is a terminal (or --color=always): a piped lint prints one line per
// finding and never loads this. The lines are plain text: the report's control characters
// are defused and its colours added afterwards, by shape (styleReport), as for every line.
import type { Finding } from "../core/model/finding.ts";
import { LineIndex, type SourceFile } from "../core/model/source.ts";
import { defuseControls } from "./style.ts";

const TAB = "    ";
/** Longer lines are cut around the caret, so one minified line does not fill the screen. */
const MAX_LINE = 160;

export type FrameFor = (f: Finding) => string[];

export function codeFrames(files: readonly SourceFile[]): FrameFor {
  const indexes = new Map<string, LineIndex>();
  const byPath = new Map(files.map((f) => [f.path, f]));
  const indexOf = (path: string): LineIndex | undefined => {
    const file = byPath.get(path);
    if (!file) return undefined;
    let index = indexes.get(path);
    if (!index) indexes.set(path, (index = new LineIndex(file.text)));
    return index;
  };
  return (f) => {
    const index = indexOf(f.location.file);
    const { start, end } = f.location.range;
    const lines: string[] = [];
    const gutter = String(start.line).length + 1;
    const bar = (label = "") => `${label.padStart(gutter)} |`;
    if (index && start.line <= index.lineCount) {
      const text = index.lineText(start.line);
      const span = end.line === start.line ? Math.max(1, end.column - start.column) : Math.max(1, text.length - start.column + 1);
      const { shown, caretAt, caretLength } = visible(text, start.column - 1, span);
      lines.push(bar(), `${bar(String(start.line))} ${shown}`, `${bar()} ${" ".repeat(caretAt)}${"^".repeat(caretLength)}`);
    }
    if (f.fix) lines.push(`${" ".repeat(gutter)} = fix: ${f.fix.description}`);
    for (const r of f.related) lines.push(`${" ".repeat(gutter)} = see ${r.location.file}:${r.location.range.start.line}: ${r.message}`);
    return lines;
  };
}

/**
 * The line as shown (tabs expanded, cut to MAX_LINE around the caret) and where the caret goes.
 * Controls are shown as `\xNN` (as the report's defusing will), so the caret stays under its text.
 */
function visible(text: string, from: number, span: number): { shown: string; caretAt: number; caretLength: number } {
  const show = (s: string) => defuseControls(s.replace(/\t/g, TAB));
  let head = show(text.slice(0, from));
  let body = show(text.slice(from, from + span));
  let tail = show(text.slice(from + span));
  if (head.length > MAX_LINE / 2) head = `…${head.slice(head.length - MAX_LINE / 2)}`;
  if (body.length > MAX_LINE / 2) body = `${body.slice(0, MAX_LINE / 2)}…`;
  if (head.length + body.length + tail.length > MAX_LINE) tail = `${tail.slice(0, Math.max(0, MAX_LINE - head.length - body.length))}…`;
  return { shown: head + body + tail, caretAt: head.length, caretLength: Math.max(1, body.length) };
}
