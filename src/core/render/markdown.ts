// GitHub-flavoured Markdown for PR comments and check-run output.
import type { Finding, Rule } from "../model/finding.ts";
import { mdCell, mdMessage } from "./escape.ts";

/**
 * Text that came from a pull request, a log or a person (values, file names, messages that
 * quote them) is shown, never interpreted: no link, image, HTML (so nobody can forge the
 * bot's hidden markers) or mention; what the message quotes in backticks stays code
 * (escape.ts holds the one escaping function every GitHub surface uses).
 */
export function untrusted(text: string): string {
  return mdMessage(text);
}

export function tableCell(text: string): string {
  return mdCell(text);
}

export const SEVERITY_ICON = { error: "🛑", warning: "⚠️", info: "ℹ️" } as const;

export function whereText(f: Finding): string {
  return `${f.location.file}:${f.location.range.start.line}`;
}

/** `docUrl`: the rule's page (src/core/rules/doc-url.ts), linked from the Rule column, so the message can stay short. */
export function findingsTable(findings: readonly Finding[], linkFor?: (f: Finding) => string | undefined, docUrl?: (ruleId: string) => string | undefined): string {
  if (findings.length === 0) return "";
  const rows = findings.map((f) => {
    const where = tableCell(whereText(f));
    const link = linkFor?.(f);
    const doc = docUrl?.(f.ruleId);
    // The address is the operator's setting, not PR text; still, no character of it may end the link.
    const rule = doc ? `[${f.ruleId}](${doc.replace(/[()\s<>\[\]|]/g, encodeURIComponent)})` : f.ruleId;
    return `| ${SEVERITY_ICON[f.severity]} ${f.severity} | ${rule} | ${link ? `[${where}](${link})` : where} | ${tableCell(f.unitName)} | ${tableCell(f.message)} |`;
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
