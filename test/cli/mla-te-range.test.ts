// Issue 27.10, HCP025: Transformer Engine 2.5-2.14 refuses Multi-Latent Attention with
// cp_comm_type 'a2a' or 'all_gather'. attn_forward_func_with_cp (transformer_engine/pytorch/
// attention/dot_product_attention/context_parallel.py) asserts
// `not enable_mla or cp_comm_type in ["p2p", "a2a+p2p"]`, enable_mla = k.shape[-1] != v.shape[-1]:
// added with CP for MLA in v2.5 (#1729, "The context parallel running configs cannot support MLA!"),
// v2.8-v2.11 print "{cp_comm_type=}" literally (no f prefix; v2.9 line 3815), v2.12-v2.14 format it
// (v2.14 line 4076), v2.15 removes the check (#2719). Through `hcp-bot lint` with the pin in a
// requirements file, and `hcp-bot explain`.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

interface Finding {
  ruleId: string;
  severity: string;
  message: string;
}

const recipe = (type: string, mla = "True", cp = 4) =>
  [
    "def fam_mla_pretrain_config() -> ConfigContainer:",
    "    cfg = _pretrain_common()",
    "    cfg.model = GPTModelProvider()",
    `    cfg.model.multi_latent_attention = ${mla}`,
    `    cfg.model.context_parallel_size = ${cp}`,
    `    cfg.model.cp_comm_type = ${type}`,
    "    return cfg",
    "",
  ].join("\n");

async function hcp025(files: Record<string, string>): Promise<Finding[]> {
  const dir = mkdtempSync(join(tmpdir(), "hcp-mla-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const r = await hcpBot(["lint", ...Object.keys(files).map((n) => join(dir, n)), "--format", "json", "--isolated"]);
  return (JSON.parse(r.stdout) as { findings: Finding[] }).findings.filter((f) => f.ruleId === "HCP025");
}
const pinned = (version: string, text: string) => ({ "recipe.py": text, "requirements.txt": `transformer-engine[pytorch]==${version}\n` });

describe("HCP025 through hcp-bot lint", () => {
  it("TE 2.9 with 'a2a': an error quoting 2.9's literal braces", async () => {
    const [f, ...rest] = await hcp025(pinned("2.9.0", recipe('"a2a"')));
    expect(rest).toEqual([]);
    expect(f!.severity).toBe("error");
    expect(f!.message).toContain('"Context parallelism does not support MLA with {cp_comm_type=}!"');
  });
  it("TE 2.14.1 with per-layer ['p2p', 'all_gather']: the formatted text of 2.12-2.14", async () => {
    const [f] = await hcp025(pinned("2.14.1", recipe('["p2p", "all_gather"]')));
    expect(f!.message).toContain("Context parallelism does not support MLA with cp_comm_type='all_gather'!");
  });
  it("TE 2.6: the message of 2.5-2.7", async () => {
    const [f] = await hcp025(pinned("2.6.0", recipe('"a2a"')));
    expect(f!.message).toContain("The context parallel running configs cannot support MLA!");
  });
  it("TE 2.15 dropped the check, TE 2.4 predates it: nothing", async () => {
    expect(await hcp025(pinned("2.15.0", recipe('"a2a"')))).toEqual([]);
    expect(await hcp025(pinned("2.4.0", recipe('"a2a"')))).toEqual([]);
  });
  it("no pin: a warning that quotes every release range", async () => {
    const [f] = await hcp025({ "recipe.py": recipe('"all_gather"') });
    expect(f!.severity).toBe("warning");
    expect(f!.message).toContain("2.5 to 2.14");
  });
  it("what TE accepts: p2p, a2a+p2p, no MLA, CP 1", async () => {
    expect(await hcp025(pinned("2.9.0", recipe('"p2p"')))).toEqual([]);
    expect(await hcp025(pinned("2.9.0", recipe('"a2a"', "False")))).toEqual([]);
    expect(await hcp025(pinned("2.9.0", recipe('"a2a"', "True", 1)))).toEqual([]);
  });
  it("a Megatron-LM launch line: --multi-latent-attention with --cp-comm-type a2a", async () => {
    const line = "torchrun --nproc_per_node 8 pretrain_gpt.py --multi-latent-attention --context-parallel-size 4 --cp-comm-type a2a\n";
    const [f] = await hcp025({ "run.sh": `#!/bin/bash\n${line}`, "requirements.txt": "transformer-engine==2.10.0\n" });
    expect(f!.severity).toBe("error");
  });
});

describe("hcp-bot explain HCP025", () => {
  it("names the TE range and the upstream change", async () => {
    const r = await hcpBot(["explain", "HCP025"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("mla-cp-comm-type");
    expect(r.stdout).toContain("#1729");
    expect(r.stdout).toContain("#2719");
  });
});
