// The analyzer core runs unchanged under Deno and finds exactly what it finds under Node.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { classifyFile } from "../../src/core/analyze/classify.ts";
import { createVerdictParser } from "../../src/core/verdict/index.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const deno = join(root, "node_modules", ".bin", "deno");

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? fixtureFiles(p) : classifyFile(p) ? [relative(root, p)] : [];
  });
}

describe("core under Deno", () => {
  const files = fixtureFiles(join(root, "fixtures", "recipes")).filter((p) => !/bad-input|huge/.test(p));

  it("finds the same findings as under Node on every fixture", async () => {
    expect(files.length).toBeGreaterThan(5);
    // yaml's Node build reads LOG_TOKENS/LOG_STREAM (debug switches); nothing else needs the environment.
    const { stdout } = await run(deno, ["run", "--quiet", "--allow-read", "--allow-env=LOG_TOKENS,LOG_STREAM", "--no-prompt", "test/deno/analyze.deno.ts", ...files], {
      cwd: root,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      maxBuffer: 64 * 1024 * 1024,
    });
    const fromDeno = JSON.parse(stdout) as { runtime: string; units: number; findings: unknown[]; diagnostics: unknown[] };
    const report = analyze(
      files.map((path) => ({ path, text: readFileSync(join(root, path), "utf8") })),
      { python: await loadPythonLanguage() },
    );
    expect(fromDeno.runtime).toBe("deno");
    expect(report.findings.length).toBeGreaterThan(0);
    expect(fromDeno.units).toBe(report.units.length);
    expect(fromDeno.findings).toEqual(JSON.parse(JSON.stringify(report.findings)));
    expect(fromDeno.diagnostics).toEqual(JSON.parse(JSON.stringify(report.diagnostics)));
    // Every kind of source was analyzed under Deno, not only Python.
    const kinds = new Set((fromDeno.findings as { location: { file: string } }[]).map((f) => f.location.file.split("/")[2]));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(["markdown", "python", "shell", "yaml"]));
  });

  it("gives the same smoke-run verdicts as Node, through the WebAssembly scanner", async () => {
    const logs = readdirSync(join(root, "fixtures", "logs")).filter((n) => n.endsWith(".log")).map((n) => join("fixtures", "logs", n));
    const { stdout } = await run(deno, ["run", "--quiet", "--allow-read", "--no-prompt", "test/deno/verdict.deno.ts", ...logs], {
      cwd: root,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      maxBuffer: 16 * 1024 * 1024,
    });
    const fromDeno = JSON.parse(stdout) as { runtime: string; results: { path: string; engine: string; verdict: unknown }[] };
    expect(fromDeno.runtime).toBe("deno");
    expect(fromDeno.results.map((r) => r.path)).toEqual(logs);
    for (const { path, engine, verdict } of fromDeno.results) {
      const bytes = readFileSync(join(root, path));
      const parser = createVerdictParser({ expectHcp: true, gpu: "H100" });
      for (let i = 0; i < bytes.length; i += 4096) parser.push(bytes.subarray(i, i + 4096));
      expect(engine).toBe("wasm");
      expect(verdict).toEqual(JSON.parse(JSON.stringify(parser.end(0))));
    }
  });
});
