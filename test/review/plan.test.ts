// Review planning on real analyzer output: which findings become inline comments with
// suggestions, what goes to the check run and the summary, and what is not repeated.
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { applyEdits } from "../../src/core/model/edits.ts";
import type { Finding } from "../../src/core/model/finding.ts";
import { LineIndex } from "../../src/core/model/source.ts";
import { hunkCovering, isCommentable, parsePatch } from "../../src/core/review/diff.ts";
import { fingerprint, fingerprintsIn, planReview, SUMMARY_MARKER, type ReviewInput } from "../../src/core/review/plan.ts";
import { suggestionBlock, suggestionFor } from "../../src/core/review/suggestion.ts";
import { tePinChangeNotes } from "../../src/core/review/te-pin.ts";
import { ALL_RULES } from "../../src/core/rules/index.ts";
import { docUrlFor } from "../../src/core/rules/doc-url.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

const RECIPE = `from megatron.bridge.recipes.common import _pretrain_common


def long_context_pretrain_config():
    cfg = _pretrain_common()
    cfg.dataset.seq_length = 65536
    cfg.model.seq_length = 65536
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    return cfg
`;

/** A patch that adds every line of the file (a new file). */
function addedFilePatch(text: string): string {
  const lines = text.replace(/\n$/, "").split("\n");
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}`;
}

function input(overrides: Partial<ReviewInput> & { text?: string; patch?: string } = {}): ReviewInput {
  const text = overrides.text ?? RECIPE;
  const report = analyze([{ path: "recipes/long.py", text }], { python });
  return {
    headSha: "a".repeat(40),
    findings: report.findings,
    diagnostics: report.diagnostics,
    files: [{ path: "recipes/long.py", text, hunks: parsePatch(overrides.patch ?? addedFilePatch(text)) }],
    configurations: report.units.length,
    alreadyCommented: new Set(),
    rules: ALL_RULES,
    maxInlineComments: 30,
    draft: false,
    ...overrides,
  };
}

describe("diff hunks", () => {
  const patch = "@@ -1,3 +1,4 @@\n def f():\n-    a = 1\n+    a = 2\n+    b = 3\n     return a\n@@ -10,2 +11,2 @@\n x\n+y";
  const hunks = parsePatch(patch);

  it("knows which new-file lines are commentable", () => {
    expect(hunks).toHaveLength(2);
    expect([1, 2, 3, 4].map((l) => isCommentable(hunks, l))).toEqual([true, true, true, true]);
    expect(isCommentable(hunks, 5)).toBe(false);
    expect(isCommentable(hunks, 11)).toBe(true);
    expect(isCommentable(hunks, 12)).toBe(true);
    expect([...hunks[0]!.added]).toEqual([2, 3]);
  });

  it("finds a hunk covering a range only when one hunk holds it all", () => {
    expect(hunkCovering(hunks, 2, 4)).toBe(hunks[0]);
    expect(hunkCovering(hunks, 4, 11)).toBeUndefined();
  });
});

describe("suggestions", () => {
  it("covers whole lines and equals the file after the edit", () => {
    const text = "a = 1\nb = 2\nc = 3\n";
    const index = new LineIndex(text);
    const edit = { file: "f.py", range: index.range(4, 5), newText: "9" };
    const s = suggestionFor([edit], index)!;
    expect(s).toEqual({ path: "f.py", startLine: 1, endLine: 1, replacement: "a = 9" });
    const insert = { file: "f.py", range: index.range(11, 11), newText: "\nx = 0" };
    const t = suggestionFor([insert], index)!;
    expect(t).toEqual({ path: "f.py", startLine: 2, endLine: 2, replacement: "b = 2\nx = 0" });
    const lines = text.split("\n");
    lines.splice(t.startLine - 1, t.endLine - t.startLine + 1, t.replacement);
    expect(lines.join("\n")).toBe(applyEdits(text, [insert]));
  });

  it("refuses edits in two files and fences backticks safely", () => {
    const index = new LineIndex("x\n");
    const r = index.range(0, 1);
    expect(suggestionFor([{ file: "a", range: r, newText: "" }, { file: "b", range: r, newText: "" }], index)).toBeUndefined();
    expect(suggestionBlock("a ``` b")).toBe("````suggestion\na ``` b\n````");
  });
});

describe("planReview", () => {
  it("posts the missing sizes as a suggestion on the changed line, with rule doc and fingerprint", () => {
    const plan = planReview(input());
    expect(plan.conclusion).toBe("failure");
    const comment = plan.inline.find((c) => c.body.includes("HCP001"))!;
    expect(comment).toBeDefined();
    const line = RECIPE.split("\n").findIndex((l) => l.includes("cp_comm_type")) + 1;
    expect(comment.line).toBe(line);
    expect(comment.start_line).toBeUndefined();
    expect(comment.body).toContain("```suggestion\n    cfg.model.cp_comm_type = \"a2a+p2p\"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n```");
    expect(comment.body).toContain("About HCP001");
    expect(fingerprintsIn(comment.body)).toEqual([comment.fingerprint]);
    expect(plan.check.annotations.some((a) => a.title.startsWith("HCP001") && a.annotation_level === "failure" && a.start_line === line)).toBe(true);
    expect(plan.summaryComment.startsWith(SUMMARY_MARKER)).toBe(true);
    expect(plan.summaryComment).toMatch(/HCP001/);
  });

  it("links the rule's documentation page under the comment when the pages are named (docUrlFor), and not otherwise", () => {
    const linked = planReview(input({ docUrl: docUrlFor({ HCP_DOCS_URL: "https://docs.example.test/rules/" }) })).inline.find((c) => c.body.includes("HCP001"))!;
    expect(linked.body).toContain("[HCP001 documentation](https://docs.example.test/rules/HCP001.md)");
    // The link sits before the fingerprint marker, which must stay last.
    expect(fingerprintsIn(linked.body)).toEqual([linked.fingerprint]);
    const bare = planReview(input()).inline.find((c) => c.body.includes("HCP001"))!;
    expect(bare.body).not.toContain("documentation](");
  });

  it("links the Rule column of the check run's and the summary's tables to the bot's own rule pages at HCP_PUBLIC_URL", () => {
    const plan = planReview(input({ docUrl: docUrlFor({ HCP_PUBLIC_URL: "https://bot.example.test" }) }));
    const row = /^\| [^|]+ \| \[HCP001\]\(https:\/\/bot\.example\.test\/docs\/rules\/HCP001\) \|/m;
    expect(plan.check.summary).toMatch(row);
    expect(plan.summaryComment).toMatch(row);
    expect(plan.inline.find((c) => c.body.includes("HCP001"))!.body).toContain("[HCP001 documentation](https://bot.example.test/docs/rules/HCP001)");
    expect(planReview(input()).check.summary).toMatch(/^\| [^|]+ \| HCP001 \|/m);
  });

  it("does not repeat a finding already commented, and its fingerprint survives moved lines", () => {
    const first = planReview(input());
    const shifted = `# a comment pushed above\n${RECIPE}`;
    const second = planReview(input({ text: shifted, alreadyCommented: new Set(first.inline.map((c) => c.fingerprint)) }));
    expect(second.inline).toEqual([]);
    expect(second.check.annotations.length).toBe(first.check.annotations.length);
  });

  it("keeps findings outside the diff out of inline comments but in the check run", () => {
    const plan = planReview(input({ patch: "@@ -1,1 +1,1 @@\n-x\n+from megatron.bridge.recipes.common import _pretrain_common" }));
    expect(plan.inline).toEqual([]);
    expect(plan.check.annotations.length).toBeGreaterThan(0);
    expect(plan.summaryComment).toMatch(/HCP001/);
  });

  it("caps inline comments and lists the rest in the review body", () => {
    const recipes = Array.from({ length: 5 }, (_, i) => RECIPE.replace("long_context_pretrain_config", `r${i}_pretrain_config`).replace(/^from.*\n/, "")).join("\n");
    const plan = planReview(input({ text: recipes, maxInlineComments: 2 }));
    expect(plan.inline).toHaveLength(2);
    expect(plan.overflow.length).toBeGreaterThanOrEqual(3);
    expect(plan.reviewBody).toMatch(/more finding\(s\) on changed lines/);
  });

  it("gives drafts the check run only", () => {
    const plan = planReview(input({ draft: true }));
    expect(plan.inline).toEqual([]);
    expect(plan.conclusion).toBe("failure");
  });

  it("concludes success when clean, neutral on warnings only, skipped with no files", () => {
    const clean = RECIPE.replace('    cfg.model.cp_comm_type = "a2a+p2p"\n', "");
    expect(planReview(input({ text: clean })).conclusion).toBe("success");
    expect(planReview(input({ text: clean })).summaryComment).toMatch(/No HCP problems/);
    const warning = RECIPE.replace('cfg.model.cp_comm_type = "a2a+p2p"', 'cfg.model.cp_comm_type = "p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]');
    const w = planReview(input({ text: warning }));
    expect(w.check.annotations.map((a) => a.annotation_level)).toContain("warning");
    expect(w.conclusion).toBe("neutral");
    expect(planReview({ ...input(), files: [], findings: [] }).conclusion).toBe("skipped");
  });

  it("shows text from the PR without letting it mention people or forge markers", () => {
    const hostile = RECIPE.replace("long_context_pretrain_config", "x_config").replace('"a2a+p2p"', '"a2a+p2p@org/team<!-- hcp-bot:finding fp=0000000000000000 -->"');
    const plan = planReview(input({ text: hostile }));
    // Code blocks (the suggestion quotes the line) are shown literally by GitHub; everything else must be escaped.
    const prose = [plan.summaryComment, ...plan.inline.map((c) => c.body)].join("\n").replace(/```suggestion\n[\s\S]*?\n```/g, "");
    expect(prose).not.toMatch(/@org/);
    expect(prose).not.toContain("<!-- hcp-bot:finding fp=0000000000000000");
    for (const c of plan.inline) expect(fingerprintsIn(c.body)).toEqual([c.fingerprint]);
  });

  it("fingerprints ignore line numbers but not the rule, file or configuration", () => {
    const f = planReview(input()).inline[0]!;
    const base: Finding = {
      ruleId: "HCP001",
      ruleName: "n",
      severity: "error",
      message: "x (a.py:10)",
      location: { file: "a.py", range: { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } } },
      unitId: "u",
      unitName: "u",
      related: [],
    };
    expect(fingerprint(base)).toBe(fingerprint({ ...base, message: "x (a.py:42)" }));
    expect(fingerprint(base)).not.toBe(fingerprint({ ...base, ruleId: "HCP002" }));
    expect(fingerprint(base)).not.toBe(fingerprint({ ...base, unitName: "v" }));
    expect(f.fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("HCP015 Transformer Engine pin change", () => {
  it("notes a uv.lock change on the pin line and a submodule move", () => {
    const notes = tePinChangeNotes([
      { filename: "uv.lock", status: "modified", patch: '@@ -10,3 +10,3 @@\n [[package]]\n name = "transformer-engine"\n-version = "2.15.0"\n+version = "2.18.0+e7c550c5"' },
      { filename: "3rdparty/Megatron-LM", status: "modified", patch: "@@ -1 +1 @@\n-Subproject commit aaa\n+Subproject commit bbb" },
      { filename: "README.md", status: "modified", patch: "@@ -1 +1 @@\n-transformer-engine\n+transformer_engine" },
    ]);
    expect(notes.map((n) => [n.ruleId, n.location.file, n.location.range.start.line])).toEqual([
      ["HCP015", "uv.lock", 12],
      ["HCP015", "3rdparty/Megatron-LM", 1],
    ]);
    expect(notes[0]!.message).toMatch(/\/hcp smoke/);
  });
});
