// action.yml, tested by running its steps' own `run:` scripts the way the runner does
// (`bash --noprofile --norc -eo pipefail`, inputs through env, outputs through
// $GITHUB_OUTPUT), with the package installed from a tarball of this checkout. The steps
// that are other actions (setup-node, upload-sarif) are checked for their pins only.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const actionText = readFileSync(join(root, "action.yml"), "utf8");

interface Step {
  id?: string;
  name?: string;
  uses?: string;
  if?: string;
  shell?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}
const action = parse(actionText) as Action;

interface StepResult {
  status: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}

/** Replaces the `${{ ... }}` expressions the steps' env blocks use. */
function expand(value: string, context: { inputs: Record<string, string>; actionPath: string; temp: string; steps: Record<string, Record<string, string>> }): string {
  return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    let m: RegExpExecArray | null;
    if ((m = /^inputs\.([\w-]+)$/.exec(expr))) return context.inputs[m[1]!] ?? action.inputs[m[1]!]?.default ?? "";
    if (expr === "github.action_path") return context.actionPath;
    if (expr === "runner.temp") return context.temp;
    if ((m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr))) return context.steps[m[1]!]?.[m[2]!] ?? "";
    throw new Error(`expression the test does not know: ${expr}`);
  });
}

/** Runs the `run:` steps in order, as a job would, and returns each one's result by id or name. */
function runSteps(inputs: Record<string, string>, workspace: string, temp: string, extraEnv: NodeJS.ProcessEnv = {}): Map<string, StepResult> {
  const steps: Record<string, Record<string, string>> = {};
  const results = new Map<string, StepResult>();
  for (const step of action.runs.steps) {
    if (!step.run) continue;
    const output = join(temp, `output-${results.size}`);
    writeFileSync(output, "");
    // npm's cache (where the project's `npm ci` left every package) comes along when it is not ~/.npm.
    const cache = process.env.npm_config_cache ? { npm_config_cache: process.env.npm_config_cache } : {};
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", GITHUB_OUTPUT: output, ...cache, ...extraEnv };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(v, { inputs, actionPath: root, temp, steps });
    const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run], { cwd: workspace, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    const outputs = Object.fromEntries(readFileSync(output, "utf8").split("\n").filter(Boolean).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    if (step.id) steps[step.id] = outputs;
    results.set(step.id ?? step.name ?? `step-${results.size}`, { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, outputs });
    if (r.status !== 0) break;
  }
  return results;
}

let tarball = "";
const temp = mkdtempSync(join(tmpdir(), "hcp-action-"));

beforeAll(async () => {
  // The test setup built dist/ already; packing it as is keeps this test quick (test/package tests prepack).
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", temp], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  tarball = join(temp, (JSON.parse(packed.stdout) as [{ filename: string }])[0].filename);
  // The hcp-bot package has no dependency, so the step's install needs no registry: the tests run it offline.
  mkdirSync(join(temp, "hcp-bot"), { recursive: true });
});

function workspaceWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hcp-ws-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const broken = readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py"), "utf8");
const clean = readFileSync(join(root, "fixtures", "cli", "clean_recipe.py"), "utf8");

describe("action.yml", () => {
  it("is a composite action whose third-party steps are pinned by full commit SHA with the version as a comment", () => {
    expect(action.runs.using).toBe("composite");
    const uses = action.runs.steps.filter((s) => s.uses).map((s) => s.uses!);
    expect(uses.map((u) => u.split("@")[0])).toEqual(["actions/setup-node", "github/codeql-action/upload-sarif"]);
    for (const u of uses) expect(u).toMatch(/@[0-9a-f]{40}$/);
    const pinned = actionText.split("\n").filter((l) => /^\s*(- )?uses: \S+@[0-9a-f]{40}/.test(l));
    expect(pinned).toHaveLength(uses.length);
    for (const line of pinned) expect(line).toMatch(/ # v\d+\.\d+\.\d+$/);
  });

  it("never puts an expression inside a run: script (inputs reach scripts through env only)", () => {
    for (const step of action.runs.steps) if (step.run) expect(step.run).not.toContain("${{");
    expect(action.outputs["exit-code"]!.value).toBe("${{ steps.lint.outputs.exit-code }}");
  });

  it("installs, lints with annotations and writes SARIF; the result step fails on errors", () => {
    const ws = workspaceWith({ "src/megatron/bridge/recipes/llama/llama3.py": broken });
    const results = runSteps({ package: tarball, paths: "." }, ws, temp, { npm_config_offline: "true" });
    const install = results.get("install")!;
    expect(install.status, install.stderr).toBe(0);
    expect(existsSync(join(temp, "hcp-bot", "node_modules", "hcp-bot", "dist", "main.js"))).toBe(true);
    expect(install.stdout.trim().split("\n").at(-1)).toBe(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);
    const lint = results.get("lint")!;
    expect(lint.outputs["exit-code"]).toBe("1");
    expect(lint.stdout).toMatch(/^::error file=src\/megatron\/bridge\/recipes\/llama\/llama3\.py,line=\d+,.*title=HCP001/m);
    const sarif = JSON.parse(readFileSync(join(ws, lint.outputs["sarif-file"]!), "utf8")) as { version: string; runs: { results: { ruleId: string }[] }[] };
    expect(sarif.version).toBe("2.1.0");
    expect(sarif.runs[0]!.results.map((r) => r.ruleId)).toContain("HCP001");
    expect(results.get("Result")!.status).toBe(1);
    expect(results.get("Result")!.stdout).toContain("::error::hcp-bot found HCP errors");
  });

  it("passes a clean checkout, and reports without failing when fail-on-error is false", () => {
    const ok = runSteps({ package: tarball }, workspaceWith({ "src/megatron/bridge/recipes/llama/clean.py": clean }), temp, { npm_config_offline: "true" });
    expect(ok.get("lint")!.outputs["exit-code"]).toBe("0");
    expect(ok.get("Result")!.status).toBe(0);
    const lenient = runSteps({ package: tarball, "fail-on-error": "false" }, workspaceWith({ "src/megatron/bridge/recipes/llama/llama3.py": broken }), temp, { npm_config_offline: "true" });
    expect(lenient.get("lint")!.outputs["exit-code"]).toBe("1");
    expect(lenient.get("Result")!.status).toBe(0);
  });

  it("hostile paths and arguments are words for hcp-bot, never shell", () => {
    const ws = workspaceWith({ "recipes/clean.py": clean });
    const canary = join(ws, "pwned");
    const results = runSteps({ package: tarball, paths: `recipes $(touch ${canary}) ;touch${canary}`, args: "--select HCP001 `touch x`" }, ws, temp, { npm_config_offline: "true" });
    const lint = results.get("lint")!;
    expect(lint.outputs["exit-code"]).toBe("2");
    expect(lint.stderr).toMatch(/hcp-bot: cannot read \$\(touch/);
    expect(existsSync(canary)).toBe(false);
    expect(results.get("Result")!.status).toBe(2);
  });
});
