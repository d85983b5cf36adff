// The analyzer's findings in the editor's terms: LSP diagnostics, quick fixes (the edits the
// findings' fixes already carry, the same ones `hcp-bot lint --fix` applies), a `# noqa`
// quick fix, and the rule's doc on hover. Lines and columns here are 1-based offsets into a
// JavaScript string (UTF-16 units), so an LSP position is the same point less one each.
import type { CodeAction, Diagnostic as LspDiagnostic, Hover, Position, Range as LspRange, TextEdit } from "vscode-languageserver";
import type { AnalysisReport } from "../../core/analyze/index.ts";
import type { Finding, Severity } from "../../core/model/finding.ts";
import { LineIndex, type Point, type Range, type SourceFile } from "../../core/model/source.ts";
import type { Diagnostic } from "../../core/recipe/types.ts";
import { addNoqa } from "../../core/rules/add-noqa.ts";
import { applyFixes } from "../../core/rules/apply-fixes.ts";
import { UNUSED_SUPPRESSION_ID } from "../../core/rules/hcp100-unused-suppression.ts";
import { ruleById } from "../../core/rules/index.ts";
import { formatRuleDoc } from "../../core/render/text.ts";

export const SOURCE = "hcp-bot";

// LSP's DiagnosticSeverity and CodeActionKind values (numbers and strings of the protocol).
const SEVERITY: Record<Severity, 1 | 2 | 3> = { error: 1, warning: 2, info: 3 };
export const QUICK_FIX = "quickfix";
export const FIX_ALL = "source.fixAll.hcp-bot";

const position = (p: Point): Position => ({ line: p.line - 1, character: p.column - 1 });
const lspRange = (r: Range): LspRange => ({ start: position(r.start), end: position(r.end) });
const TOP: LspRange = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** One document's published diagnostics: its findings, then what the analysis could not read. */
export function toDiagnostics(report: AnalysisReport, path: string, uriOf: (path: string) => string): LspDiagnostic[] {
  const findings = report.findings.filter((f) => f.location.file === path).map((f) => findingDiagnostic(f, uriOf));
  const notes = report.diagnostics.filter((d) => d.file === path).map(fileDiagnostic);
  return [...findings, ...notes];
}

export function findingDiagnostic(f: Finding, uriOf: (path: string) => string): LspDiagnostic {
  return {
    range: lspRange(f.location.range),
    severity: SEVERITY[f.severity],
    code: f.ruleId,
    source: SOURCE,
    message: f.message,
    ...(f.ruleId === UNUSED_SUPPRESSION_ID ? { tags: [1 as const] } : {}), // Unnecessary: editors fade the comment
    ...(f.related.length > 0 ? { relatedInformation: f.related.map((r) => ({ location: { uri: uriOf(r.location.file), range: lspRange(r.location.range) }, message: r.message })) } : {}),
  };
}

function fileDiagnostic(d: Diagnostic): LspDiagnostic {
  return { range: d.location ? lspRange(d.location.range) : TOP, severity: SEVERITY[d.severity], code: d.code, source: SOURCE, message: d.message };
}

/** A document the analysis could not read at all: one diagnostic at the top saying why. */
export function notAnalyzedDiagnostic(reason: string): LspDiagnostic {
  return { range: TOP, severity: SEVERITY.error, code: "not-analyzed", source: SOURCE, message: `not analyzed: ${reason}` };
}

const before = (a: Position, b: Position) => a.line < b.line || (a.line === b.line && a.character <= b.character);
const touches = (r: LspRange, q: LspRange) => before(r.start, q.end) && before(q.start, r.end);

/** The findings of `file` whose range touches `range` (the editor's cursor or selection). */
export function findingsAt(report: AnalysisReport, path: string, range: LspRange): Finding[] {
  return report.findings.filter((f) => f.location.file === path && touches(lspRange(f.location.range), range));
}

/**
 * The quick fixes for the findings under the cursor: each finding's own fix, a `# noqa` for
 * it, and one action that applies every fix of the file (what `lint --fix` would write).
 */
export function codeActions(report: AnalysisReport, file: SourceFile, uri: string, range: LspRange, only: readonly string[] | undefined, uriOf: (path: string) => string): CodeAction[] {
  const wants = (kind: string) => !only || only.some((k) => kind === k || kind.startsWith(`${k}.`));
  const actions: CodeAction[] = [];
  if (wants(QUICK_FIX)) {
    for (const f of findingsAt(report, file.path, range)) {
      const diagnostics = [findingDiagnostic(f, uriOf)];
      if (f.fix && f.fix.edits.length > 0) {
        const changes: Record<string, TextEdit[]> = {};
        for (const e of f.fix.edits) (changes[uriOf(e.file)] ??= []).push({ range: lspRange(e.range), newText: e.newText });
        actions.push({ title: `${f.ruleId}: ${f.fix.description}`, kind: QUICK_FIX, diagnostics, isPreferred: true, edit: { changes } });
      }
      const noqa = f.ruleId === UNUSED_SUPPRESSION_ID ? undefined : addNoqa([f], [file]).texts.get(file.path);
      if (noqa !== undefined) actions.push({ title: `${f.ruleId}: add # noqa: ${f.ruleId} on this line`, kind: QUICK_FIX, diagnostics, edit: { changes: { [uri]: [minimalEdit(file.text, noqa)] } } });
    }
  }
  if (wants(FIX_ALL)) {
    const unparsed = new Set(report.diagnostics.filter((d) => d.code === "parse-error").map((d) => d.file));
    const fixed = applyFixes(report.findings, [file], unparsed).texts.get(file.path);
    if (fixed !== undefined) actions.push({ title: "hcp-bot: apply every fix in this file", kind: FIX_ALL, edit: { changes: { [uri]: [minimalEdit(file.text, fixed)] } } });
  }
  return actions;
}

/** One edit that turns `from` into `to`: the part between their common start and common end. */
export function minimalEdit(from: string, to: string): TextEdit {
  let start = 0;
  while (start < from.length && start < to.length && from.charCodeAt(start) === to.charCodeAt(start)) start++;
  let end = 0;
  while (end < from.length - start && end < to.length - start && from.charCodeAt(from.length - 1 - end) === to.charCodeAt(to.length - 1 - end)) end++;
  const index = new LineIndex(from);
  return { range: lspRange(index.range(start, from.length - end)), newText: to.slice(start, to.length - end) };
}

/** The rule's doc for the findings under the cursor, as plain text (messages quote recipe text, never rendered as markup). */
export function hoverAt(report: AnalysisReport, path: string, at: Position): Hover | undefined {
  const found = findingsAt(report, path, { start: at, end: at });
  const ids = [...new Set(found.map((f) => f.ruleId))];
  const docs = ids.flatMap((id) => {
    const rule = ruleById(id);
    return rule ? [formatRuleDoc(rule).trimEnd()] : [];
  });
  if (docs.length === 0) return undefined;
  return { contents: { kind: "plaintext", value: docs.join("\n\n") }, range: lspRange(found[0]!.location.range) };
}
