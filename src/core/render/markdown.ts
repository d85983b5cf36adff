// GitHub-flavoured Markdown for PR comments and check-run output.
import type { Finding, Rule } from "../model/finding.ts";

/**
 * Text that came from a pull request (values, file names, recipe names) is shown, never
 * interpreted: no @-mentions, no HTML (so nobody can forge the bot's hidden markers).
 */
export function untrusted(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@(?=[A-Za-z0-9_-])/g, "@\u200b");
}

export function tableCell(text: string): string {
  return untrusted(text).replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

export const SEVERITY_ICON = { error: "🛑", warning: "⚠️", info: "ℹ️" } as const;

export function whereText(f: Finding): string {
  return `${f.location.file}:${f.location.range.start.line}`;
}

export function findingsTable(findings: readonly Finding[], linkFor?: (f: Finding) => string | undefined): string {
  if (findings.length === 0) return "";
  const rows = findings.map((f) => {
    const where = tableCell(whereText(f));
    const link = linkFor?.(f);
    return `| ${SEVERITY_ICON[f.severity]} ${f.severity} | ${f.ruleId} | ${link ? `[${where}](${link})` : where} | ${tableCell(f.unitName)} | ${tableCell(f.message)} |`;
  });
  return ["| | Rule | Where | Configuration | Finding |", "|---|---|---|---|---|", ...rows].join("\n");
}

export function ruleDocDetails(rule: Rule | undefined): string {
  if (!rule) return "";
  return [
    `<details><summary>About ${rule.id} ${rule.name}</summary>`,
    "",
    rule.doc.checks,
    "",
    `**Why it matters.** ${rule.doc.why}`,
    "",
    "**Example**",
    "",
    "```",
    rule.doc.example,
    "```",
    "",
    `**Fix.** ${rule.doc.fix}`,
    "",
    "</details>",
  ].join("\n");
}

/** Truncates at a line boundary and says so, for GitHub's and Slack's size limits. */
export function fitTo(text: string, max: number, note = "\n\n_(truncated: see the check run for the full list)_"): string {
  if (text.length <= max) return text;
  const room = max - note.length;
  const cut = text.lastIndexOf("\n", room);
  return text.slice(0, cut > 0 ? cut : room) + note;
}
