// num_query_groups unset is the head count for a model built in the file: Megatron-Core
// TransformerConfig.__post_init__ (megatron/core/transformer/transformer_config.py, pin
// 2a75ac1) sets `num_query_groups = num_attention_heads` when it is None. HCP009 then judges
// KV heads = attention heads; a provider from elsewhere keeps num_query_groups unknown.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "hcp-kv-default-"));

function recipe(name: string, model: string, extra = ""): string {
  const file = join(dir, `${name}.py`);
  writeFileSync(
    file,
    `def ${name}_pretrain_config():\n    cfg = ConfigContainer(model=${model})\n    cfg.model.context_parallel_size = 8\n` +
      `    cfg.model.cp_comm_type = "a2a"\n${extra}    return cfg\n`,
  );
  return file;
}

type Finding = { ruleId: string; severity: string; message: string };

async function hcp009(file: string): Promise<Finding[]> {
  const run = await hcpBot(["lint", "--format", "json", file]);
  const out = JSON.parse(run.stdout) as { findings: Finding[] };
  return out.findings.filter((f) => f.ruleId === "HCP009");
}

describe("hcp-bot lint: unset num_query_groups of a provider built in the file", () => {
  it("GPTModelProvider(num_attention_heads=12) with pure a2a CP 8: an error judging 12 KV heads", async () => {
    const found = await hcp009(recipe("heads12", "GPTModelProvider(num_attention_heads=12, num_layers=4)"));
    expect(found.map((f) => f.severity)).toEqual(["error"]);
    expect(found[0]!.message).toContain("12 Q and 12 KV heads per TP rank");
  });

  it("GPTModelProvider(num_attention_heads=32) with CP 8: 8 divides 32 Q and 32 KV heads, so nothing", async () => {
    expect(await hcp009(recipe("heads32", "GPTModelProvider(num_attention_heads=32)"))).toEqual([]);
  });

  it("num_query_groups assigned a value the analyzer cannot know: stays unknown (info)", async () => {
    const file = recipe("assigned", "GPTModelProvider(num_attention_heads=32)", "    cfg.model.num_query_groups = kv_groups()\n");
    const found = await hcp009(file);
    expect(found.map((f) => f.severity)).toEqual(["info"]);
    expect(found[0]!.message).toContain("num_query_groups");
  });

  it("a provider class with its own defaults, or a builder from elsewhere: stays unknown (info)", async () => {
    for (const model of ["Llama3ModelProvider(num_attention_heads=32)", "make_provider(num_attention_heads=32)"]) {
      const found = await hcp009(recipe(model.startsWith("Llama") ? "llama" : "builder", model, "    cfg.model.num_attention_heads = 32\n"));
      expect(found.map((f) => f.severity), model).toEqual(["info"]);
      expect(found[0]!.message).toMatch(/num_query_groups.* not known/);
    }
  });
});
