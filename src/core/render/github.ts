// GitHub Actions workflow commands: `::error file=…,line=…::message` annotations.
import type { Finding } from "../model/finding.ts";
import type { Diagnostic } from "../recipe/types.ts";

const LEVEL = { error: "error", warning: "warning", info: "notice" } as const;

// Per the workflow-command spec: data escapes %, CR, LF; properties also `:` and `,`.
function escapeData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

export function formatFindingGithub(f: Finding): string {
  const { start, end } = f.location.range;
  const props = [
    `file=${escapeProperty(f.location.file)}`,
    `line=${start.line}`,
    `col=${start.column}`,
    `endLine=${end.line}`,
    ...(start.line === end.line ? [`endColumn=${end.column}`] : []),
    `title=${escapeProperty(`${f.ruleId} ${f.ruleName}`)}`,
  ];
  const body = f.fix ? `${f.message}\nFix: ${f.fix.description}` : f.message;
  return `::${LEVEL[f.severity]} ${props.join(",")}::${escapeData(body)}`;
}

export function formatDiagnosticGithub(d: Diagnostic): string {
  const props = [`file=${escapeProperty(d.file)}`];
  if (d.location) props.push(`line=${d.location.range.start.line}`, `col=${d.location.range.start.column}`);
  props.push(`title=${escapeProperty(`hcp-bot ${d.code}`)}`);
  return `::${LEVEL[d.severity]} ${props.join(",")}::${escapeData(d.message)}`;
}

export function formatReportGithub(findings: readonly Finding[], diagnostics: readonly Diagnostic[]): string {
  const lines = [...diagnostics.map(formatDiagnosticGithub), ...findings.map(formatFindingGithub)];
  return lines.length ? lines.join("\n") + "\n" : "";
}
