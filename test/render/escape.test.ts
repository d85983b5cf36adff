// Hostile text through every renderer that writes to GitHub (PR comments, review comments,
// check-run summaries, the job summary), rendered as GitHub-flavoured Markdown: no link, image,
// raw HTML, comment (forged marker) or mention may come out of the quoted text.
import { describe, expect, it } from "vitest";
import { codeBlock, codeSpan, mdText } from "../../src/core/render/escape.ts";
import { findingsTable } from "../../src/core/render/markdown.ts";
import { planMarkdown, smokeCommentBody, type SmokeView } from "../../src/core/render/smoke.ts";
import { verdictOf } from "../../src/core/verdict/index.ts";
import { smokeReply, statusText } from "../../src/github/smoke/story.ts";
import { verdictMarkdown } from "../../src/gpu/report.ts";
import type { Finding } from "../../src/core/model/finding.ts";
import type { SmokeRequest } from "../../src/store/types.ts";
import { HOSTILE, inspectGfm, renderGfm } from "../support/gfm.ts";

/** What came out of the quoted text; the bot's own @-mention of the requester (alice) is its own. */
function quoted(markdown: string) {
  const r = inspectGfm(markdown);
  const { hrefs: _hrefs, ...rest } = r;
  return { ...rest, mentions: r.mentions.filter((m) => m !== "alice") };
}
const clean = { links: 0, images: 0, foreignElements: [], mentions: [] };

function finding(text: string): Finding {
  const at = { line: 3, column: 5, offset: 10 };
  return { ruleId: "HCP001", ruleName: "a2a-p2p-without-sizes", severity: "error", message: `cp_comm_type is \`${text}\`: ${text}`, location: { file: `recipes/${text}.py`, range: { start: at, end: at } }, unitId: "u", unitName: text, related: [] };
}

/** A real failing log whose traceback ends in the hostile text (what the parser quotes as the cause). */
function hostileVerdict(text: string) {
  const log = ["[rank0]: Traceback (most recent call last):", '[rank0]:   File "train.py", line 3, in <module>', `[rank0]: RuntimeError: ${text.replace(/\n/g, " ")}`, ""].join("\n");
  return verdictOf(log, { expectHcp: true }, 1);
}

const view: SmokeView = {
  requestId: "req-1",
  requester: "alice",
  sha: "a".repeat(40),
  plan: { recipe: "llama32_1b_pretrain_config", cp: 4, cpCommType: "a2a+p2p", sizes: [2, 2], gpus: 4, iters: 2, overrides: ["model.x=1"], expectHcp: true },
};

describe.each(HOSTILE.map((h) => [h]))("hostile text %j", (text) => {
  it("the findings table (check run summary, PR summary comment) shows it as text", () => {
    expect(quoted(findingsTable([finding(text)]))).toEqual({ ...clean, comments: 0 });
  });

  it("the smoke PR comment and check-run summary with a verdict quoting it", () => {
    const v = hostileVerdict(text);
    expect(v.cause?.message).toContain(text.replace(/\n/g, " ").slice(0, 40));
    const body = smokeCommentBody({ ...view, plan: { ...view.plan, overrides: [text] } }, { kind: "finished", verdict: v, note: text });
    // One comment: the bot's own marker.
    expect(quoted(body)).toEqual({ ...clean, comments: 1 });
  });

  it("the job summary, the refusal reply and /hcp status", () => {
    expect(quoted(verdictMarkdown(hostileVerdict(text), { recipe: text, requestId: text }))).toEqual({ ...clean, comments: 0 });
    expect(quoted(smokeReply({ kind: "refused", reason: text }, "alice")!)).toEqual({ ...clean, comments: 0 });
    const latest = { id: "r", githubLogin: "alice", sha: "b".repeat(40), status: "completed", verdictStatus: "fail", verdictSummary: text, runUrl: null } as unknown as SmokeRequest;
    expect(quoted(statusText(latest))).toEqual({ ...clean, comments: 0 });
  });
});

describe("the escaping functions", () => {
  it("a code span or block outlasts any backtick run, and shows the text exactly", () => {
    for (const text of ["a`b", "``x``", "`start", "end`", "```", "````` x"]) {
      expect(renderGfm(codeSpan(text))).toMatch(/^<p><code>.*<\/code><\/p>\n?$/);
      const html = renderGfm(codeBlock(`${text}\n![](https://evil.example/p.png)`));
      expect(html.startsWith("<pre><code>")).toBe(true);
      expect(html).not.toContain("<img");
    }
  });

  it("plain text keeps every character a reader sees", () => {
    const text = "a [b](c) ![d](e) <f> @g #1 https://h.example www.i.example *j* _k_ | l";
    const shown = renderGfm(mdText(text)).replace(/<\/?p>\n?/g, "").replace(/\u200b/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">");
    expect(shown).toBe(text);
  });

  it("the plan's overrides block cannot be closed by an override", () => {
    expect(quoted(planMarkdown({ ...view, plan: { ...view.plan, overrides: ["```", "</details>", "![](https://evil.example/p.png)"] } }))).toMatchObject(clean);
  });
});
