// Human-readable output for terminals: one block per finding, ruff-style first line.
import type { Finding, Rule } from "../model/finding.ts";
import type { Diagnostic } from "../recipe/types.ts";

export interface Summary {
  files: number;
  units: number;
  findings: readonly Finding[];
  diagnostics: readonly Diagnostic[];
  /** Findings a `# noqa` / `# hcp-bot: ignore[...]` hid, and findings a baseline held. */
  suppressed?: number;
  baselined?: number;
}

export function formatFindingText(f: Finding): string {
  const { line, column } = f.location.range.start;
  const head = `${f.location.file}:${line}:${column}: ${f.severity} ${f.ruleId} [${f.ruleName}] ${f.message}`;
  const lines = [head, `    in ${f.unitName}`];
  for (const r of f.related) lines.push(`    see ${r.location.file}:${r.location.range.start.line}: ${r.message}`);
  if (f.fix) lines.push(`    fix: ${f.fix.description}`);
  return lines.join("\n");
}

export function formatDiagnosticText(d: Diagnostic): string {
  const where = d.location ? `${d.file}:${d.location.range.start.line}:${d.location.range.start.column}` : d.file;
  return `${where}: ${d.severity} ${d.code}: ${d.message}`;
}

export function countBySeverity(findings: readonly Finding[]): Record<"error" | "warning" | "info", number> {
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  return counts;
}

export function formatReportText(s: Summary): string {
  const blocks = [...s.diagnostics.map(formatDiagnosticText), ...s.findings.map(formatFindingText)];
  const c = countBySeverity(s.findings);
  const tail =
    `${s.files} file(s), ${s.units} configuration(s) analyzed: ` +
    `${c.error} error(s), ${c.warning} warning(s), ${c.info} info` +
    (s.diagnostics.length ? `; ${s.diagnostics.length} file diagnostic(s)` : "") +
    (s.suppressed ? `; ${s.suppressed} suppressed` : "") +
    (s.baselined ? `; ${s.baselined} in the baseline` : "");
  return [...blocks, tail].join("\n") + "\n";
}

export function formatRuleList(rules: readonly Rule[]): string {
  const width = Math.max(...rules.map((r) => r.name.length));
  return rules.map((r) => `${r.id}  ${r.severity.padEnd(7)}  ${r.name.padEnd(width)}  ${r.doc.checks.split("\n")[0]}`).join("\n") + "\n";
}

/** The rule's doc as the CLI's `explain` prints it (and PR comments quote it); the A/B checks (AB001, …) have the same shape. */
export function formatRuleDoc(rule: Pick<Rule, "id" | "name" | "severity" | "doc">): string {
  return [
    `${rule.id} ${rule.name} (${rule.severity})`,
    "",
    "What it checks",
    indent(rule.doc.checks),
    "",
    "Why it matters",
    indent(rule.doc.why),
    "",
    "Example",
    indent(rule.doc.example),
    "",
    "Fix",
    indent(rule.doc.fix),
    "",
  ].join("\n");
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => (l ? `  ${l}` : l))
    .join("\n");
}
