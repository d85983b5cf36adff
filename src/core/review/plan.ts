// Decides what a pull-request review posts, from the findings and what is already there.
// Pure: the GitHub layer only executes the plan, so every decision here is testable
// without HTTP.
import type { Finding, Rule } from "../model/finding.ts";
import { LineIndex } from "../model/source.ts";
import { fingerprint } from "./fingerprint.ts";

export { fingerprint };
import { lostInput, type Diagnostic } from "../recipe/types.ts";
import { countBySeverity } from "../render/text.ts";
import { findingsTable, fitTo, ruleDocDetails, SEVERITY_ICON, tableCell, untrusted, whereText } from "../render/markdown.ts";
import { hunkCovering, isCommentable, type Hunk } from "./diff.ts";
import { suggestionBlock, suggestionFor } from "./suggestion.ts";
import { proposedLayoutDetails } from "../render/layout/advice.ts";

export const SUMMARY_MARKER = "<!-- hcp-bot:summary -->";
export { CHECK_NAME } from "./check-name.ts";
// Only the marker that ends a body counts: a suggestion block quotes PR text, which could hold a forged one.
const FINGERPRINT_MARKER = /<!-- hcp-bot:finding fp=([0-9a-f]{16}) -->\s*$/;

// GitHub limits: check-run text fields 65535 characters, comment bodies 65536.
const MAX_CHECK_TEXT = 65_000;
const MAX_COMMENT = 65_000;

export interface ReviewedFile {
  path: string;
  text: string;
  hunks: Hunk[];
}

export interface ReviewInput {
  headSha: string;
  findings: readonly Finding[];
  diagnostics: readonly Diagnostic[];
  /** Files analyzed at the head SHA, with their diff hunks. */
  files: readonly ReviewedFile[];
  /** Configurations (recipes, launch lines) analyzed. */
  configurations: number;
  /** Fingerprints found in the bot's earlier review comments on this PR. */
  alreadyCommented: ReadonlySet<string>;
  rules: readonly Rule[];
  maxInlineComments: number;
  /** Draft PRs get the check run only. */
  draft: boolean;
  /** Link to a file line at the head SHA, for tables. */
  blobUrl?: (path: string, line: number) => string;
  /** Notes about the PR as a whole (e.g. a Transformer Engine pin change, HCP015). */
  prNotes?: readonly Finding[];
  /** GPUs per node (the repository's gpus_per_node), for pictures of proposed layouts; default 8. */
  gpusPerNode?: number;
  /** Each rule's documentation page (src/core/rules/doc-url.ts), linked under an inline comment; none when absent. */
  docUrl?: (ruleId: string) => string | undefined;
}

/** Proposed layouts drawn in one summary comment at most (each is a collapsed picture). */
const MAX_SUMMARY_LAYOUTS = 3;

function layoutDetails(f: Finding, gpusPerNode: number): string {
  return f.fix?.layout ? proposedLayoutDetails(f.fix.layout, f.fix.layout.domainGpus ?? gpusPerNode) : "";
}

/** Each distinct proposed layout once, in finding order. */
function distinctLayouts(findings: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const l = f.fix?.layout;
    if (!l) return false;
    const key = `${l.tp}:${l.sizes.join(",")}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export interface Annotation {
  path: string;
  start_line: number;
  end_line: number;
  start_column?: number;
  end_column?: number;
  annotation_level: "failure" | "warning" | "notice";
  title: string;
  message: string;
  raw_details?: string;
}

export interface InlineComment {
  path: string;
  line: number;
  start_line?: number;
  side: "RIGHT";
  start_side?: "RIGHT";
  body: string;
  fingerprint: string;
}

export type Conclusion = "success" | "failure" | "neutral" | "skipped";

export interface ReviewPlan {
  conclusion: Conclusion;
  check: { title: string; summary: string; text: string; annotations: Annotation[] };
  inline: InlineComment[];
  /** In-diff findings beyond the inline-comment cap, listed in the review body. */
  overflow: Finding[];
  reviewBody: string;
  summaryComment: string;
}

export function fingerprintsIn(body: string): string[] {
  const m = FINGERPRINT_MARKER.exec(body);
  return m ? [m[1]!] : [];
}

const LEVEL = { error: "failure", warning: "warning", info: "notice" } as const;

function annotationFor(f: Finding): Annotation {
  const { start, end } = f.location.range;
  const a: Annotation = {
    path: f.location.file,
    start_line: start.line,
    end_line: Math.max(start.line, end.line),
    annotation_level: LEVEL[f.severity],
    title: `${f.ruleId} ${f.ruleName}`,
    message: f.message.slice(0, 64_000),
  };
  if (start.line === end.line) {
    a.start_column = start.column;
    a.end_column = Math.max(start.column, end.column);
  }
  if (f.fix) {
    const edits = f.fix.edits.map((e) => `${e.file}:${e.range.start.line}: ${JSON.stringify(e.newText)}`).join("\n");
    a.raw_details = `Fix: ${f.fix.description}${edits ? `\n${edits}` : ""}`.slice(0, 64_000);
  }
  return a;
}

function inlineCommentFor(f: Finding, file: ReviewedFile, rules: readonly Rule[], fp: string, gpusPerNode: number, docUrl?: ReviewInput["docUrl"]): InlineComment | undefined {
  const line = f.location.range.start.line;
  const suggestion = f.fix ? suggestionFor(f.fix.edits, new LineIndex(file.text)) : undefined;
  const usable = suggestion && suggestion.path === file.path && hunkCovering(file.hunks, suggestion.startLine, suggestion.endLine);
  // A suggestion needs its whole range in one hunk; without one, the finding's own line must be in the diff.
  if (!usable && !isCommentable(file.hunks, line)) return undefined;
  const header = `${SEVERITY_ICON[f.severity]} **${f.ruleId}** ${f.severity} · \`${f.ruleName}\` · ${untrusted(f.unitName)}`;
  const parts = [header, "", untrusted(f.message)];
  if (usable) parts.push("", suggestionBlock(suggestion.replacement));
  if (f.fix) parts.push("", `**Fix:** ${untrusted(f.fix.description)}`);
  if (f.fix?.layout) parts.push("", layoutDetails(f, gpusPerNode));
  parts.push("", ruleDocDetails(rules.find((r) => r.id === f.ruleId)));
  const url = docUrl?.(f.ruleId);
  // The address is the operator's setting, not PR text; still, no character of it may end the link.
  if (url) parts.push("", `[${f.ruleId} documentation](${url.replace(/[()\s<>\[\]]/g, encodeURIComponent)})`);
  parts.push("", `<!-- hcp-bot:finding fp=${fp} -->`);
  const comment: InlineComment = { path: file.path, line, side: "RIGHT", body: parts.join("\n"), fingerprint: fp };
  if (usable) {
    comment.line = suggestion.endLine;
    if (suggestion.startLine !== suggestion.endLine) {
      comment.start_line = suggestion.startLine;
      comment.start_side = "RIGHT";
    }
  }
  return comment;
}

/**
 * A file that was not analyzed (or lost a part to a syntax error) is a failure, not a
 * neutral: GitHub counts neutral as passing for a required check, and input that was not
 * read proved nothing. The same holds for the CLI (exit 1 or 2) and the playground.
 */
function conclusionOf(findings: readonly Finding[], files: number, lost: readonly Diagnostic[]): Conclusion {
  if (lost.length > 0) return "failure";
  if (files === 0) return "skipped";
  const c = countBySeverity(findings);
  if (c.error > 0) return "failure";
  if (c.warning > 0) return "neutral";
  return "success";
}

function countsLine(findings: readonly Finding[]): string {
  const c = countBySeverity(findings);
  return `${c.error} error(s), ${c.warning} warning(s), ${c.info} note(s)`;
}

function lostText(lost: readonly Diagnostic[]): string {
  const files = new Set(lost.map((d) => d.file)).size;
  return `${files} file(s) not fully analyzed`;
}

function titleFor(conclusion: Conclusion, findings: readonly Finding[], configurations: number, lost: readonly Diagnostic[]): string {
  if (lost.length > 0) return `${lostText(lost)}${findings.length ? `; ${countsLine(findings)}` : ""} in ${configurations} configuration(s)`;
  if (conclusion === "skipped") return "No recipe or launch config changed";
  if (findings.length === 0) return `HCP settings look right in ${configurations} configuration(s)`;
  return `${countsLine(findings)} in ${configurations} configuration(s)`;
}

/** A script's base recipe read from hcp-bot's index, or left unknown: how it was judged, not input lost. */
const BASE_NOTES = new Set<Diagnostic["code"]>(["base-from-index", "base-unknown"]);

function diagnosticsList(diagnostics: readonly Diagnostic[]): string {
  const line = (d: Diagnostic) => `- \`${tableCell(d.file)}${d.location ? `:${d.location.range.start.line}` : ""}\` ${d.severity} ${d.code}: ${untrusted(d.message)}`;
  const section = (title: string, list: readonly Diagnostic[]) => (list.length ? [title, "", ...list.map(line)].join("\n") : "");
  return [
    section("**Files the analyzer could not fully read**", diagnostics.filter((d) => !BASE_NOTES.has(d.code))),
    section("**Base recipes**", diagnostics.filter((d) => BASE_NOTES.has(d.code))),
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** The summary's pictures of the layouts the fixes propose ("" when none does). */
function layoutsSection(findings: readonly Finding[], gpusPerNode: number): string {
  const layouts = distinctLayouts(findings).slice(0, MAX_SUMMARY_LAYOUTS);
  if (layouts.length === 0) return "";
  return ["", "**Proposed layouts**", "", ...layouts.map((f) => layoutDetails(f, gpusPerNode))].join("\n");
}

export function planReview(input: ReviewInput): ReviewPlan {
  const all = [...(input.prNotes ?? []), ...input.findings];
  const lost = lostInput(input.diagnostics);
  const conclusion = conclusionOf(all, input.files.length, lost);
  const byPath = new Map(input.files.map((f) => [f.path, f]));
  const link = input.blobUrl ? (f: Finding) => input.blobUrl!(f.location.file, f.location.range.start.line) : undefined;
  const gpusPerNode = input.gpusPerNode ?? 8;

  const inline: InlineComment[] = [];
  const overflow: Finding[] = [];
  const seen = new Set<string>();
  if (!input.draft) {
    for (const f of input.findings) {
      const fp = fingerprint(f);
      if (input.alreadyCommented.has(fp) || seen.has(fp)) continue;
      seen.add(fp);
      const file = byPath.get(f.location.file);
      const comment = file && inlineCommentFor(f, file, input.rules, fp, gpusPerNode, input.docUrl);
      if (!comment) continue;
      if (inline.length < input.maxInlineComments) inline.push(comment);
      else overflow.push(f);
    }
  }

  const title = titleFor(conclusion, all, input.configurations, lost);
  const table = findingsTable(all, link, input.docUrl);
  const summary = fitTo(
    [
      `**${title}** at \`${input.headSha.slice(0, 12)}\` (${input.files.length} file(s) analyzed).`,
      table && `\n${table}`,
      diagnosticsList(input.diagnostics) && `\n${diagnosticsList(input.diagnostics)}`,
    ]
      .filter(Boolean)
      .join("\n"),
    MAX_CHECK_TEXT,
  );
  const text = fitTo(
    all
      .filter((f) => f.fix)
      .map((f) => `### ${f.ruleId} in ${untrusted(f.unitName)} (${tableCell(whereText(f))})\n\n${untrusted(f.message)}\n\n**Fix:** ${untrusted(f.fix!.description)}${f.fix!.layout ? `\n\n${layoutDetails(f, gpusPerNode)}` : ""}`)
      .join("\n\n"),
    MAX_CHECK_TEXT,
  );

  // GitHub refuses the whole review (422 "Body is too long") past 65,536 characters: a PR of a
  // hundred broken recipes lists more than that, so the list is cut and the check run has it all.
  const reviewBody = fitTo(
    [
      `hcp-bot found ${countsLine(input.findings)} on lines this PR changes.`,
      overflow.length ? `\n${overflow.length} more finding(s) on changed lines (over the ${input.maxInlineComments}-comment limit):\n\n${findingsTable(overflow, link, input.docUrl)}` : "",
    ]
      .filter(Boolean)
      .join("\n"),
    MAX_COMMENT,
  );

  const summaryComment = fitTo(
    [
      SUMMARY_MARKER,
      "## HCP review",
      "",
      lost.length > 0
        ? `🛑 ${lostText(lost)} at \`${input.headSha.slice(0, 12)}\`, so this review cannot pass: fix or split what is listed under **Files the analyzer could not fully read**, then push again.${all.length ? ` Also ${countsLine(all)}.` : ""}`
        : all.length === 0
        ? `✅ No HCP problems in the ${input.configurations} configuration(s) this PR touches (at \`${input.headSha.slice(0, 12)}\`).`
        : `${conclusion === "failure" ? "🛑" : "⚠️"} ${countsLine(all)} at \`${input.headSha.slice(0, 12)}\`. Required fixes first; suggestions are on the changed lines, the rest are in the check run.`,
      table && `\n${table}`,
      layoutsSection(all, gpusPerNode),
      diagnosticsList(input.diagnostics) && `\n${diagnosticsList(input.diagnostics)}`,
      "",
      "<sub>Comment `/hcp check` to re-run this review, `/hcp help` for commands. `hcp-bot explain RULE` documents each rule.</sub>",
    ]
      .filter((p) => p !== "")
      .join("\n"),
    MAX_COMMENT,
  );

  return {
    conclusion,
    check: { title, summary, text, annotations: all.map(annotationFor) },
    inline,
    overflow,
    reviewBody,
    summaryComment,
  };
}
