// Runs the non-Python extractors over a Megatron-Bridge checkout when MEGATRON_BRIDGE_DIR
// names one. CI has none; everything else uses our own fixtures.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ExtractResult } from "../../src/core/recipe/types.ts";
import { extractMarkdown, extractShell } from "../../src/core/recipe/launch/index.ts";
import { extractTePins } from "../../src/core/recipe/pins.ts";
import { extractYaml } from "../../src/core/recipe/yaml.ts";

const MB = process.env.MEGATRON_BRIDGE_DIR ?? "/nonexistent";

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

function extract(path: string, text: string): ExtractResult | undefined {
  if (/\.ya?ml$/.test(path)) return extractYaml({ path, text });
  if (/\.(?:sh|bash)$/.test(path)) return extractShell({ path, text });
  if (/\.md$/.test(path)) return extractMarkdown({ path, text });
  return undefined;
}

describe("Megatron-Bridge checkout", () => {
  it.skipIf(!existsSync(join(MB, "examples")))("extracts examples, tutorials, scripts and docs without throwing", () => {
    const roots = ["examples", "tutorials", "scripts", "docs"].map((r) => join(MB, r)).filter(existsSync);
    let launchUnits = 0;
    for (const path of roots.flatMap((r) => walk(r))) {
      const text = readFileSync(path, "utf8");
      const result = extract(path, text);
      if (!result) continue;
      for (const u of result.units) {
        if (u.kind === "launch") launchUnits++;
        for (const s of Object.values(u.settings)) {
          if (!s.local) continue;
          const { start, end } = s.origin.location.range;
          expect(text.slice(start.offset, end.offset), `${u.id} ${s.key}`).toBe(s.origin.text);
        }
      }
    }
    expect(launchUnits).toBeGreaterThan(20);
  });

  it.skipIf(!existsSync(join(MB, "examples/model_verification_cards")))("every card.yaml training command yields a launch unit", () => {
    const dir = join(MB, "examples/model_verification_cards");
    for (const card of readdirSync(dir)) {
      const path = join(dir, card, "card.yaml");
      if (!existsSync(path)) continue;
      const text = readFileSync(path, "utf8");
      const expected = (text.match(/train\.sh|run_recipe\.py/g) ?? []).length;
      const units = extractYaml({ path, text }).units.filter((u) => u.kind === "launch");
      expect(units.length, path).toBe(expected);
      for (const u of units) expect(u.baseRecipe, `${u.id}`).toMatch(/_config$|^[a-z0-9_]+$/);
    }
  });

  it.skipIf(!existsSync(join(MB, "uv.lock")))("finds the TE pin in uv.lock", () => {
    const pins = extractTePins({ path: "uv.lock", text: readFileSync(join(MB, "uv.lock"), "utf8") }).tePins;
    expect(pins).toHaveLength(1);
    expect(pins[0]?.version).toMatch(/^2\.\d+\.\d+$/);
  });
});
