// Origins cover exactly the value text, and anchors give edits that keep the file valid Python.
import { beforeAll, describe, expect, it } from "vitest";
import { applyEdits, insertSettingEdit, replaceValueEdit, setValueEdit } from "../../../src/core/model/edits.ts";
import type { ConfigUnit } from "../../../src/core/model/settings.ts";
import type { ExtractResult } from "../../../src/core/recipe/types.ts";
import { expectExactOrigin, extractFixture, extractText, fixtureText, lineOf, pythonParser, setting, unitNamed } from "./support.ts";

const FIXTURE_FILES = ["current_style.py", "kwargs_style.py", "legacy_style.py", "workloads.py", "providers.py"];

async function parsesCleanly(source: string): Promise<boolean> {
  const tree = (await pythonParser()).parse(source);
  if (!tree) return false;
  const ok = !tree.rootNode.hasError;
  tree.delete();
  return ok;
}

describe("origins", () => {
  it.each(FIXTURE_FILES)("every origin in %s slices back to its text, with matching line and column", async (name) => {
    const { text, result } = await extractFixture(name);
    let checked = 0;
    for (const unit of result.units) {
      for (const s of Object.values(unit.settings)) {
        if (!s) continue;
        expectExactOrigin(text, s);
        expect(s.origin.syntax).toBe("python");
        expect(s.origin.location.file).toBe(`fixtures/recipes/python/${name}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(3);
  });

  it("points at the exact value expression, line and column", async () => {
    const { text, result } = await extractFixture("current_style.py");
    const cp = setting(unitNamed(result, "toy_pretrain_8gpu_h100_bf16_config"), "model.context_parallel_size");
    const line = lineOf(text, "    cfg.model.context_parallel_size = 4");
    expect(cp.origin.location.range.start).toMatchObject({ line, column: "    cfg.model.context_parallel_size = ".length + 1 });
    expect(cp.origin.location.range.end).toMatchObject({ line, column: "    cfg.model.context_parallel_size = 4".length + 1 });
    expect(cp.origin.text).toBe("4");
    expect(cp.origin.kind).toBe("assignment");
    const derived = setting(unitNamed(result, "toy_pretrain_16gpu_h100_bf16_128k_config"), "model.context_parallel_size");
    expect(derived.origin.text).toBe("CP_BASE * 2");
  });

  it("counts columns in UTF-16 units after non-ASCII text", async () => {
    const text = 'NOTE = "é😀 long context"  # ünïcode\n\ndef u_config():\n    cfg = base()\n    cfg.model.cp_comm_type = "a2a"  # ✓\n    return cfg\n';
    const result = await extractText("u.py", text);
    const s = setting(unitNamed(result, "u_config"), "model.cp_comm_type");
    expectExactOrigin(text, s);
    expect(s.origin.text).toBe('"a2a"');
  });

  it("replacing a local origin changes only that recipe's value", async () => {
    const { text, result } = await extractFixture("current_style.py");
    const unit = unitNamed(result, "toy_pretrain_8gpu_h100_bf16_config");
    const edit = replaceValueEdit(setting(unit, "model.context_parallel_size"), 8);
    const fixed = applyEdits(text, [edit]);
    expect(await parsesCleanly(fixed)).toBe(true);
    const again = await extractText("fixtures/recipes/python/current_style.py", fixed);
    expect(unitNamed(again, "toy_pretrain_8gpu_h100_bf16_config").settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 8 });
  });
});

describe("anchors", () => {
  let text: string;
  let result: ExtractResult;
  beforeAll(async () => ({ text, result } = await extractFixture("current_style.py")));

  it("sit at the end of the last statement before `return cfg`, with the body indent", () => {
    const unit = unitNamed(result, "toy_pretrain_8gpu_h100_bf16_config");
    const anchor = unit.anchors.model;
    expect(anchor).toBeDefined();
    if (!anchor) return;
    const lastLine = lineOf(text, "    cfg.ddp.average_in_collective = True");
    expect(anchor.style).toBe("python-attr");
    expect(anchor.at.range.start).toEqual(anchor.at.range.end);
    expect(anchor.at.range.start.line).toBe(lastLine);
    expect(anchor.at.range.start.column).toBe("    cfg.ddp.average_in_collective = True".length + 1);
    expect(anchor.indent).toBe("    ");
    expect(anchor.receiver).toBe("cfg.model.");
    expect(unit.anchors.dataset?.receiver).toBe("cfg.dataset.");
    expect(unit.anchors.dist?.receiver).toBe("cfg.dist.");
    expect(unit.anchors.ddp?.receiver).toBe("cfg.ddp.");
  });

  it("give an insertion that parses and lands before return, for every recipe with one", async () => {
    let inserted = 0;
    for (const unit of result.units) {
      for (const anchor of Object.values(unit.anchors)) {
        if (!anchor) continue;
        const edit = insertSettingEdit(anchor, "model.hierarchical_context_parallel_sizes", [2, 2]);
        const fixed = applyEdits(text, [edit]);
        expect(await parsesCleanly(fixed)).toBe(true);
        const insertedLine = `${anchor.indent}${anchor.receiver}hierarchical_context_parallel_sizes = [2, 2]`;
        const at = fixed.indexOf(`\n${insertedLine}\n`, edit.range.start.offset);
        expect(at).toBe(edit.range.start.offset);
        const next = fixed.slice(at + insertedLine.length + 2).split("\n")[0] ?? "";
        expect(next.trim()).toMatch(/^return \w+$/);
        inserted++;
      }
    }
    expect(inserted).toBeGreaterThan(8);
  });

  it("make setValueEdit override an inherited value instead of editing the base recipe", async () => {
    const unit = unitNamed(result, "toy_pretrain_32gpu_h100_bf16_chain_config");
    const edit = setValueEdit(unit, "model.context_parallel_size", 2);
    expect(edit).toBeDefined();
    if (!edit) return;
    const fixed = applyEdits(text, [edit]);
    expect(await parsesCleanly(fixed)).toBe(true);
    const again = await extractText("fixtures/recipes/python/current_style.py", fixed);
    expect(unitNamed(again, "toy_pretrain_32gpu_h100_bf16_chain_config").settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 2 });
    expect(unitNamed(again, "toy_pretrain_16gpu_h100_bf16_128k_config").settings["model.context_parallel_size"]?.value).toEqual({ known: true, value: 8 });
  });

  it("skip recipes that do not return a named config", async () => {
    const kw = (await extractFixture("kwargs_style.py")).result;
    expect(unitNamed(kw, "toy_8b_64k_pretrain_config").anchors).toEqual({});
    const oneLine = await extractText("o.py", "def a_config():\n    cfg = base(); return cfg\n");
    expect(unitNamed(oneLine, "a_config").anchors).toEqual({});
  });

  it("work after a multi-line statement and with tab indentation", async () => {
    const source = "def t_config():\n\tcfg = base()\n\tcfg.model.x = dict(\n\t\ta=1,\n\t)  # trailing\n\treturn cfg\n";
    const unit: ConfigUnit = unitNamed(await extractText("t.py", source), "t_config");
    const anchor = unit.anchors.model;
    expect(anchor?.indent).toBe("\t");
    if (!anchor) return;
    const fixed = applyEdits(source, [insertSettingEdit(anchor, "model.context_parallel_size", 2)]);
    expect(fixed).toContain("\t)  # trailing\n\tcfg.model.context_parallel_size = 2\n\treturn cfg\n");
    expect(await parsesCleanly(fixed)).toBe(true);
  });
});

it("fixture texts are read as written (sanity)", () => {
  expect(fixtureText("current_style.py")).toContain("def toy_pretrain_8gpu_h100_bf16_config");
});
