// .pre-commit-hooks.yaml: a valid manifest (pre-commit's own validator when it is
// installed, the schema's required fields always), a file pattern that picks exactly what
// `hcp-bot lint .` reads, and the entry run as pre-commit runs it: the entry's words, then
// the matching files of the checkout, all in one process (require_serial).
//
// `pre-commit try-repo` itself cannot run offline: its last step, `npm install -g` of the
// packed hook, resolves the dependency ranges against the registry.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { collectPaths } from "../../src/node/files.ts";
import { bin, root } from "../support/cli.ts";

interface Hook {
  id: string;
  name: string;
  entry: string;
  language: string;
  files: string;
  exclude: string;
  require_serial?: boolean;
  minimum_pre_commit_version?: string;
}

const hooks = parse(readFileSync(join(root, ".pre-commit-hooks.yaml"), "utf8")) as Hook[];
const hook = hooks[0]!;
// pre-commit's languages (pre_commit/all_languages.py).
const LANGUAGES = ["conda", "coursier", "dart", "docker", "docker_image", "dotnet", "fail", "golang", "haskell", "julia", "lua", "node", "perl", "pygrep", "python", "r", "ruby", "rust", "script", "swift", "system"];

/** What pre-commit does with the pattern: Python's re.search on the path from the repository root. */
const selects = (path: string) => new RegExp(hook.files).test(path) && !new RegExp(hook.exclude).test(path);

// Paths of a Megatron-Bridge-shaped checkout: one or more per default glob, and near misses.
const SAMPLE = [
  "src/megatron/bridge/recipes/llama/llama3.py",
  "src/megatron/bridge/recipes/llama/h100/llama3.py",
  "src/megatron/bridge/recipes/README.md",
  "src/megatron/bridge/perf_recipes/qwen/qwen3.py",
  "src/megatron/bridge/diffusion/recipes/flux/flux.py",
  "src/megatron/bridge/diffusion/models/flux.py",
  "scripts/performance/configs/llama/llama3_workload_base_configs.py",
  "scripts/performance/utils/overrides.py",
  "scripts/performance/utils/helpers.py",
  "src/megatron/bridge/models/llama/llama_provider.py",
  "src/megatron/bridge/models/qwen/qwen3_moe_bridge.py",
  "src/megatron/bridge/models/llama/modeling.py",
  "examples/recipes/llama/run.sh",
  "examples/recipes/llama/conf/override.yaml",
  "examples/models/qwen/README.md",
  "examples/models/qwen/data.json",
  "tutorials/recipes/llama/00_quickstart.py",
  "scripts/training/run_recipe.py",
  "scripts/training/launch.sh",
  "scripts/training/README.md",
  "scripts/training/requirements.json",
  "tests/functional_tests/launch_scripts/L2_Launch_hcp.sh",
  "tests/functional_tests/launch_scripts/helper.py",
  "tests/unit_tests/test_config.py",
  "skills/nemo-mbridge-perf-hierarchical-context-parallel/card.yaml",
  "docs/training/hierarchical-context-parallel.md",
  "docs/training/other.md",
  "uv.lock",
  "pyproject.toml",
  "requirements-te.txt",
  "docker/Dockerfile.ci",
  "Dockerfile",
  "3rdparty/Megatron-LM/examples/run.sh",
  "node_modules/x/examples/a.py",
  "vendor/examples/train.py",
  "README.md",
  "setup.cfg",
];

function checkout(files: readonly string[], text: (path: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), "hcp-precommit-"));
  for (const path of files) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text(path));
  }
  return dir;
}

/** The entry the way pre-commit runs it: its words (split like shlex), then the file names. */
function runEntry(cwd: string, files: readonly string[]) {
  const [command, ...args] = hook.entry.split(" ");
  expect(command).toBe("hcp-bot");
  return spawnSync(process.execPath, [bin, ...args, ...files], { cwd, encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1" } });
}

describe(".pre-commit-hooks.yaml", () => {
  it("has one hook with the manifest's required fields, a known language and patterns that compile", () => {
    expect(hooks).toHaveLength(1);
    expect(hook).toMatchObject({ id: "hcp-bot", language: "node", entry: "hcp-bot lint", require_serial: true });
    expect(hook.name.length).toBeGreaterThan(0);
    expect(LANGUAGES).toContain(hook.language);
    // The binary pre-commit installs is this package's bin.
    expect(Object.keys(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).bin)).toContain("hcp-bot");
    for (const pattern of [hook.files, hook.exclude]) {
      expect(() => new RegExp(pattern)).not.toThrow();
      const py = spawnSync("python3", ["-c", "import re, sys; re.compile(sys.argv[1])", pattern], { encoding: "utf8" });
      expect(py.status, py.stderr).toBe(0);
    }
  });

  const preCommit = spawnSync("pre-commit", ["--version"], { encoding: "utf8" });
  it.skipIf(preCommit.status !== 0)("passes pre-commit's own validate-manifest", () => {
    const r = spawnSync("pre-commit", ["validate-manifest", join(root, ".pre-commit-hooks.yaml")], { encoding: "utf8" });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it("selects exactly the files `hcp-bot lint .` reads in a checkout", async () => {
    const dir = checkout(SAMPLE, () => "# placeholder\n");
    const read = (await collectPaths([dir], {}, dir)).map((p) => p.slice(dir.length + 1)).sort();
    expect(SAMPLE.filter(selects).sort()).toEqual(read);
    // Sanity: both halves of the comparison are non-trivial.
    expect(read.length).toBeGreaterThan(15);
    expect(SAMPLE.length - read.length).toBeGreaterThan(10);
  });

  it("the entry: every selected file is one lint reads (no usage error), errors exit 1, a clean commit exits 0", () => {
    const broken = readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py"), "utf8");
    const clean = readFileSync(join(root, "fixtures", "cli", "clean_recipe.py"), "utf8");
    const selected = SAMPLE.filter(selects);
    const dir = checkout(SAMPLE, (p) => (p === "src/megatron/bridge/recipes/llama/llama3.py" ? broken : p.endsWith(".py") ? clean : "# nothing here\n"));
    const all = runEntry(dir, selected);
    expect(all.status, all.stderr).toBe(1);
    expect(all.stdout).toMatch(/^src\/megatron\/bridge\/recipes\/llama\/llama3\.py:\d+:\d+: error HCP001/m);
    expect(all.stdout).toMatch(new RegExp(`^Found .* in ${selected.length} files? \\(`, "m"));
    const ok = runEntry(dir, ["src/megatron/bridge/recipes/llama/h100/llama3.py"]);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
  });
});
