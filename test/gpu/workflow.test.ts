// templates/hcp-smoke.yml as rendered by `hcp-bot init-workflow`: parsed with `yaml` and
// checked point by point; its shell steps run for real under bash with a fake `npx`.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { readTemplate, renderWorkflow } from "../../src/gpu/init-workflow.ts";
import { VERSION } from "../../src/version.ts";
import { baseEnv, hcpBot, tempDir } from "./helpers.ts";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  "working-directory"?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  name?: string;
  "runs-on": string[];
  /** `${{ inputs.compare != '' && inputs.compare != 'none' && AB || PLAIN }}`: see jobMinutes. */
  "timeout-minutes": string;
  env: Record<string, string>;
  steps: Step[];
  permissions?: unknown;
  defaults?: { run?: { shell?: string } };
}
/** The job's time limit for a plain run and for an A/B run (two legs of the run's limit, one upload margin). */
function jobMinutes(job: Job): { plain: number; ab: number } {
  const m = /^\$\{\{ inputs\.compare != '' && inputs\.compare != 'none' && (\d+) \|\| (\d+) \}\}$/.exec(String(job["timeout-minutes"]));
  if (!m) throw new Error(`unexpected timeout-minutes: ${job["timeout-minutes"]}`);
  return { plain: Number(m[2]), ab: Number(m[1]) };
}

interface Workflow {
  name: string;
  "run-name": string;
  on: { workflow_dispatch: { inputs: Record<string, { required?: boolean; default?: unknown; type: string }> } };
  permissions: Record<string, string>;
  concurrency: { group: string; "cancel-in-progress": boolean };
  jobs: Record<string, Job>;
}

const LABELS = ["self-hosted", "linux", "gpu-4"];
let text: string;
let wf: Workflow;
let job: Job;

function step(predicate: (s: Step) => boolean, what: string): Step {
  const found = job.steps.find(predicate);
  if (!found) throw new Error(`no step ${what}`);
  return found;
}

beforeAll(async () => {
  text = renderWorkflow(await readTemplate(), { labels: LABELS, timeoutMinutes: 60, spec: `hcp-bot@${VERSION}` });
  wf = parseYaml(text) as Workflow;
  job = Object.values(wf.jobs)[0]!;
});

describe("the rendered workflow", () => {
  it("is dispatched by hand (workflow_dispatch only) with the bot's inputs", () => {
    expect(Object.keys(wf.on)).toEqual(["workflow_dispatch"]);
    const inputs = wf.on.workflow_dispatch.inputs;
    for (const name of ["sha", "pr", "recipe", "overrides", "request_id", "check_run_id", "nproc", "expect_hcp"]) expect(inputs).toHaveProperty(name);
    expect(inputs.sha!.required).toBe(true);
    expect(inputs.request_id!.required).toBe(true);
    expect(inputs.overrides!.default).toBe("[]");
    expect(inputs.expect_hcp!.type).toBe("boolean");
  });

  it("carries the request id in run-name, so the bot can find its run", () => {
    expect(wf["run-name"]).toContain("${{ inputs.request_id }}");
  });

  it("runs on the given labels, one run per PR, with a time limit and no permission but contents: read for the job", () => {
    expect(Object.keys(wf.jobs)).toHaveLength(1);
    expect(job["runs-on"]).toEqual(LABELS);
    expect(jobMinutes(job)).toEqual({ plain: 60, ab: 115 }); // A/B: two 55-minute legs and one 5-minute upload margin
    expect(wf.concurrency.group).toMatch(/\$\{\{ inputs\.pr \}\}/);
    expect(wf.permissions).toEqual({});
    expect(job.permissions).toEqual({ contents: "read" });
    expect(job.defaults?.run?.shell).toBe("bash");
  });

  it("checks out the pinned SHA, never a branch, without persisting the token, and verifies HEAD", () => {
    const checkout = step((s) => s.uses?.startsWith("actions/checkout@") ?? false, "checkout");
    expect(checkout.with?.ref).toBe("${{ inputs.sha }}");
    expect(checkout.with?.["persist-credentials"]).toBe(false);
    expect(job.env.HCP_SHA).toBe("${{ inputs.sha }}");
    const verify = step((s) => s.run?.includes("git rev-parse HEAD") ?? false, "verifying HEAD");
    expect(verify.run).toMatch(/\[ "\$head" != "\$HCP_SHA" \]/);
    const order = [checkout, verify, step((s) => s.run?.includes("smoke-run") ?? false, "smoke run")].map((s) => job.steps.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it("never puts an expression inside a run: block; inputs reach scripts only through env", () => {
    const runs = job.steps.filter((s) => s.run !== undefined);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const s of runs) expect(s.run).not.toContain("${{");
    for (const s of job.steps) expect(s.env ?? {}).toEqual({}); // everything is in the job's env, checked here:
    for (const [name, value] of Object.entries(job.env)) {
      if (value.includes("${{")) expect(value, name).toMatch(/^\$\{\{ (inputs\.[a-z_]+|vars\.HCP_[A-Z_]+(?: \|\| '[^']*')?) \}\}$/);
    }
    expect(job.env.HCP_OVERRIDES).toBe("${{ inputs.overrides }}");
  });

  it("installs the pinned hcp-bot outside the workspace before the checkout, and runs that one with outputs outside the checkout", () => {
    const install = step((s) => s.name === "Install hcp-bot", "install");
    const checkout = step((s) => s.uses?.startsWith("actions/checkout@") ?? false, "checkout");
    expect(job.steps.indexOf(install)).toBeLessThan(job.steps.indexOf(checkout));
    expect(install["working-directory"]).toBe("${{ runner.temp }}");
    expect(install.run).toContain('npm install --prefix "$RUNNER_TEMP/hcp-bot"');
    const smoke = step((s) => s.run?.includes("smoke-run") ?? false, "smoke run");
    expect(smoke.name).toBe("Smoke run"); // the bot reads this step's conclusion from the jobs API
    expect(smoke.run).toMatch(/"\$RUNNER_TEMP\/hcp-bot\/node_modules\/\.bin\/hcp-bot" smoke-run/);
    expect(smoke.run).toContain("--overrides-env HCP_OVERRIDES");
    expect(smoke.run).toContain('--recipe "$HCP_RECIPE"');
    expect(smoke.run).toContain('--out "$RUNNER_TEMP/hcp-smoke-out"');
    expect(job.name).toBe("hcp smoke ${{ inputs.request_id }} ${{ inputs.sha }}");
    expect(job.env.HCP_BOT_SPEC).toBe(`\${{ vars.HCP_BOT_SPEC || 'hcp-bot@${VERSION}' }}`);
    expect(job.env.HCP_RUN_TIMEOUT).toBe("55m");
  });

  it("always uploads $RUNNER_TEMP/hcp-smoke-out/ as hcp-smoke-<request_id>", () => {
    const upload = step((s) => s.uses?.startsWith("actions/upload-artifact@") ?? false, "upload");
    expect(upload.if).toBe("always()");
    expect(upload.with?.name).toBe("hcp-smoke-${{ inputs.request_id }}");
    expect(upload.with?.path).toBe("${{ runner.temp }}/hcp-smoke-out/");
    expect(job.steps.indexOf(upload)).toBe(job.steps.length - 1);
  });

  it("refuses values that could break the YAML", () => {
    expect(() => renderWorkflow(text, { labels: ["gpu]"], timeoutMinutes: 60, spec: "hcp-bot@1.0.0" })).toThrow(/runner labels/);
    expect(() => renderWorkflow(text, { labels: LABELS, timeoutMinutes: 60, spec: "hcp-bot@1 || curl x" })).toThrow(/npm package spec/);
  });
});

describe("the workflow's shell steps under bash (GitHub's env emulated)", () => {
  /** The job env as GitHub would set it: inputs substituted as data, repository variables unset. */
  function jobEnv(inputs: Record<string, string>): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(job.env)) {
      const input = /^\$\{\{ inputs\.([a-z_]+) \}\}$/.exec(value);
      const variable = /^\$\{\{ vars\.[A-Z_]+(?: \|\| '([^']*)')? \}\}$/.exec(value);
      env[name] = input ? (inputs[input[1]!] ?? "") : variable ? (variable[1] ?? "") : value;
    }
    return env;
  }

  const goodInputs = {
    sha: "0123456789abcdef0123456789abcdef01234567",
    pr: "42",
    recipe: "llama32_1b_pretrain_config",
    overrides: '["model.x=1\\"; touch /tmp/pwned #", "$(id)"]',
    request_id: "req-42.1",
    check_run_id: "7",
    nproc: "4",
    iters: "2",
    expect_hcp: "false",
  };

  function runStep(name: string, inputs: Record<string, string>) {
    const dir = tempDir("hcp-wf-");
    const bin = join(dir, "bin");
    mkdirSync(bin);
    // A fake installed hcp-bot: records its argv (one per line) and the overrides it would read.
    const installed = join(dir, "hcp-bot", "node_modules", ".bin");
    mkdirSync(installed, { recursive: true });
    writeFileSync(join(installed, "hcp-bot"), `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > "${dir}/npx-argv"\nprintf '%s' "$HCP_OVERRIDES" > "${dir}/npx-overrides"\n`);
    chmodSync(join(installed, "hcp-bot"), 0o755);
    const s = step((x) => x.name === name, name);
    const r = spawnSync("bash", ["-e", "-c", s.run!], {
      cwd: dir,
      encoding: "utf8",
      env: { ...baseEnv(), PATH: `${bin}${delimiter}${process.env.PATH}`, RUNNER_TEMP: dir, ...jobEnv(inputs) },
    });
    const argvFile = join(dir, "npx-argv");
    return {
      dir,
      status: r.status,
      stdout: r.stdout,
      npxArgv: existsSync(argvFile) ? readFileSync(argvFile, "utf8").split("\n").slice(0, -1) : null,
      npxOverrides: existsSync(argvFile) ? readFileSync(join(dir, "npx-overrides"), "utf8") : null,
    };
  }

  it("passes hostile overrides to hcp-bot as data only (nothing runs, nothing is expanded)", () => {
    const r = runStep("Smoke run", goodInputs);
    expect(r.status).toBe(0);
    expect(existsSync("/tmp/pwned")).toBe(false);
    expect(r.npxArgv).toEqual([
      "smoke-run",
      "--recipe",
      "llama32_1b_pretrain_config",
      "--nproc",
      "4",
      "--iters",
      "2",
      "--launcher",
      "uv",
      "--timeout",
      "55m",
      "--out",
      `${r.dir}/hcp-smoke-out`,
      "--no-expect-hcp",
      "--compare",
      "none",
      "--overrides-env",
      "HCP_OVERRIDES",
    ]);
    expect(r.npxOverrides).toBe(goodInputs.overrides);
  });

  it("passes --expect-hcp when asked", () => {
    expect(runStep("Smoke run", { ...goodInputs, expect_hcp: "true" }).npxArgv).toContain("--expect-hcp");
  });

  it("the input check accepts the bot's inputs and rejects malformed ones", () => {
    expect(runStep("Check inputs", goodInputs).status).toBe(0);
    for (const bad of [
      { sha: "main" },
      { sha: "0123456789abcdef0123456789abcdef0123456" },
      { pr: "1; id" },
      { request_id: "a b" },
      { recipe: "x$(id)" },
      { nproc: "4 --bad" },
      { iters: "" },
    ]) {
      const r = runStep("Check inputs", { ...goodInputs, ...bad });
      expect(r.status, JSON.stringify(bad)).toBe(1);
      expect(r.stdout).toMatch(/^::error::/m);
    }
  });

  it("the input check refuses an hcp-bot spec that is not an exact version (a repository variable's tag or range)", () => {
    for (const spec of ["hcp-bot@latest", "hcp-bot@^1.2.0", "hcp-bot", "hcp-bot@1.2.3 evil", "https://example.invalid/x.tgz"]) {
      const env = { ...goodInputs };
      const original = job.env.HCP_BOT_SPEC;
      job.env.HCP_BOT_SPEC = spec;
      try {
        const r = runStep("Check inputs", env);
        expect(r.status, spec).toBe(1);
        expect(r.stdout).toContain("::error::HCP_BOT_SPEC must name an exact version");
      } finally {
        job.env.HCP_BOT_SPEC = original!;
      }
    }
    expect(runStep("Check inputs", goodInputs).status).toBe(0);
  });

  it("the HEAD check fails when the checkout is not the pinned SHA", () => {
    const repo = tempDir("hcp-wf-repo-");
    const git = (...args: string[]) => spawnSync("git", args, { cwd: repo, encoding: "utf8", env: { ...baseEnv(), GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" } });
    git("init", "-q");
    git("commit", "-q", "--allow-empty", "-m", "x");
    const head = git("rev-parse", "HEAD").stdout.trim();
    const verify = step((s) => s.run?.includes("git rev-parse HEAD") ?? false, "verify").run!;
    const run = (sha: string) => spawnSync("bash", ["-e", "-c", verify], { cwd: repo, encoding: "utf8", env: { ...baseEnv(), HCP_SHA: sha } });
    expect(run(head).status).toBe(0);
    const other = run("f".repeat(40));
    expect(other.status).toBe(1);
    expect(other.stdout).toContain(`::error::checked out ${head} but the request pinned ${"f".repeat(40)}`);
  });
});

describe("hcp-bot init-workflow", () => {
  it("writes the workflow with the labels and time limit, and refuses to overwrite it without --force", async () => {
    const cwd = tempDir();
    const first = await hcpBot(["init-workflow", "--labels", "self-hosted,linux,h100x8", "--timeout-minutes", "90"], { cwd, env: baseEnv() });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("wrote .github/workflows/hcp-smoke.yml");
    const path = join(cwd, ".github", "workflows", "hcp-smoke.yml");
    const written = parseYaml(readFileSync(path, "utf8")) as Workflow;
    const j = Object.values(written.jobs)[0]!;
    expect(j["runs-on"]).toEqual(["self-hosted", "linux", "h100x8"]);
    expect(jobMinutes(j).plain).toBe(90);
    expect(j.env.HCP_RUN_TIMEOUT).toBe("85m");

    writeFileSync(path, "# edited by hand\n");
    const again = await hcpBot(["init-workflow"], { cwd, env: baseEnv() });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(".github/workflows/hcp-smoke.yml already exists; pass --force to overwrite it");
    expect(readFileSync(path, "utf8")).toBe("# edited by hand\n");

    const forced = await hcpBot(["init-workflow", "--force"], { cwd, env: baseEnv() });
    expect(forced.code).toBe(0);
    const defaults = Object.values((parseYaml(readFileSync(path, "utf8")) as Workflow).jobs)[0]!;
    expect(defaults["runs-on"]).toEqual(LABELS);
    expect(jobMinutes(defaults).plain).toBe(35); // smoke.timeouts.run_minutes (30) + 5 to stop and upload
    expect(defaults.env.HCP_RUN_TIMEOUT).toBe("30m");
  });

  it("takes its defaults from .github/hcp-bot.yml, so the workflow matches what the bot dispatches and reports", async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, ".github"), { recursive: true });
    writeFileSync(join(cwd, ".github", "hcp-bot.yml"), "smoke:\n  workflow: gpu-smoke.yml\n  runner_labels: [self-hosted, h200x4]\n  timeouts:\n    queue_minutes: 20\n    run_minutes: 45\n");
    const r = await hcpBot(["init-workflow"], { cwd, env: baseEnv() });
    expect(r.code).toBe(0);
    const j = Object.values((parseYaml(readFileSync(join(cwd, ".github", "workflows", "gpu-smoke.yml"), "utf8")) as Workflow).jobs)[0]!;
    expect(j["runs-on"]).toEqual(["self-hosted", "h200x4"]);
    expect(jobMinutes(j).plain).toBe(50);
    expect(j.env.HCP_RUN_TIMEOUT).toBe("45m");
    // Flags still win.
    const flagged = await hcpBot(["init-workflow", "--labels", "gpu-8", "--timeout-minutes", "20", "--out", "x.yml"], { cwd, env: baseEnv() });
    expect(flagged.code).toBe(0);
    const f = Object.values((parseYaml(readFileSync(join(cwd, "x.yml"), "utf8")) as Workflow).jobs)[0]!;
    expect([f["runs-on"], jobMinutes(f).plain]).toEqual([["gpu-8"], 20]);
    // A config the bot would refuse is refused here too.
    writeFileSync(join(cwd, ".github", "hcp-bot.yml"), "smoke:\n  runner_labels: []\n");
    const bad = await hcpBot(["init-workflow", "--force"], { cwd, env: baseEnv() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/\.github\/hcp-bot\.yml: .*runner_labels/);
  });

  it("takes --out, and the npx spec from HCP_BOT_SPEC", async () => {
    const cwd = tempDir();
    const r = await hcpBot(["init-workflow", "--out", "ci/smoke.yml"], { cwd, env: baseEnv({ HCP_BOT_SPEC: "@acme/hcp-bot@2.0.0-rc.1" }) });
    expect(r.code).toBe(0);
    const j = Object.values((parseYaml(readFileSync(join(cwd, "ci", "smoke.yml"), "utf8")) as Workflow).jobs)[0]!;
    expect(j.env.HCP_BOT_SPEC).toBe("${{ vars.HCP_BOT_SPEC || '@acme/hcp-bot@2.0.0-rc.1' }}");
  });

  it.each([
    [["--labels", "gpu x"], /runner labels/],
    [["--labels", ","], /at least one runner label/],
    [["--timeout-minutes", "5"], /at least 6/],
    [["--timeout-minutes", "1h"], /whole number of minutes/],
    [["--bogus"], /unknown option --bogus/],
  ])("refuses %j with exit 2", async (args, message) => {
    const cwd = tempDir();
    const r = await hcpBot(["init-workflow", ...args], { cwd, env: baseEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(existsSync(join(cwd, ".github"))).toBe(false);
  });
});
