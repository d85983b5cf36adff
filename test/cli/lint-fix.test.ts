// `hcp-bot lint --fix` and `--diff` through the real binary, on copies of the CLI fixtures in a
// scratch folder: the edits are written once (a second run changes nothing), a file with a
// parse error is never edited, and the diff `--diff` prints applies with `git apply` and with
// `patch` to give byte for byte what `--fix` writes.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hcpBot, root } from "../support/cli.ts";

const FILES = ["hcp_recipes.py", "launch.sh", "override.yaml"];
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-fix-"));
  mkdirSync(join(dir, "work"));
  for (const f of FILES) copyFileSync(join(root, "fixtures", "cli", f), join(dir, "work", f));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const work = (...p: string[]) => join(dir, "work", ...p);
const read = (name: string, folder = "work") => readFileSync(join(dir, folder, name), "utf8");
const snapshot = (folder = "work") => Object.fromEntries(FILES.map((f) => [f, read(f, folder)]));
const lint = (args: string[], cwd = work()) => hcpBot(["lint", ...args], { cwd, env: { ...process.env, NO_COLOR: "1" } });

describe("hcp-bot lint --fix", () => {
  it("writes the findings' edits, reports what is left, and a second run changes nothing", async () => {
    const before = snapshot();
    const first = await lint(["--fix", ...FILES]);
    const after = snapshot();
    expect(after["hcp_recipes.py"]).toBe(before["hcp_recipes.py"]!.replace('    cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n\n\ndef good', '    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    return cfg\n\n\ndef good'));
    expect(after["launch.sh"]).toBe(before["launch.sh"]!.replace("dist.use_decentralized_pg=true", "dist.use_decentralized_pg=false"));
    // The YAML's HCP002 has no mechanical fix: it is left, and still fails the run.
    expect(after["override.yaml"]).toBe(before["override.yaml"]);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/override\.yaml:5:40: error HCP002/);
    expect(first.stdout).not.toMatch(/HCP001|HCP006/);
    expect(first.stdout).toMatch(/^Found 1 error and \d+ notes in 3 files \(\d+ configurations\); 2 fixed$/m);

    const second = await lint(["--fix", ...FILES]);
    expect(snapshot()).toEqual(after);
    expect(second.stdout).not.toMatch(/fixed/);
    expect(second.code).toBe(1);
  });

  it("the text output marks fixable findings [*] and counts them", async () => {
    const run = await lint(FILES);
    expect(run.stdout).toMatch(/^hcp_recipes\.py:14:30: error HCP001 \[\*\] /m);
    expect(run.stdout).toMatch(/^launch\.sh:5:31: error HCP006 \[\*\] /m);
    expect(run.stdout).toMatch(/^override\.yaml:5:40: error HCP002 (?!\[\*\])/m);
    expect(run.stdout).toMatch(/; 2 fixable with `hcp-bot lint --fix`$/m);
  });

  it("never edits a file with a parse error, and says so", async () => {
    const broken = read("hcp_recipes.py") + "\n\ndef broken_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = = 4\n    return cfg\n";
    writeFileSync(work("hcp_recipes.py"), broken);
    const run = await lint(["--fix", "hcp_recipes.py"]);
    expect(read("hcp_recipes.py")).toBe(broken);
    expect(run.stderr).toMatch(/not fixed: hcp_recipes\.py: it has a parse error/);
    // The finding is still reported, without the [*] a fix it cannot get would promise.
    expect(run.stdout).toMatch(/^hcp_recipes\.py:14:30: error HCP001 (?!\[\*\])/m);
    expect(run.stdout).toMatch(/error parse-error/);
    expect(run.code).toBe(1);
    const diff = await lint(["--diff", "hcp_recipes.py"]);
    expect(diff.stdout).toBe("");
    expect(diff.code).toBe(0);
  });
});

describe("hcp-bot lint --diff", () => {
  it("prints the fixes as a unified diff, exit 1, files untouched; git apply and patch -p1 give what --fix writes", async () => {
    // A last line without a newline is part of a hunk too.
    writeFileSync(work("launch.sh"), read("launch.sh").replace("    train.train_iters=2\n", "    train.train_iters=2"));
    cpSync(work(), join(dir, "by-git"), { recursive: true });
    cpSync(work(), join(dir, "by-patch"), { recursive: true });
    const before = snapshot();
    const diff = await lint(["--diff", ...FILES]);
    expect(diff.code).toBe(1);
    expect(snapshot()).toEqual(before);
    expect(diff.stdout).toMatch(/^--- a\/hcp_recipes\.py\n\+\+\+ b\/hcp_recipes\.py\n@@ -12,6 \+12,7 @@\n/);
    expect(diff.stdout).toContain("+    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n");
    expect(diff.stdout).toContain("\n\\ No newline at end of file\n");
    expect(diff.stderr).toMatch(/--fix would fix 2 findings in 2 files/);

    writeFileSync(join(dir, "fixes.diff"), diff.stdout);
    execFileSync("git", ["apply", join(dir, "fixes.diff")], { cwd: join(dir, "by-git") });
    execFileSync("patch", ["-p1", "-s", "-i", join(dir, "fixes.diff")], { cwd: join(dir, "by-patch") });
    await lint(["--fix", ...FILES]);
    expect(snapshot("by-git")).toEqual(snapshot());
    expect(snapshot("by-patch")).toEqual(snapshot());
    expect(snapshot()).not.toEqual(before);

    const again = await lint(["--diff", ...FILES]);
    expect(again.stdout).toBe("");
    expect(again.code).toBe(0);
  });

  it("refuses --fix together with --add-noqa or --baseline-write (exit 2)", async () => {
    const run = await lint(["--fix", "--add-noqa", ...FILES]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--fix and --add-noqa do opposite things/);
    expect(snapshot()["hcp_recipes.py"]).toBe(readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py"), "utf8"));
  });
});
