// Bad input: the extractor reports problems as diagnostics and never throws.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractFixture, extractText, unitNamed, valueOf } from "./support.ts";

describe("syntax errors", () => {
  it("reports the first error with its location and still extracts the functions that parse", async () => {
    const { text, result } = await extractFixture("syntax_error.py");
    const parseErrors = result.diagnostics.filter((d) => d.code === "parse-error");
    expect(parseErrors).toHaveLength(1);
    const d = parseErrors[0];
    expect(d?.severity).toBe("error");
    expect(d?.file).toBe("fixtures/recipes/python/syntax_error.py");
    expect(d?.message).toMatch(/syntax error at line 13/);
    const badLine = text.split("\n").findIndex((l) => l.includes("= = 4")) + 1;
    expect(d?.location?.range.start.line).toBe(badLine);
    const names = result.units.map((u) => u.name);
    expect(names).toContain("good_pretrain_config");
    expect(names).toContain("after_broken_pretrain_config");
    expect(names).not.toContain("broken_pretrain_config");
    expect(valueOf(unitNamed(result, "after_broken_pretrain_config"), "model.context_parallel_size")).toBe(8);
  });

  it("reports a missing token", async () => {
    const result = await extractText("m.py", "def f_config():\n    cfg = base(\n    return cfg\n");
    expect(result.diagnostics[0]?.code).toBe("parse-error");
    expect(result.diagnostics[0]?.location).toBeDefined();
  });
});

describe("inputs that must not break it", () => {
  it("handles an empty file", async () => {
    const result = await extractText("empty.py", "");
    expect(result).toEqual({ units: [], diagnostics: [], tePins: [] });
  });

  it("handles binary garbage", async () => {
    let garbage = "";
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      garbage += String.fromCharCode(seed % 65536);
    }
    const result = await extractText("garbage.py", garbage);
    expect(Array.isArray(result.units)).toBe(true);
  });

  it("handles a 5 MB file", async () => {
    const recipe = (i: number) => `def r${i}_config():\n    cfg = base()\n    cfg.model.context_parallel_size = ${(i % 8) + 1}\n    cfg.train.x = ${i}\n    return cfg\n\n`;
    const parts: string[] = [];
    let size = 0;
    for (let i = 0; size < 5_000_000; i++) {
      const r = recipe(i);
      parts.push(r);
      size += r.length;
    }
    const result = await extractText("big.py", parts.join(""));
    expect(result.units.length).toBe(parts.length);
    expect(valueOf(unitNamed(result, "r9_config"), "model.context_parallel_size")).toBe(2);
  });

  it("handles 1000-deep nesting in expressions and blocks: past Python's own limits, one 'not analyzed' diagnostic", async () => {
    const tooDeep = (result: Awaited<ReturnType<typeof extractText>>) => result.diagnostics.filter((d) => /^not analyzed: too deeply nested/.test(d.message));
    const deepExpr = `def d_config():\n    cfg = base()\n    cfg.model.context_parallel_size = ${"(".repeat(1000)}2${")".repeat(1000)}\n    cfg.model.num_layers = ${"[".repeat(1000)}${"]".repeat(1000)}\n    return cfg\n`;
    const exprResult = await extractText("deep.py", deepExpr);
    expect(exprResult.units).toHaveLength(0);
    expect(tooDeep(exprResult)[0]?.message).toMatch(/line 3 opens bracket level 201; Python itself stops at 200/);
    let blocks = "def b_config():\n    cfg = base()\n";
    for (let i = 1; i <= 1000; i++) blocks += `${" ".repeat(4 * i)}if x${i}:\n`;
    blocks += `${" ".repeat(4 * 1001)}cfg.model.context_parallel_size = 2\n    return cfg\n`;
    expect(tooDeep(await extractText("deep2.py", blocks))).toHaveLength(1);
    const calls = `X = ${"f(".repeat(1000)}1${")".repeat(1000)}\ndef c_config():\n    cfg = base()\n    cfg.model.num_layers = X\n    return cfg\n`;
    expect(tooDeep(await extractText("deep3.py", calls))).toHaveLength(1);
    // Just under the limit the recipe is read; a value behind 190 calls stays unknown (the evaluator's own depth bound).
    const shallow = `X = ${"f(".repeat(190)}1${")".repeat(190)}\ndef c_config():\n    cfg = base()\n    cfg.model.context_parallel_size = ${"(".repeat(190)}2${")".repeat(190)}\n    cfg.model.num_layers = X\n    return cfg\n`;
    const shallowResult = await extractText("shallow.py", shallow);
    expect(tooDeep(shallowResult)).toHaveLength(0);
    expect(shallowResult.units).toHaveLength(1);
    expect(shallowResult.units[0]?.settings["model.num_layers"]?.value.known).toBe(false);
  });

  it("survives self-recursive and mutually recursive helpers", async () => {
    const source = "def _a(n):\n    return _b(n)\n\ndef _b(n):\n    return _a(n)\n\ndef r_config():\n    cfg = base()\n    cfg.model.context_parallel_size = _a(2)\n    return cfg\n";
    const result = await extractText("rec.py", source);
    expect(unitNamed(result, "r_config").settings["model.context_parallel_size"]?.value.known).toBe(false);
  });

  it("never throws on arbitrary text built from Python fragments", async () => {
    const fragments = ["def ", "r_config", "(", ")", ":", "\n", "    ", "cfg", " = ", ".", "model", "context_parallel_size", "1", "**", "{", "}", "[", "]", "if ", "else", "return ", "'", '"', "#", ",", "=", "*", "replace(", "for x in y", "\t", "@d\n", "class P(Provider):\n", "cp_comm_type: str = ", "\\"];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...fragments), { maxLength: 80 }), async (parts) => {
        const result = await extractText("fuzz.py", parts.join(""));
        expect(Array.isArray(result.units)).toBe(true);
        for (const u of result.units) for (const s of Object.values(u.settings)) expect(s?.origin.location.range.start.offset).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });
});
