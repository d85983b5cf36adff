// Where the smoke job runs and what it trusts, through the real `hcp-bot init-workflow` and
// the real `smoke-run --dry-run` (child processes): .github/hcp-bot.yml's smoke.container,
// smoke.launcher and smoke.env rendered into the workflow, the rendered "Smoke run" step run
// under bash against the real binary, and the supply chain of every config variant (actions
// pinned by full SHA with the release as a comment, least privilege, an exact hcp-bot version).
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.ts";
import { baseEnv, bin, fixtures, hcpBot, tempDir } from "./helpers.ts";

interface Step { name?: string; uses?: string; run?: string; with?: Record<string, unknown> }
interface Job { permissions?: unknown; container?: unknown; env: Record<string, string>; steps: Step[] }
interface Workflow { permissions?: unknown; jobs: Record<string, Job> }

const CONTAINER_CONFIG = `smoke:
  container:
    image: nvcr.io/nvidia/nemo:25.09
    options: --gpus all --ipc=host --shm-size=16g
    credentials: {username: NGC_USERNAME, password: NGC_API_KEY}
  launcher: python
  env:
    NCCL_DEBUG: INFO
    NVTE_FUSED_ATTN: 1
    HF_HOME: /cache/hf
`;

const VARIANTS: Record<string, string | null> = {
  "no config": null,
  "a container without credentials": "smoke:\n  container: {image: 'ghcr.io/acme/megatron-bridge:2026.11@sha256:" + "a".repeat(64) + "'}\n",
  "a container with options, credentials, the python launcher and env": CONTAINER_CONFIG,
  "env and the uv launcher on the bare runner": "smoke:\n  launcher: uv\n  env: {NCCL_IB_DISABLE: 1, OMP_NUM_THREADS: 8}\n",
};

/** `hcp-bot init-workflow` in a fresh folder with `config` as .github/hcp-bot.yml. */
async function init(config: string | null, extraEnv: Record<string, string> = {}) {
  const cwd = tempDir("hcp-init-");
  if (config !== null) {
    mkdirSync(join(cwd, ".github"), { recursive: true });
    writeFileSync(join(cwd, ".github", "hcp-bot.yml"), config);
  }
  const r = await hcpBot(["init-workflow"], { cwd, env: baseEnv(extraEnv) });
  const path = join(cwd, ".github", "workflows", "hcp-smoke.yml");
  const text = r.code === 0 ? readFileSync(path, "utf8") : "";
  return { r, text, wf: (text ? parseYaml(text) : null) as Workflow | null };
}

/**
 * Every `uses:` of the file that is not pinned: a third-party action by anything but a full
 * commit SHA with its release as a comment, a Docker image by anything but a digest. Local
 * actions (./...) are the repository's own.
 */
function unpinnedUses(text: string): string[] {
  const bad: string[] = [];
  const wf = parseYaml(text) as Workflow;
  const lines = text.split("\n");
  for (const job of Object.values(wf.jobs)) {
    for (const s of job.steps ?? []) {
      if (!s.uses || s.uses.startsWith("./")) continue;
      if (s.uses.startsWith("docker://")) {
        if (!/@sha256:[0-9a-f]{64}$/.test(s.uses)) bad.push(s.uses);
        continue;
      }
      const line = lines.find((l) => l.trim().replace(/^- /, "").startsWith(`uses: ${s.uses}`)) ?? "";
      if (!/^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/.test(s.uses) || !/ # v\d+(\.\d+){0,2}\s*$/.test(line)) bad.push(s.uses);
    }
  }
  return bad;
}

describe("the rendered workflow's supply chain, in every config variant", () => {
  it.each(Object.entries(VARIANTS))("%s: actions pinned by SHA, permissions {} and contents: read, no persisted token, an exact hcp-bot", async (_, config) => {
    const { r, text, wf } = await init(config);
    expect(r.code, r.stderr).toBe(0);
    expect(unpinnedUses(text)).toEqual([]);
    const uses = Object.values(wf!.jobs).flatMap((j) => j.steps.map((s) => s.uses).filter(Boolean));
    expect(uses.length).toBeGreaterThanOrEqual(3);
    expect(wf!.permissions).toEqual({});
    for (const job of Object.values(wf!.jobs)) expect(job.permissions).toEqual({ contents: "read" });
    for (const s of Object.values(wf!.jobs).flatMap((j) => j.steps)) {
      if (s.uses?.startsWith("actions/checkout@")) expect(s.with?.["persist-credentials"]).toBe(false);
    }
    expect(Object.values(wf!.jobs)[0]!.env.HCP_BOT_SPEC).toBe(`\${{ vars.HCP_BOT_SPEC || 'hcp-bot@${VERSION}' }}`);
  });

  it("the check fails on what it must: tags, branches, short SHAs, a SHA without its release, an image by tag", () => {
    const older = readFileSync(join(import.meta.dirname, "..", "github", "fixtures", "hcp-smoke-six-inputs.yml"), "utf8");
    expect(unpinnedUses(older)).toEqual(["actions/setup-node@v4", "actions/checkout@v4", "actions/upload-artifact@v4"]);
    const job = (uses: string) => `on: push\njobs:\n  a:\n    steps:\n      - uses: ${uses}\n`;
    expect(unpinnedUses(job("actions/checkout@main"))).toHaveLength(1);
    expect(unpinnedUses(job("actions/checkout@d23441a"))).toHaveLength(1);
    expect(unpinnedUses(job("actions/checkout@d23441a48e516b6c34aea4fa41551a30e30af803"))).toHaveLength(1);
    expect(unpinnedUses(job("actions/checkout@d23441a48e516b6c34aea4fa41551a30e30af803 # v6.1.0"))).toEqual([]);
    expect(unpinnedUses(job("docker://alpine:3.20"))).toHaveLength(1);
    expect(unpinnedUses(job("./.github/actions/local"))).toEqual([]);
  });

  it("refuses an hcp-bot spec that is not an exact version", async () => {
    for (const spec of ["hcp-bot@latest", "hcp-bot@^0.1.0", "hcp-bot"]) {
      const { r } = await init(null, { HCP_BOT_SPEC: spec });
      expect(r.code, spec).toBe(2);
      expect(r.stderr).toContain("exact version");
    }
  });
});

describe("smoke.container, smoke.launcher and smoke.env through init-workflow", () => {
  it("renders a container job with the image, its options and the registry login from secrets; the launcher and env in the job's env", async () => {
    const { r, wf } = await init(CONTAINER_CONFIG);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("python container nvcr.io/nvidia/nemo:25.09, env NCCL_DEBUG NVTE_FUSED_ATTN HF_HOME");
    const job = Object.values(wf!.jobs)[0]!;
    expect(job.container).toEqual({
      image: "nvcr.io/nvidia/nemo:25.09",
      options: "--gpus all --ipc=host --shm-size=16g",
      credentials: { username: "${{ secrets.NGC_USERNAME }}", password: "${{ secrets.NGC_API_KEY }}" },
    });
    expect(job.env).toMatchObject({ HCP_LAUNCHER: "python", NCCL_DEBUG: "INFO", NVTE_FUSED_ATTN: "1", HF_HOME: "/cache/hf" });
    const smoke = job.steps.find((s) => s.name === "Smoke run")!;
    expect(smoke.run).toContain('--launcher "$HCP_LAUNCHER"');
  });

  it("without a container: no container key, uv, no extra env", async () => {
    const { wf } = await init(null);
    const job = Object.values(wf!.jobs)[0]!;
    expect(job.container).toBeUndefined();
    expect(job.env.HCP_LAUNCHER).toBe("uv");
    expect(Object.keys(job.env).filter((k) => !k.startsWith("HCP_"))).toEqual([]);
  });

  it.each([
    ["a secret's name as a variable", "smoke:\n  env: {HF_TOKEN: abc}\n", /smoke\.env\.HF_TOKEN: HF_TOKEN looks like a secret/],
    ["a credential as a value", `smoke:\n  env: {HF_HOME: hf_${"x".repeat(30)}}\n`, /smoke\.env\.HF_HOME: the value looks like a credential/],
    ["a variable outside the allowlist", "smoke:\n  env: {LD_PRELOAD: /tmp/x.so}\n", /LD_PRELOAD is not an allowed variable/],
    ["a harness variable", "smoke:\n  env: {TORCH_CPP_LOG_LEVEL: WARNING}\n", /TORCH_CPP_LOG_LEVEL is set by hcp-bot's harness/],
    ["an expression as a value", "smoke:\n  env: {NCCL_DEBUG: '${{ secrets.X }}'}\n", /values are at most 256 letters/],
    ["an image reference with a shell", "smoke:\n  container: {image: 'nemo:$(id)'}\n", /smoke\.container\.image: an image reference/],
    ["options with an expression", "smoke:\n  container: {image: nemo, options: '${{ secrets.X }}'}\n", /smoke\.container\.options: docker options/],
    ["a password instead of a secret's name", "smoke:\n  container: {image: nemo, credentials: {username: me, password: 'nvapi-abc-def'}}\n", /credentials\.password: a repository secret's name/],
    ["an unknown launcher", "smoke:\n  launcher: conda\n", /smoke\.launcher/],
    ["an unknown container key", "smoke:\n  container: {image: nemo, volumes: [/:/host]}\n", /smoke\.container: Unrecognized key/],
  ])("refuses %s with a clear error (exit 2, nothing written)", async (_, config, message) => {
    const { r, text } = await init(config);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(text).toBe("");
  });
});

describe("the rendered Smoke run step under bash, running the real smoke-run --dry-run", () => {
  /** Runs the step's script as GitHub would (job env, inputs as data) with the installed hcp-bot being the real one plus --dry-run. */
  async function runSmokeStep(config: string | null, o: { path: string[]; recipeScript?: boolean }) {
    const { wf } = await init(config);
    const job = Object.values(wf!.jobs)[0]!;
    const dir = tempDir("hcp-step-");
    const checkout = join(dir, "checkout");
    mkdirSync(join(checkout, "scripts", "training"), { recursive: true });
    if (o.recipeScript !== false) copyFileSync(join(fixtures, "bridge", "scripts", "training", "run_recipe.py"), join(checkout, "scripts", "training", "run_recipe.py"));
    const installed = join(dir, "hcp-bot", "node_modules", ".bin");
    mkdirSync(installed, { recursive: true });
    writeFileSync(join(installed, "hcp-bot"), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@" --dry-run\n`);
    chmodSync(join(installed, "hcp-bot"), 0o755);
    const inputs: Record<string, string> = { sha: "0".repeat(40), pr: "7", recipe: "llama32_1b_pretrain_config", overrides: '["model.context_parallel_size=4"]', request_id: "req-1", check_run_id: "3", nproc: "4", iters: "2", expect_hcp: "true" };
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(job.env)) {
      const input = /^\$\{\{ inputs\.([a-z_]+) \}\}$/.exec(value);
      const variable = /^\$\{\{ vars\.[A-Z_]+(?: \|\| '([^']*)')? \}\}$/.exec(value);
      env[name] = input ? (inputs[input[1]!] ?? "") : variable ? (variable[1] ?? "") : value;
    }
    const script = job.steps.find((s) => s.name === "Smoke run")!.run!;
    const r = spawnSync("/bin/bash", ["-e", "-c", script], { cwd: checkout, encoding: "utf8", env: { HOME: dir, PATH: o.path.join(":"), RUNNER_TEMP: dir, ...env } });
    rmSync(dir, { recursive: true, force: true });
    return r;
  }

  /** A folder with fake `python` and `uv` executables (the dry run only looks them up). */
  function fakeTools(...names: string[]): string {
    const dir = tempDir("hcp-tools-");
    for (const name of names) {
      writeFileSync(join(dir, name), "#!/bin/sh\nexit 0\n");
      chmodSync(join(dir, name), 0o755);
    }
    return dir;
  }

  it("the container's python launcher: torchrun through python itself", async () => {
    const r = await runSmokeStep(CONTAINER_CONFIG, { path: [fakeTools("python")] });
    expect(r.status, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout) as { argv: string[] };
    expect(plan.argv.slice(0, 4)).toEqual(["python", "-u", "-I", "-S"]);
    expect(plan.argv).toContain("scripts/training/run_recipe.py");
  });

  it("the default uv launcher: uv run python", async () => {
    const r = await runSmokeStep(null, { path: [fakeTools("uv")] });
    expect(r.status, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { argv: string[] }).argv.slice(0, 4)).toEqual(["uv", "run", "python", "-u"]);
  });

  it("refuses clearly when the launcher is not on PATH, or run_recipe.py is not at the checked-out commit", async () => {
    const noUv = await runSmokeStep(null, { path: [fakeTools("python")] });
    expect(noUv.status).toBe(2);
    expect(noUv.stderr).toContain("hcp-bot smoke-run: uv is not on PATH: install uv on the runner, or set smoke.launcher: python");
    const noPython = await runSmokeStep(CONTAINER_CONFIG, { path: [fakeTools("uv")] });
    expect(noPython.status).toBe(2);
    expect(noPython.stderr).toContain("hcp-bot smoke-run: python is not on PATH: the container (smoke.container.image) must provide python");
    const noScript = await runSmokeStep(null, { path: [fakeTools("uv")], recipeScript: false });
    expect(noScript.status).toBe(2);
    expect(noScript.stderr).toMatch(/scripts\/training\/run_recipe\.py is not in the checkout .*\/checkout \(commit 000000000000\)/);
  });
});
