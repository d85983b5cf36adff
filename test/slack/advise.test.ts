// `/hcp advise` on Slack: answered in the ack (pure arithmetic, nothing scheduled), the text
// grid in a code block within Slack's limits, through signed requests to the real core.
import { describe, expect, it } from "vitest";
import { claimThenSchedule, createSlackCore, fetchAdapter, type DeferredCommand } from "../../src/slack/endpoint.ts";
import { signSlackBody } from "../../src/slack/signature.ts";
import { SLACK_LIMITS } from "../../src/core/render/slack.ts";
import { MemoryStore } from "../../src/store/index.ts";
import { slashCommandForm } from "../support/slack-form.ts";

const SECRET = "advise-secret";
const now = 1_800_000_000;

async function signed(text: string, trigger: string): Promise<Request> {
  const body = slashCommandForm(text, { trigger_id: trigger });
  return new Request("https://bot.example.invalid/slack/events", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(now), "x-slack-signature": await signSlackBody(SECRET, now, body) },
    body,
  });
}

interface Ack {
  response_type: string;
  text: string;
  blocks: { type: string; text?: { text: string } }[];
}

describe("/hcp advise on Slack", () => {
  const scheduled: DeferredCommand[] = [];
  const handle = fetchAdapter(createSlackCore({ signingSecret: SECRET, nowSeconds: () => now, accept: claimThenSchedule(new MemoryStore(), (_k, _w, c) => void scheduled.push(c)) }));

  it("answers at once with the recommendation, the rejected choices and the grid as a code block", async () => {
    const res = await handle(await signed("advise cp=16 heads=32 kv_heads=8 nodes=2", "t-a1"));
    const ack = (await res.json()) as Ack;
    expect(res.status).toBe(200);
    expect(ack.response_type).toBe("ephemeral");
    expect(ack.text).toBe("Recommended: cp_comm_type=\"a2a+p2p\", hierarchical_context_parallel_sizes=[8, 2]");
    const texts = ack.blocks.map((b) => b.text?.text ?? "");
    expect(texts[1]).toMatch(/\*Rejected\*/);
    const grid = texts.find((t) => t.startsWith("```"))!;
    expect(grid).toMatch(/node 1 +GPU/);
    expect(grid).toMatch(/p0 \[0, 8\]/);
    expect(grid.endsWith("```")).toBe(true);
    expect(scheduled).toEqual([]);
  });

  it("a big job still fits one section: fewer nodes are drawn", async () => {
    const ack = (await (await handle(await signed("advise cp=64 tp=2 nodes=128", "t-a2"))).json()) as Ack;
    for (const b of ack.blocks) expect((b.text?.text ?? "").length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(ack.blocks.map((b) => b.text?.text ?? "").join("\n")).toMatch(/more node\(s\), ranks \d+-1023, not drawn/);
  });

  it("numbers that cannot be laid out, and bad words, get a reason", async () => {
    const misfit = (await (await handle(await signed("advise cp=16 nodes=3", "t-a3"))).json()) as Ack;
    expect(misfit.text).toMatch(/cannot lay that out: 3 × 8 = 24 GPUs is not a multiple/);
    // Past the bound, from anyone: refused in the ack in one line (was 2.7 GB and 16 s on the answering thread).
    const huge = (await (await handle(await signed("advise cp=8 nodes=4096 gpus_per_node=1024", "t-a5"))).json()) as Ack;
    expect(huge.text).toMatch(/cannot lay that out: 4096 × 1024 = 4194304 GPUs is more than the advisor lays out \(at most 65536/);
    // At the bound it is answered, and the grid is a summary of the first nodes.
    const largest = (await (await handle(await signed("advise cp=8 nodes=1024 gpus_per_node=64", "t-a6"))).json()) as Ack;
    expect(largest.text).toMatch(/^Recommended: /);
    for (const b of largest.blocks) expect((b.text?.text ?? "").length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(largest.blocks.map((b) => b.text?.text ?? "").join("\n")).toMatch(/more node\(s\), ranks \d+-65535, not drawn/);
    const bad = (await (await handle(await signed("advise cp=<!channel>", "t-a4"))).json()) as Ack;
    expect(bad.text).toMatch(/cp must be an integer/);
    expect(bad.text).not.toContain("<!channel>");
  });
});
