// Bad input loses nothing: what parses is analyzed, the rest gets a clear diagnostic.
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

const BROKEN_HCP = `
def broken_pretrain_config():
    cfg = _pretrain_common()
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    return cfg
`;

describe("analyze on bad input", () => {
  it("reports a syntax error and still finds the error in the function that parses", () => {
    const text = `def half_written_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = = 4\n    return cfg\n\n${BROKEN_HCP}`;
    const report = analyze([{ path: "recipes/mixed.py", text }], { python });
    expect(report.diagnostics).toContainEqual(expect.objectContaining({ file: "recipes/mixed.py", code: "parse-error" }));
    const diag = report.diagnostics.find((d) => d.code === "parse-error")!;
    expect(diag.location?.range.start.line).toBe(3);
    expect(diag.message.length).toBeGreaterThan(10);
    expect(report.findings.map((f) => f.ruleId)).toContain("HCP001");
  });

  it("accepts empty files of every kind", () => {
    const names = ["a.py", "b.yaml", "c.sh", "d.md", "uv.lock", "pyproject.toml"];
    const report = analyze(names.map((path) => ({ path, text: "" })), { python });
    expect(report.findings).toEqual([]);
    expect(report.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  });

  it("reports binary files instead of parsing them", () => {
    const report = analyze([{ path: "weights.py", text: "\u0000\u0001PK\u0003\u0004garbage" }], { python });
    expect(report.diagnostics).toEqual([expect.objectContaining({ file: "weights.py", code: "unreadable", message: expect.stringMatching(/binary/) })]);
  });

  it("reports files over the size limit instead of parsing them", () => {
    const report = analyze([{ path: "big.py", text: BROKEN_HCP }], { python, maxFileBytes: 10 });
    expect(report.findings).toEqual([]);
    expect(report.diagnostics).toEqual([expect.objectContaining({ code: "too-large", message: expect.stringMatching(/limit/) })]);
  });

  it("analyzes a 5 MB recipe module and finds every broken recipe in it", () => {
    const one = BROKEN_HCP.replace("broken_pretrain_config", "broken_NN_pretrain_config");
    const copies = Math.ceil((5 * 1024 * 1024) / one.length);
    const text = Array.from({ length: copies }, (_, i) => one.replace("NN", String(i))).join("\n");
    expect(text.length).toBeGreaterThan(5 * 1024 * 1024);
    const report = analyze([{ path: "huge.py", text }], { python });
    expect(report.findings.filter((f) => f.ruleId === "HCP001")).toHaveLength(copies);
  });

  it("survives deep nesting in Python, YAML and shell", () => {
    const files = [
      { path: "deep.py", text: `X = ${"(".repeat(5000)}1${")".repeat(5000)}\n${BROKEN_HCP}` },
      { path: "deep2.py", text: `def f_config():\n    cfg = g()\n    cfg.model.context_parallel_size = ${"[".repeat(3000)}${"]".repeat(3000)}\n    return cfg\n` },
      { path: "deep.yaml", text: `${Array.from({ length: 800 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n")} 1\n` },
      { path: "flow.yaml", text: `model: ${"[".repeat(2000)}${"]".repeat(2000)}\n` },
      { path: "deep.sh", text: `${'"$('.repeat(2000)}\ntorchrun pretrain_gpt.py --context-parallel-size 4\n` },
      { path: "deep.md", text: "```bash\n".repeat(3000) },
    ];
    const report = analyze(files, { python });
    expect(report.findings.some((f) => f.ruleId === "HCP001" && f.location.file === "deep.py")).toBe(true);
  });
});
