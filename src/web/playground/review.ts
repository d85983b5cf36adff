// What the playground shows for one pasted file: the same analysis and the same review
// plan the GitHub App posts (check run, inline comments with suggestion blocks, summary
// comment), as if a pull request added the file. Pure: it runs in the page's Web Worker.
import type { Language } from "web-tree-sitter";
import { analyze } from "../../core/analyze/index.ts";
import type { UpstreamRecipes } from "../../core/analyze/bridge-index.ts";
import type { Finding } from "../../core/model/finding.ts";
import type { Diagnostic } from "../../core/recipe/types.ts";
import { formatRuleDoc } from "../../core/render/text.ts";
import { parsePatch } from "../../core/review/diff.ts";
import { planReview, type Conclusion } from "../../core/review/plan.ts";
import { ALL_RULES, ruleById } from "../../core/rules/index.ts";
import { rulePagePath } from "../server/paths.ts";
import type { InputKind, PlaygroundRequest } from "./input.ts";

const PATH_FOR: Record<InputKind, string> = { python: "recipe.py", yaml: "overrides.yaml", shell: "launch.sh" };

export interface InlineView {
  line: number;
  startLine: number;
  body: string;
  ruleId: string;
  /** The finding's severity, as the comment's header says it; undefined for a comment of no finding. */
  severity?: Finding["severity"];
}

export interface PlaygroundReview {
  path: string;
  kind: InputKind;
  conclusion: Conclusion;
  check: { title: string; summary: string; text: string };
  inline: InlineView[];
  summaryComment: string;
  findings: Finding[];
  diagnostics: Diagnostic[];
  /** `hcp-bot explain` for every rule that reported something, and its page on this server. */
  ruleDocs: { id: string; text: string; url: string }[];
  configurations: number;
  ms: number;
}

/** The file as a pull request that adds it: every line is in the diff. */
function addedFilePatch(text: string): string {
  const lines = text.split("\n");
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}`;
}

/** `upstream`: the index of upstream recipes the page's server offers, or why there is none. */
export function reviewPlayground(request: PlaygroundRequest, python: Language, now: () => number = () => performance.now(), upstream?: UpstreamRecipes): PlaygroundReview {
  const started = now();
  const path = PATH_FOR[request.kind];
  const text = request.text;
  const report = analyze([{ path, text }], { python, gpusPerNode: request.gpusPerNode, upstream });
  const plan = planReview({
    headSha: "0".repeat(40),
    findings: report.findings,
    diagnostics: report.diagnostics,
    files: [{ path, text, hunks: parsePatch(addedFilePatch(text)) }],
    configurations: report.units.length,
    alreadyCommented: new Set(),
    rules: ALL_RULES,
    // Everything is shown: the PR review's cap exists for GitHub's abuse limits.
    maxInlineComments: Number.MAX_SAFE_INTEGER,
    draft: false,
    // The page is served by the bot, which serves the rule pages too: links on its own origin.
    docUrl: rulePagePath,
  });
  const ids = [...new Set(report.findings.map((f) => f.ruleId))].sort();
  return {
    path,
    kind: request.kind,
    conclusion: plan.conclusion,
    check: { title: plan.check.title, summary: plan.check.summary, text: plan.check.text },
    inline: plan.inline.map((c) => {
      const head = /\*\*(HCP\d+)\*\* (error|warning|info)\b/.exec(c.body);
      return { line: c.line, startLine: c.start_line ?? c.line, body: c.body, ruleId: /\*\*(HCP\d+)\*\*/.exec(c.body)?.[1] ?? "", ...(head ? { severity: head[2] as Finding["severity"] } : {}) };
    }),
    summaryComment: plan.summaryComment,
    findings: report.findings,
    diagnostics: report.diagnostics,
    ruleDocs: ids.flatMap((id) => {
      const rule = ruleById(id);
      return rule ? [{ id, text: formatRuleDoc(rule), url: rulePagePath(id) }] : [];
    }),
    configurations: report.units.length,
    ms: Math.round(now() - started),
  };
}
