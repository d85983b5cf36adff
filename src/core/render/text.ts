// Human-readable output: one line per finding, ruff-style (the CLI adds a code frame on a terminal).
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
  /** Which findings `--fix` can apply (marked `[*]` and counted); none when absent. */
  fixable?: (f: Finding) => boolean;
  /** Findings `--fix` applied (the findings listed are what is left). */
  fixed?: number;
  /** Lines printed under each finding (a code frame on a terminal); none when absent. */
  frame?: (f: Finding) => string[];
  /** `--quiet`: the findings only, no summary line. */
  quiet?: boolean;
}

/** `1 error`, `2 errors`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** One line: `path:line:col: severity HCP001 [*] what is wrong: the fix` (`[*]`: `--fix` applies it). */
export function formatFindingText(f: Finding, fixable = false): string {
  const { line, column } = f.location.range.start;
  return `${f.location.file}:${line}:${column}: ${f.severity} ${f.ruleId}${fixable ? " [*]" : ""} ${f.summary ?? f.message}`;
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
  const fixable = s.fixable ?? (() => false);
  const frame = s.frame ?? (() => []);
  const blocks = [...s.diagnostics.map(formatDiagnosticText), ...s.findings.flatMap((f) => [formatFindingText(f, fixable(f)), ...frame(f)])];
  const lines = s.quiet ? blocks : [...blocks, summaryLine(s, s.findings.filter(fixable).length)];
  return lines.length ? lines.join("\n") + "\n" : "";
}

/** `--statistics`: one line per rule, most findings first (`    3  HCP001  [*]  a2a-p2p-without-sizes`), then the summary. */
export function formatStatistics(s: Summary): string {
  const fixable = s.fixable ?? (() => false);
  const byRule = new Map<string, { name: string; count: number; fixable: number }>();
  for (const f of s.findings) {
    const row = byRule.get(f.ruleId) ?? { name: f.ruleName, count: 0, fixable: 0 };
    row.count++;
    if (fixable(f)) row.fixable++;
    byRule.set(f.ruleId, row);
  }
  const rows = [...byRule].sort(([a, x], [b, y]) => y.count - x.count || (a < b ? -1 : 1));
  const width = Math.max(1, ...rows.map(([, r]) => String(r.count).length));
  const lines = rows.map(([id, r]) => `${String(r.count).padStart(width)}  ${id}  ${r.fixable === r.count ? "[*]" : r.fixable > 0 ? "[-]" : "   "}  ${r.name}`);
  if (!s.quiet) lines.push(summaryLine(s, s.findings.filter(fixable).length));
  return lines.length ? lines.join("\n") + "\n" : "";
}

/** `Found 3 errors and 1 note in 2 files (4 configurations); 2 fixable with `hcp-bot lint --fix``, or `No findings in ...`. */
export function summaryLine(s: Summary, fixable: number): string {
  const c = countBySeverity(s.findings);
  const counts = [plural(c.error, "error"), plural(c.warning, "warning"), plural(c.info, "note")].filter((t) => !t.startsWith("0 "));
  const listed = counts.length > 1 ? `${counts.slice(0, -1).join(", ")} and ${counts.at(-1)}` : counts[0];
  const where = `${plural(s.files, "file")} (${plural(s.units, "configuration")})`;
  const extras = [
    s.fixed ? `${s.fixed} fixed` : "",
    fixable ? `${fixable} fixable with \`hcp-bot lint --fix\`` : "",
    s.diagnostics.length ? plural(s.diagnostics.length, "file diagnostic") : "",
    s.suppressed ? `${s.suppressed} suppressed` : "",
    s.baselined ? `${s.baselined} in the baseline` : "",
  ].filter(Boolean);
  return `${listed ? `Found ${listed}` : "No findings"} in ${where}${extras.map((e) => `; ${e}`).join("")}`;
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
