// The bot's own Markdown (review comments, summaries, smoke verdicts) read back for the
// pages: the structure comes out, and text from recipes or logs never becomes markup.
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { planReview } from "../../src/core/review/plan.ts";
import { ALL_RULES } from "../../src/core/rules/index.ts";
import { smokeCommentBody } from "../../src/core/render/smoke.ts";
import { createVerdictParser } from "../../src/core/verdict/index.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";
import { markdownToHtml } from "../../src/web/markdown/html.ts";
import { inlineText, parseMarkdown } from "../../src/web/markdown/parse.ts";
import { parsePatch } from "../../src/core/review/diff.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

const HOSTILE = `def evil_config():
    """<img src=x onerror=alert(1)>"""
    cfg = _pretrain_common()
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    return cfg


def x_config_<script>():
    pass
`;

function addedPatch(text: string): string {
  const lines = text.split("\n");
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}`;
}

describe("parseMarkdown", () => {
  it("reads a review comment: header, message, suggestion fence, fix, rule docs in details", () => {
    const text = "def broken_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = \"a2a+p2p\"\n    return cfg\n";
    const report = analyze([{ path: "r.py", text }], { python });
    const plan = planReview({
      headSha: "a".repeat(40),
      findings: report.findings,
      diagnostics: [],
      files: [{ path: "r.py", text, hunks: parsePatch(addedPatch(text)) }],
      configurations: 1,
      alreadyCommented: new Set(),
      rules: ALL_RULES,
      maxInlineComments: 30,
      draft: false,
    });
    const blocks = parseMarkdown(plan.inline[0]!.body);
    // The fix proposes sizes, so a collapsed Mermaid picture of the layout comes before the rule docs.
    expect(blocks.map((b) => b.t)).toEqual(["para", "para", "code", "para", "details", "details"]);
    const suggestion = blocks[2]!;
    expect(suggestion).toMatchObject({ t: "code", lang: "suggestion" });
    expect(suggestion.t === "code" && suggestion.v).toContain("hierarchical_context_parallel_sizes");
    const layout = blocks[4]!;
    expect(layout.t === "details" && inlineText(layout.summary)).toMatch(/^Rank layout of the proposed sizes: a2a 2 × p2p 2/);
    expect(layout.t === "details" && layout.c.some((b) => b.t === "code" && b.lang === "mermaid")).toBe(true);
    const details = blocks[5]!;
    expect(details.t === "details" && inlineText(details.summary)).toMatch(/^About HCP001 /);
    expect(details.t === "details" && details.c.some((b) => b.t === "code")).toBe(true);

    const summary = parseMarkdown(plan.summaryComment);
    const table = summary.find((b) => b.t === "table");
    expect(table && table.t === "table" && table.rows).toHaveLength(1);
    expect(table && table.t === "table" && inlineText(table.rows[0]![1]!)).toBe("HCP001");
  });

  it("keeps escaped pipes inside a table cell and decodes the entities untrusted() writes", () => {
    const blocks = parseMarkdown("| a | b |\n|---|---|\n| x \\| y | &lt;b&gt; &amp; `c &lt; d` |\n");
    expect(blocks).toHaveLength(1);
    const t = blocks[0]!;
    expect(t.t === "table" && t.rows[0]!.map(inlineText)).toEqual(["x | y", "<b> & c < d"]);
  });

  it("drops hidden markers and links only http(s), site-relative and fragment targets", () => {
    const blocks = parseMarkdown("<!-- hcp-bot:summary -->\n[ok](https://github.com/a/b) [bad](javascript:alert(1)) [rel](/runs/1)\n");
    expect(blocks).toHaveLength(1);
    const links = blocks[0]!.t === "para" ? blocks[0]!.c.filter((n) => n.t === "link") : [];
    expect(links.map((l) => l.t === "link" && l.href)).toEqual(["https://github.com/a/b", "/runs/1"]);
  });

  it("turns any input into a tree (unclosed fences, stray closers, deep brackets)", () => {
    for (const input of ["```\nno end", "</details>\ntext", "[".repeat(10_000), "**".repeat(5000), "<details>\n".repeat(2000), "\u0000\u0001"]) {
      expect(Array.isArray(parseMarkdown(input))).toBe(true);
    }
  });
});

describe("markdownToHtml", () => {
  it("shows recipe text that looks like HTML as text", () => {
    const report = analyze([{ path: "evil<b>.py", text: HOSTILE }], { python });
    const plan = planReview({
      headSha: "b".repeat(40),
      findings: report.findings,
      diagnostics: report.diagnostics,
      files: [{ path: "evil<b>.py", text: HOSTILE, hunks: parsePatch(addedPatch(HOSTILE)) }],
      configurations: report.units.length,
      alreadyCommented: new Set(),
      rules: ALL_RULES,
      maxInlineComments: 30,
      draft: false,
    });
    const html = [plan.summaryComment, ...plan.inline.map((c) => c.body)].map(markdownToHtml).join("\n");
    expect(plan.inline.length).toBeGreaterThan(0);
    expect(html).toContain("evil&#60;b&#62;.py");
    expect(html).not.toMatch(/<(?!\/?(p|br|strong|em|code|sub|a|ul|li|h[1-6]|div|table|thead|tbody|tr|th|td|pre|details|summary)\b)[a-z]/i);
  });

  it("renders a smoke verdict whose log lines carry markup and Markdown as inert text", () => {
    const parser = createVerdictParser({ expectHcp: true });
    parser.push(new TextEncoder().encode(" iteration        1/       2 | lm loss: 1.0E+01 | <script>alert(1)</script> |\n`x` </details> [a](javascript:x)\n"));
    const verdict = parser.end(0);
    const body = smokeCommentBody(
      { requestId: "r1", requester: "<img>", sha: "c".repeat(40), plan: { recipe: "x<y", cp: 4, cpCommType: "a2a+p2p", sizes: [2, 2], gpus: 4, iters: 2, overrides: ["a=<b>"], expectHcp: true } },
      { kind: "finished", verdict },
    );
    const html = markdownToHtml(body);
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("javascript:");
    expect(html).toContain("x&#60;y");
  });
});
