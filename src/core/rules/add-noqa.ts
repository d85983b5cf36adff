// `--add-noqa`: a `# noqa: HCPnnn` at the end of each line a finding starts on (joined into a
// `# noqa` already there), so a repository can turn the linter on and fix findings one by one.
// A line the comment would change the meaning of is left alone and named instead.
import type { Finding } from "../model/finding.ts";
import { LineIndex, type SourceFile } from "../model/source.ts";

export interface NoqaResult {
  /** New text per file path, only for files that change. */
  texts: Map<string, string>;
  added: number;
  /** Findings whose line cannot carry a comment, with why. */
  skipped: Array<{ finding: Finding; reason: string }>;
}

const EXISTING = /#\s*noqa:\s*([A-Za-z]+\d+(?:[\s,]+[A-Za-z]+\d+)*)\s*$/i;

/** Why a `#` comment cannot go at the end of this line, or undefined when it can. */
function cannotComment(path: string, line: string): string | undefined {
  if (/\\\s*$/.test(line)) return "the line continues on the next (a trailing backslash)";
  if (/\.md$/i.test(path)) return "a Markdown file has no comment a launch line keeps";
  if (/("""|''')/.test(line)) return "the line is inside or opens a multi-line string";
  return undefined;
}

export function addNoqa(findings: readonly Finding[], files: readonly SourceFile[]): NoqaResult {
  const byFile = new Map<string, Map<number, Finding[]>>();
  for (const f of findings) {
    const lines = byFile.get(f.location.file) ?? new Map<number, Finding[]>();
    const line = f.location.range.start.line;
    lines.set(line, [...(lines.get(line) ?? []), f]);
    byFile.set(f.location.file, lines);
  }
  const result: NoqaResult = { texts: new Map(), added: 0, skipped: [] };
  for (const file of files) {
    const lines = byFile.get(file.path);
    if (!lines) continue;
    const index = new LineIndex(file.text);
    const parts: string[] = [];
    let from = 0;
    for (const [lineNo, found] of [...lines].sort((a, b) => a[0] - b[0])) {
      const end = index.lineEnd(lineNo);
      const line = file.text.slice(index.lineStart(lineNo), end);
      const reason = cannotComment(file.path, line);
      if (reason) {
        for (const finding of found) result.skipped.push({ finding, reason });
        continue;
      }
      const codes = [...new Set(found.map((f) => f.ruleId))].sort();
      const existing = EXISTING.exec(line);
      parts.push(file.text.slice(from, end));
      if (existing) {
        const have = existing[1]!.split(/[\s,]+/).filter(Boolean);
        const all = [...have, ...codes.filter((c) => !have.map((h) => h.toUpperCase()).includes(c))];
        parts[parts.length - 1] = file.text.slice(from, index.lineStart(lineNo)) + line.slice(0, existing.index) + `# noqa: ${all.join(", ")}`;
      } else {
        parts[parts.length - 1] += `  # noqa: ${codes.join(", ")}`;
      }
      result.added += codes.length;
      from = end;
    }
    parts.push(file.text.slice(from));
    const text = parts.join("");
    if (text !== file.text) result.texts.set(file.path, text);
  }
  return result;
}
