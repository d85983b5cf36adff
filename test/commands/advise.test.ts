// `/hcp advise`: the same words on GitHub and Slack, integers in ranges, cp required.
import { describe, expect, it } from "vitest";
import { parseCommentCommands, parseSlackCommand } from "../../src/core/commands/index.ts";

const github = (line: string) => parseCommentCommands(line)[0]!;

describe("/hcp advise", () => {
  it("reads every option, on both surfaces; kv_heads defaults to heads (no GQA)", () => {
    const words = "advise cp=16 tp=2 pp=2 heads=32 kv_heads=8 gpus_per_node=4 nodes=8";
    const expected = { kind: "advise", cp: 16, tp: 2, pp: 2, heads: 32, kvHeads: 8, domainGpus: 4, domain: "node", nodes: 8 };
    expect(github(`/hcp ${words}`)).toMatchObject({ ok: true, command: expected });
    expect(parseSlackCommand(words)).toMatchObject({ ok: true, command: expected });
    expect(github("/hcp advise cp=8 heads=16")).toMatchObject({ ok: true, command: { cp: 8, heads: 16, kvHeads: 16 } });
    expect(github("/hcp advise cp=16 nvlink_domain=72")).toMatchObject({ ok: true, command: { domainGpus: 72, domain: "nvlink" } });
  });

  it.each([
    ["/hcp advise", /cp=N is required/],
    ["/hcp advise tp=2", /cp=N is required/],
    ["/hcp advise cp=0", /cp must be an integer from 1 to 1024 \(got `0`\)/],
    ["/hcp advise cp=4 tp=x", /tp must be an integer from 1 to 64/],
    ["/hcp advise cp=4 cp=8", /cp is given twice/],
    ["/hcp advise cp=4 sizes=2,2", /`sizes=2,2` is not one of cp=N, tp=N/],
    ["/hcp advise cp=4 gpus_per_node=8 nvlink_domain=72", /give gpus_per_node or nvlink_domain, not both/],
    ["/hcp advise cp=4 $(reboot)", /is not one of/],
  ])("%s is refused with what is allowed", (line, message) => {
    const parsed = github(line);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toMatch(message);
    expect(parsed.error).toMatch(/usage: \/hcp advise cp=N/);
  });
});
