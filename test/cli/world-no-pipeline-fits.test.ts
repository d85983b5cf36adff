// HCP017 with the pipeline size unknown: TP × PP × CP divides the world only if TP × CP does
// (Megatron-Bridge 067f987, training/config.py:1019-1026 get_data_parallel_size asserts
// world % (TP × PP × CP) == 0), so 24 GPUs with TP 2 × CP 8 fail for every PP.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

function launch(tp: number, cp: number): string {
  const dir = mkdtempSync(join(tmpdir(), "hcp017-pp-"));
  const file = join(dir, "launch.sh");
  writeFileSync(
    file,
    `torchrun --nnodes=3 --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config -tp ${tp} -pp $PP -cp ${cp}\n`,
  );
  return file;
}

describe("hcp-bot lint: HCP017 when no pipeline size can divide the world", () => {
  it("24 GPUs, TP 2 × CP 8, PP from an unset variable: an error naming TP × CP = 16", async () => {
    const run = await hcpBot(["lint", launch(2, 8)]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/error HCP017 .*TP × CP = 16 does not divide 24/);
    // The one line says it too (the rule's summary alone would not name the numbers).
    const json = JSON.parse((await hcpBot(["lint", "--format", "json", launch(2, 8)])).stdout) as { findings: { ruleId: string; message: string }[] };
    expect(json.findings.find((f) => f.ruleId === "HCP017")!.message).toMatch(/no pipeline_model_parallel_size makes TP × PP × CP divide it/);
  });

  it("24 GPUs, TP 2 × CP 4: some PP fits, so an unknown PP is not judged", async () => {
    const run = await hcpBot(["lint", launch(2, 4)]);
    expect(run.stdout).not.toContain("HCP017");
  });
});
