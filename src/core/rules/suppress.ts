// Suppression comments, read the same by every surface (the CLI, the App's review, the
// playground: all analyze through judge()). `# noqa: HCP001, HCP002` (or a bare `# noqa`) on the
// line a finding starts on, or `# hcp-bot: ignore[HCP001] reason` alone on the line before it.
// A directive naming a rule with no finding there is reported as HCP100 (ruff's RUF100).
import type { Finding } from "../model/finding.ts";
import { LineIndex, type Edit, type SourceFile } from "../model/source.ts";
import { UNUSED_SUPPRESSION_ID } from "./hcp100-unused-suppression.ts";

export interface Directive {
  file: string;
  /** 1-based line whose findings it covers. */
  line: number;
  /** Upper-case rule ids; empty for a bare `# noqa` (every rule). */
  codes: string[];
  kind: "noqa" | "ignore";
  /** Offsets of the comment's text in the file (for HCP100's location and fix). */
  start: number;
  end: number;
}

// `# noqa` and `# noqa: A1, B2` (flake8's and ruff's spelling); codes of other tools are kept so
// a `# noqa: E501` is recognised as someone else's and left alone.
const NOQA = /#\s*noqa\b(?::\s*([A-Za-z]+\d+(?:[\s,]+[A-Za-z]+\d+)*))?/gi;
const IGNORE = /^\s*#\s*hcp-bot:\s*ignore\[\s*([A-Za-z]+\d+(?:\s*,\s*[A-Za-z]+\d+)*)\s*\][^\n]*/i;
const OURS = /^HCP\d{3}$/;

const codesOf = (list: string | undefined): string[] => (list ? list.split(/[\s,]+/).filter(Boolean).map((c) => c.toUpperCase()) : []);

/** The directives of one file; a `# noqa` naming only other tools' codes is none of hcp-bot's. */
export function findDirectives(file: SourceFile): Directive[] {
  if (!file.text.includes("noqa") && !file.text.includes("hcp-bot")) return [];
  const index = new LineIndex(file.text);
  const out: Directive[] = [];
  for (const m of file.text.matchAll(NOQA)) {
    const all = codesOf(m[1]);
    const codes = all.filter((c) => OURS.test(c));
    if (all.length > 0 && codes.length === 0) continue;
    out.push({ file: file.path, line: index.point(m.index).line, codes, kind: "noqa", start: m.index, end: m.index + m[0].length });
  }
  for (let line = 1; line <= index.lineCount; line++) {
    const start = index.lineStart(line);
    const m = IGNORE.exec(file.text.slice(start, index.lineEnd(line)));
    if (m) out.push({ file: file.path, line: line + 1, codes: codesOf(m[1]), kind: "ignore", start, end: start + m[0].length });
  }
  return out;
}

export interface Suppressed {
  findings: Finding[];
  /** Findings a directive hid (counted in summaries, listed nowhere). */
  suppressed: Finding[];
}

/**
 * Drops the findings a directive covers and adds an HCP100 finding for each directive code that
 * covered none (when HCP100 is enabled). `knownIds` are the rule ids that exist.
 */
export function applySuppressions(findings: readonly Finding[], files: readonly SourceFile[], opts: { knownIds: ReadonlySet<string>; hcp100: boolean }): Suppressed {
  const directives = files.flatMap(findDirectives);
  if (directives.length === 0) return { findings: [...findings], suppressed: [] };
  const byLine = new Map<string, Directive[]>();
  for (const d of directives) byLine.set(`${d.file}\u0000${d.line}`, [...(byLine.get(`${d.file}\u0000${d.line}`) ?? []), d]);
  const used = new Map<Directive, Set<string>>();
  const kept: Finding[] = [];
  const suppressed: Finding[] = [];
  for (const f of findings) {
    const here = byLine.get(`${f.location.file}\u0000${f.location.range.start.line}`) ?? [];
    const by = here.find((d) => d.codes.length === 0 || d.codes.includes(f.ruleId));
    if (!by) {
      kept.push(f);
      continue;
    }
    suppressed.push(f);
    used.set(by, (used.get(by) ?? new Set()).add(f.ruleId));
  }
  if (opts.hcp100) kept.push(...unusedFindings(directives, used, files, opts.knownIds));
  return { findings: kept, suppressed };
}

function unusedFindings(directives: readonly Directive[], used: ReadonlyMap<Directive, Set<string>>, files: readonly SourceFile[], knownIds: ReadonlySet<string>): Finding[] {
  const texts = new Map(files.map((f) => [f.path, f.text]));
  const out: Finding[] = [];
  for (const d of directives) {
    // A bare `# noqa` may be there for another linter: never reported.
    if (d.codes.length === 0) continue;
    const unused = d.codes.filter((c) => !used.get(d)?.has(c));
    if (unused.length === 0) continue;
    const text = texts.get(d.file)!;
    const index = new LineIndex(text);
    const unknown = unused.filter((c) => !knownIds.has(c));
    const what = unknown.length ? `${unused.join(", ")} (${unknown.join(", ")}: no such rule)` : unused.join(", ");
    const message = `unused suppression of ${what}: no such finding on line ${d.line}; remove it`;
    out.push({
      ruleId: UNUSED_SUPPRESSION_ID,
      ruleName: "unused-suppression",
      severity: "warning",
      message,
      location: { file: d.file, range: index.range(d.start, d.end) },
      unitId: `${d.file}#suppressions`,
      unitName: d.file,
      related: [],
      fix: { description: unused.length === d.codes.length ? "Remove the suppression comment" : `Remove ${unused.join(", ")} from the suppression`, edits: [removalEdit(d, unused, text, index)] },
    });
  }
  return out;
}

/** The edit that takes `unused` out of the directive: the whole comment (or line) when nothing is left. */
function removalEdit(d: Directive, unused: readonly string[], text: string, index: LineIndex): Edit {
  const left = d.codes.filter((c) => !unused.includes(c));
  if (left.length > 0) {
    const replacement = d.kind === "noqa" ? `# noqa: ${left.join(", ")}` : text.slice(d.start, d.end).replace(/ignore\[[^\]]*\]/i, `ignore[${left.join(", ")}]`);
    const start = d.kind === "noqa" ? d.start : d.start + (text.slice(d.start, d.end).length - text.slice(d.start, d.end).trimStart().length);
    return { file: d.file, range: index.range(start, d.end), newText: d.kind === "noqa" ? replacement : replacement.trimStart() };
  }
  if (d.kind === "ignore") {
    // The directive is its own line: the line goes, its line break with it.
    const lineEnd = index.lineEnd(d.line - 1);
    const next = text.charCodeAt(lineEnd) === 13 ? lineEnd + 2 : lineEnd + 1;
    return { file: d.file, range: index.range(d.start, Math.min(next, text.length)), newText: "" };
  }
  // A trailing comment goes with the spaces before it.
  let start = d.start;
  while (start > index.lineStart(d.line) && (text[start - 1] === " " || text[start - 1] === "\t")) start--;
  return { file: d.file, range: index.range(start, d.end), newText: "" };
}
