// Runs over a real Megatron-Bridge checkout when MEGATRON_BRIDGE_DIR names one (not in default CI).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConfigUnit } from "../../../src/core/model/settings.ts";
import { extractText } from "./support.ts";

const RECIPES = join(process.env.MEGATRON_BRIDGE_DIR ?? "/nonexistent", "src/megatron/bridge/recipes");
const present = existsSync(RECIPES);

function pythonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? pythonFiles(join(dir, e.name)) : e.name.endsWith(".py") ? [join(dir, e.name)] : [],
  );
}

describe("Megatron-Bridge HEAD recipes", () => {
  it.skipIf(!present)("extracts every recipe module without throwing or parse errors", async () => {
    const units: ConfigUnit[] = [];
    for (const file of pythonFiles(RECIPES)) {
      const text = readFileSync(file, "utf8");
      const result = await extractText(file, text);
      expect(result.diagnostics).toEqual([]);
      for (const u of result.units) {
        for (const s of Object.values(u.settings)) {
          if (s) expect(text.slice(s.origin.location.range.start.offset, s.origin.location.range.end.offset)).toBe(s.origin.text);
        }
      }
      units.push(...result.units);
    }
    expect(units.length).toBeGreaterThan(200);

    const llama = units.find((u) => u.name === "llama3_8b_pretrain_32gpu_h100_bf16_64k_config");
    expect(llama?.settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 4 });
    expect(llama?.settings["dataset.seq_length"]?.value).toEqual({ known: true, value: 65536 });
    expect(llama?.settings["dataset.seq_length"]?.origin.text).toBe("SEQUENCE_LENGTH_64K");
    expect(llama?.gpus).toBeUndefined(); // "_32gpu_" in the name is not read as a world size
    expect(llama?.mode).toBe("pretrain");

    const qwen = units.find((u) => u.name === "qwen3_600m_sft_8gpu_h100_bf16_128k_config");
    expect(qwen?.settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 8 });
    expect(qwen?.settings["model.cp_comm_type"]?.value).toEqual({ known: true, value: "a2a" });
    expect(qwen?.settings["dataset.pad_seq_to_mult"]?.value).toEqual({ known: true, value: 16 });
    expect(qwen?.mode).toBe("sft");
    expect(qwen?.anchors.model?.receiver).toBe("cfg.model.");
  });
});
