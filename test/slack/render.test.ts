// Block Kit rendering: escaping of user and log text, and Slack's size limits whatever goes in.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { findingsMessage, fitText, helpMessage, mrkdwn, smokeMessage, SLACK_LIMITS, statusMessage, type SlackSmokeView } from "../../src/core/render/slack.ts";
import { helpText } from "../../src/core/commands/index.ts";
import { verdictOf } from "../../src/core/verdict/index.ts";
import type { Finding } from "../../src/core/model/finding.ts";
import { messageProblems } from "../support/fake-slack/index.ts";

const view = (over: Partial<SlackSmokeView> = {}): SlackSmokeView => ({
  requestId: "req123456",
  requester: "maint",
  sha: "a".repeat(40),
  repo: "acme/mb",
  pr: 7,
  prUrl: "https://github.com/acme/mb/pull/7",
  runUrl: "https://github.com/acme/mb/actions/runs/1",
  checkRunUrl: "https://github.com/acme/mb/runs/2",
  slackUser: "U0MAINT",
  plan: { recipe: "llama32_1b_pretrain_config", cp: 4, cpCommType: "a2a+p2p", sizes: [2, 2], gpus: 4, iters: 2, overrides: [], expectHcp: true },
  ...over,
});

function finding(i: number, message: string): Finding {
  return {
    ruleId: "HCP001",
    ruleName: "a2a-p2p-without-sizes",
    severity: "error",
    message,
    location: { file: "x.sh", range: { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 2, offset: 1 } } },
    unitId: `u${i}`,
    unitName: `unit ${i}`,
    related: [],
    fix: { description: `fix ${i} <!here>`, edits: [] },
  };
}

describe("mrkdwn escaping", () => {
  it("neutralises broadcasts, mentions, channel links and links", () => {
    const out = mrkdwn("<!channel> <!here|here> <!everyone> <@U123> <#C123|general> <https://evil.example|click> @channel @here a & b");
    expect(out).not.toMatch(/<[!@#h]/);
    expect(out).toContain("&lt;!channel&gt;");
    expect(out).toContain("a &amp; b");
    expect(out).not.toMatch(/@channel|@here/);
  });

  it("never lets arbitrary text produce a control sequence", () => {
    fc.assert(fc.property(fc.string(), (s) => !/[<>]/.test(mrkdwn(s))));
  });
});

describe("limits", () => {
  it("cuts text to the limit and keeps code blocks closed", () => {
    const cut = fitText("```" + "x\n".repeat(5000) + "```", 3000);
    expect(cut.length).toBeLessThanOrEqual(3000);
    expect((cut.match(/```/g) ?? []).length % 2).toBe(0);
  });

  it("fits 200 long findings into 50 blocks of at most 3000 characters", () => {
    const msg = findingsMessage(Array.from({ length: 200 }, (_, i) => finding(i, "<!channel> ".repeat(2000))), "that");
    expect(msg.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    expect(messageProblems(msg as unknown as Record<string, unknown>)).toEqual([]);
    expect(JSON.stringify(msg)).not.toContain("<!channel>");
    expect(JSON.stringify(msg)).not.toContain("<!here>");
  });

  it("keeps the help text within limits", () => {
    const msg = helpMessage(helpText({ surface: "slack" }));
    expect(messageProblems(msg as unknown as Record<string, unknown>)).toEqual([]);
  });

  it("renders every smoke state within limits, with a huge hostile log", () => {
    const hostile = `${"<!channel> ".repeat(50)}\n`.repeat(2000);
    const verdict = verdictOf(`Traceback\nAssertionError: <@U999> ${"z".repeat(10_000)}\n${hostile}`, { expectHcp: true, contextParallelSize: 4 }, 1);
    const states = [
      { kind: "dispatched" },
      { kind: "running" },
      { kind: "finished", verdict, note: "<!here> note" },
      { kind: "cancelled", by: "<!channel>" },
      { kind: "timed_out", minutes: 30, labels: ["gpu-4"] },
      { kind: "failed", reason: "<@U1> ".repeat(2000) },
    ] as const;
    for (const state of states) {
      const msg = smokeMessage(view({ plan: { ...view().plan, recipe: "<!channel>".repeat(500) } }), state);
      expect(messageProblems(msg as unknown as Record<string, unknown>)).toEqual([]);
      const json = JSON.stringify(msg);
      expect(json).not.toMatch(/<!channel>|<!here>|<@U1>|<@U999>/);
      expect(json).toContain("<@U0MAINT>"); // the requester mention is ours
    }
  });

  it("refuses link URLs that could break out of the link syntax", () => {
    const msg = statusMessage({ repo: "acme/mb", pr: 1, review: { conclusion: "failure", title: "<!here>", url: "https://x/a|<!channel>" } });
    expect(JSON.stringify(msg)).not.toMatch(/<!channel>|<!here>/);
  });
});
