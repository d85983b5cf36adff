// What the playground refuses before analysis, what it guesses a paste is, and the
// examples it ships (each one reviewed as the page would, in Node).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";
import { readExamples } from "../../src/web/build.ts";
import { checkInput, detectKind, MAX_INPUT_CHARS } from "../../src/web/playground/input.ts";
import { reviewPlayground } from "../../src/web/playground/review.ts";

describe("checkInput", () => {
  it("refuses empty, oversized and binary text with a reason", () => {
    expect(checkInput("  \n")).toMatchObject({ ok: false, message: expect.stringMatching(/^Paste a recipe/) });
    expect(checkInput("x".repeat(MAX_INPUT_CHARS + 1))).toMatchObject({ ok: false, message: expect.stringMatching(/^The text is 1\.0 MB; the playground analyzes up to 1\.0 MB/) });
    expect(checkInput("a\u0000b")).toMatchObject({ ok: false, message: expect.stringMatching(/NUL bytes/) });
    expect(checkInput("\u0001\u0002\u0003".repeat(100))).toMatchObject({ ok: false, message: expect.stringMatching(/looks like binary data \(300 control/) });
    expect(checkInput("x".repeat(MAX_INPUT_CHARS))).toEqual({ ok: true });
    expect(checkInput("cfg.model.cp_comm_type = 'a2a+p2p'  # café ✓\n")).toEqual({ ok: true });
  });
});

describe("detectKind", () => {
  it.each([
    ["def f_config():\n    cfg = g()\n", "python"],
    ["cfg.model.context_parallel_size = 4\n", "python"],
    ["model:\n  context_parallel_size: 4\n", "yaml"],
    ["torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe x model.context_parallel_size=4", "shell"],
    ["model.context_parallel_size=4 model.cp_comm_type=a2a+p2p", "shell"],
  ])("%j is %s", (text, kind) => {
    expect(detectKind(text)).toBe(kind);
  });
});

describe("the shipped examples", () => {
  it("are every file of fixtures/playground, each reviewed with the findings its title names", async () => {
    const examples = await readExamples();
    const files = readdirSync(join(import.meta.dirname, "..", "..", "fixtures", "playground"));
    expect(examples.map((e) => e.name).sort()).toEqual(files.map((f) => f.replace(/\.\w+$/, "")).sort());
    const python = await loadPythonLanguage();
    for (const e of examples) {
      expect(e.text).toBe(readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "playground", files.find((f) => f.startsWith(`${e.name}.`))!), "utf8"));
      const review = reviewPlayground({ text: e.text, kind: e.kind, gpusPerNode: 8 }, python);
      const named = [...e.title.matchAll(/HCP\d{3}/g)].map((m) => m[0]);
      for (const id of named) expect(review.findings.map((f) => f.ruleId), `${e.name}: ${e.title}`).toContain(id);
      if (e.name === "clean") expect(review.findings).toEqual([]);
      else expect(named.length, `${e.name}'s title names its rule`).toBeGreaterThan(0);
    }
    expect(examples.find((e) => e.name === "hcp001")).toMatchObject({ kind: "python", title: expect.stringMatching(/without hierarchical_context_parallel_sizes/) });
  });
});

describe("the playground's review of input it could not analyze", () => {
  it("a recipe with a syntax error is a failure with the reason, never 'Success ... 0 configuration(s)'", async () => {
    const python = await loadPythonLanguage();
    const broken = "def broken_pretrain_config(:\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 4\n    return cfg\n";
    const review = reviewPlayground({ text: broken, kind: "python", gpusPerNode: 8 }, python);
    expect(review.diagnostics.map((d) => d.code)).toContain("parse-error");
    expect(review.conclusion).toBe("failure");
    expect(review.check.title).toMatch(/^1 file\(s\) not fully analyzed/);
    expect(review.check.summary).toMatch(/Python syntax error at line 1/);
    expect(review.summaryComment).not.toMatch(/✅/);
    expect(review.summaryComment).toMatch(/cannot pass/);
    // A file nested past Python's limit is not analyzed at all: a failure as well.
    const deep = `${Array.from({ length: 150 }, (_, i) => `${"  ".repeat(i)}if x:`).join("\n")}\n${"  ".repeat(150)}pass\n`;
    const nested = reviewPlayground({ text: deep, kind: "python", gpusPerNode: 8 }, python);
    expect(nested.conclusion).toBe("failure");
    expect(nested.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/^not analyzed: too deeply nested/)]);
    // The clean example stays a success.
    const clean = reviewPlayground({ text: "def ok_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 4\n    return cfg\n", kind: "python", gpusPerNode: 8 }, python);
    expect(clean.conclusion).toBe("success");
  });
});

describe("the playground's suppressions", () => {
  it("honours # noqa and # hcp-bot: ignore[...] as the CLI and the App do", async () => {
    const python = await loadPythonLanguage();
    const recipe = (line: string, before = "") =>
      `def x_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 4\n${before}    cfg.model.cp_comm_type = "a2a+p2p"${line}\n    return cfg\n`;
    const ids = (text: string) => reviewPlayground({ text, kind: "python", gpusPerNode: 8 }, python).findings.map((f) => f.ruleId);
    expect(ids(recipe(""))).toContain("HCP001");
    expect(ids(recipe("  # noqa: HCP001"))).not.toContain("HCP001");
    expect(ids(recipe("  # noqa"))).not.toContain("HCP001");
    expect(ids(recipe("", "    # hcp-bot: ignore[HCP001] tracked in #12\n"))).not.toContain("HCP001");
    expect(ids(recipe("  # noqa: HCP002"))).toEqual(expect.arrayContaining(["HCP001", "HCP100"]));
  });
});
