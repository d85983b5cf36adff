// Which lines of a comment are commands: only plain text lines that start with /hcp.
import { describe, expect, it } from "vitest";
import { parseCommentCommands } from "../../src/core/commands/index.ts";

const kinds = (body: string) => parseCommentCommands(body).map((p) => (p.ok ? `${p.line}:${p.command.kind}` : `${p.line}:error`));

describe("comment structure", () => {
  const cases: [string, string, string[]][] = [
    ["a plain command", "/hcp smoke", ["1:smoke"]],
    ["a command after text", "Thanks!\n\n/hcp smoke\n", ["3:smoke"]],
    ["CRLF line ends", "hi\r\n/hcp status\r\n", ["2:status"]],
    ["mid-line mention", "please run /hcp smoke when ready", []],
    ["inline code", "`/hcp smoke`", []],
    ["list item", "- /hcp smoke", []],
    ["up to three spaces", "   /hcp smoke", ["1:smoke"]],
    ["four spaces: indented code", "    /hcp smoke", []],
    ["a tab: indented code", "\t/hcp smoke", []],
    ["backtick fence", "```\n/hcp smoke\n```\n/hcp status", ["4:status"]],
    ["tilde fence", "~~~bash\n/hcp smoke\n~~~", []],
    ["longer fence not closed by a shorter one", "````\n```\n/hcp smoke\n````\n/hcp status", ["5:status"]],
    ["tilde fence not closed by backticks", "~~~\n```\n/hcp smoke\n~~~\n/hcp help", ["5:help"]],
    ["unclosed fence hides the rest", "```\n/hcp smoke\n/hcp status", []],
    ["indented fence", "  ```\n/hcp smoke\n  ```", []],
    ["inline triple backticks are no fence", "```/hcp smoke```\n/hcp status", ["2:status"]],
    ["closing fence with trailing text does not close", "```\n``` x\n/hcp smoke\n```", []],
    ["fence in a list item", "- run this:\n- ```\n  /hcp smoke\n  ```\n/hcp status", ["5:status"]],
    ["fence in a numbered list item", "1. ```\n   /hcp smoke\n   ```", []],
    ["four-space fence is content, not a close", "```\n    ```\n/hcp smoke\n```", []],
    ["pre block", "<pre>\n/hcp smoke\n</pre>\n/hcp status", ["4:status"]],
    ["one-line pre block", "<pre>x</pre>\n/hcp status", ["2:status"]],
    // GitHub renders a collapsed <details> body, hidden until opened: it must not dispatch.
    ["collapsed details body", "<details>\n\n/hcp smoke\n\n</details>", []],
    ["details with a summary, then a visible command", "<details><summary>log</summary>\n\n/hcp smoke\n\n</details>\n\n/hcp status", ["7:status"]],
    ["unclosed details hides the rest", "<details>\n\n/hcp smoke", []],
    ["hidden div", "<div hidden>\n\n/hcp smoke\n\n</div>", []],
    ["hidden div without blank lines (an HTML block)", "<div hidden>\n/hcp smoke\n</div>", []],
    ["img alt text over lines", '<img alt="see\n/hcp smoke\n" src="x.png">\n\n/hcp status', ["5:status"]],
    ["img alt with a > inside quotes", '<img alt="a > b\n/hcp smoke">', []],
    ["Markdown image alt text over lines", "![pic\n/hcp smoke\n](x.png)", []],
    ["a lone tag line starts an HTML block", "<span>\n/hcp smoke", []],
    ["a span closed on its line hides nothing after it", "<span>x</span>\n\n/hcp smoke", ["3:smoke"]],
    ["a tag in inline code opens nothing", "use `<details>` here\n\n/hcp smoke", ["3:smoke"]],
    ["void elements open nothing", "<br>\n\n/hcp smoke", ["3:smoke"]],
    ["quote", "> /hcp smoke", []],
    ["nested quote", "> > /hcp smoke", []],
    ["quote lazy continuation", "> earlier:\n/hcp smoke", []],
    ["after a quote and a blank line", "> earlier: /hcp smoke\n\n/hcp smoke", ["3:smoke"]],
    ["html comment", "<!-- /hcp smoke -->", []],
    ["multi-line html comment", "<!--\n/hcp smoke\n-->\n/hcp status", ["4:status"]],
    ["unclosed html comment hides the rest", "<!--\n/hcp smoke\n/hcp status", []],
    ["command then comment opener", "/hcp status <!-- note\n/hcp smoke\n-->", ["1:status"]],
    ["text after a closing comment is not at line start", "<!-- x -->/hcp smoke", []],
    ["comment inside a code fence does not open", "```\n<!--\n```\n/hcp smoke", ["4:smoke"]],
    ["three commands", "/hcp smoke\n/hcp status\n/hcp help", ["1:smoke", "2:status", "3:help"]],
  ];
  it.each(cases)("%s", (_name, body, expected) => {
    expect(kinds(body)).toEqual(expected);
  });

  it("strips an inline HTML comment from a command's words", () => {
    expect(parseCommentCommands("/hcp smoke <!-- cp=99 --> cp=2 sizes=2,1")).toMatchObject([{ ok: true, command: { kind: "smoke", cp: 2 } }]);
  });

  it("reads at most three commands and says so", () => {
    const body = ["/hcp status", "/hcp help", "/hcp check", "/hcp smoke", "/hcp cancel"].join("\n");
    const parsed = parseCommentCommands(body);
    expect(parsed).toHaveLength(4);
    expect(parsed[3]).toMatchObject({ ok: false, line: 4, error: expect.stringMatching(/only the first 3 \/hcp commands of a comment are read/) });
  });

  it("refuses a second command of the same kind in one comment", () => {
    const parsed = parseCommentCommands("/hcp smoke\n/hcp smoke cp=2 sizes=2,1");
    expect(parsed[0]).toMatchObject({ ok: true });
    expect(parsed[1]).toMatchObject({ ok: false, kind: "smoke", line: 2, error: expect.stringMatching(/appears more than once/) });
  });

  it("handles a 10k-line comment quickly, with commands hidden in code and quotes", () => {
    const noise = Array.from({ length: 10_000 }, (_, i) => {
      switch (i % 5) {
        case 0:
          return "```";
        case 1:
          return "/hcp smoke";
        case 2:
          return "```";
        case 3:
          return "> /hcp smoke";
        default:
          return "";
      }
    }).join("\n");
    const start = performance.now();
    expect(parseCommentCommands(`${noise}\n/hcp status`)).toMatchObject([{ ok: true, line: 10_001, command: { kind: "status" } }]);
    // Catches runaway (backtracking) work only; a loaded machine stays far below this.
    expect(performance.now() - start).toBeLessThan(5_000);
  });

  it("stops scanning after the cap on a comment of 10k commands", () => {
    const body = Array(10_000).fill("/hcp smoke").join("\n");
    const parsed = parseCommentCommands(body);
    expect(parsed).toHaveLength(4);
  });

  it("handles a single 1 MB line", () => {
    expect(parseCommentCommands(`/hcp smoke ${"a".repeat(1 << 20)}`)).toMatchObject([{ ok: false, error: expect.stringMatching(/characters long/) }]);
    expect(parseCommentCommands("x".repeat(1 << 20))).toEqual([]);
  });
});
