// The flags people script `hcp-bot lint` with, through the real binary: --exit-zero, --quiet,
// --statistics, --output-file, `-` with --stdin-filename, and --watch (a real file change seen
// by a child process, which is then stopped by a signal; every wait is on its output).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hcpBot, root, startHcpBot } from "../support/cli.ts";

const RECIPE = "hcp_recipes.py";
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-flags-"));
  copyFileSync(join(root, "fixtures", "cli", RECIPE), join(dir, RECIPE));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const env = { ...process.env, NO_COLOR: "1" };
const lint = (args: string[], input?: string) => hcpBot(["lint", ...args], { cwd: dir, env, ...(input === undefined ? {} : { input }) });
const recipeText = () => readFileSync(join(root, "fixtures", "cli", RECIPE), "utf8");

describe("--exit-zero, --quiet, --statistics, --output-file", () => {
  it("--exit-zero reports the findings and exits 0; bad input is still 2", async () => {
    const run = await lint(["--exit-zero", RECIPE]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/error HCP001/);
    expect((await lint(["--exit-zero", "missing.py"])).code).toBe(2);
  });

  it("--quiet prints the findings only (no summary), and nothing for a clean file", async () => {
    const run = await lint(["--quiet", RECIPE]);
    expect(run.stdout.trimEnd().split("\n").every((l) => /^hcp_recipes\.py:\d+:\d+: (error|warning|info) HCP\d+ /.test(l))).toBe(true);
    expect(run.stdout).not.toMatch(/Found/);
    expect(run.code).toBe(1);
    copyFileSync(join(root, "fixtures", "cli", "clean_recipe.py"), join(dir, "clean_recipe.py"));
    expect((await lint(["-q", "clean_recipe.py"])).stdout).toBe("");
  });

  it("--statistics counts the findings per rule, [*] when all of them are fixable", async () => {
    const run = await lint(["--statistics", RECIPE]);
    expect(run.stdout).toMatch(/^1 {2}HCP001 {2}\[\*\] {2}a2a-p2p-without-sizes$/m);
    expect(run.stdout).toMatch(/^1 {2}HCP009 {7}a2a-heads-not-divisible$/m);
    expect(run.stdout).not.toMatch(/hcp_recipes\.py:\d+/);
    expect(run.stdout).toMatch(/^Found 1 error and 1 note in 1 file/m);
    expect((await lint(["--statistics", "--format", "json", RECIPE])).code).toBe(2);
  });

  it("--output-file writes the report (uncoloured even when colour is forced) and prints nothing", async () => {
    const run = await lint(["--output-file", "report.txt", "--color=always", RECIPE]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const report = readFileSync(join(dir, "report.txt"), "utf8");
    expect(report).toMatch(/^hcp_recipes\.py:14:30: error HCP001 \[\*\] /m);
    expect(report).not.toContain("\u001b");
    await lint(["-o", "report.json", "--format", "json", RECIPE]);
    expect((JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as { findings: unknown[] }).findings.length).toBe(2);
  });
});

describe("stdin: - with --stdin-filename", () => {
  it("lints stdin as the named file: its kind, its paths, and the settings found above it", async () => {
    mkdirSync(join(dir, "sub", ".github"), { recursive: true });
    writeFileSync(join(dir, "sub", ".github", "hcp-bot.yml"), "rules:\n  ignore: [HCP009]\n");
    // The name need not exist: an editor's unsaved buffer.
    const run = await lint(["-", "--stdin-filename", "sub/unsaved.py"], recipeText());
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^sub\/unsaved\.py:14:30: error HCP001 \[\*\] /m);
    expect(run.stdout).not.toMatch(/HCP009/);
    // Stdin wins over the copy on disk at that name.
    const shadow = await lint(["-", "--stdin-filename", RECIPE, RECIPE], "x = 1\n");
    expect(shadow.stdout).not.toMatch(/HCP001/);
    expect(shadow.code).toBe(0);
  });

  it("with --fix prints the fixed text on stdout, the report on stderr, and writes no file", async () => {
    const run = await lint(["-", "--stdin-filename", RECIPE, "--fix"], recipeText());
    expect(run.stdout).toBe(recipeText().replace('    cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n\n\ndef good', '    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    return cfg\n\n\ndef good'));
    expect(run.stderr).toMatch(/; 1 fixed$/m);
    expect(readFileSync(join(dir, RECIPE), "utf8")).toBe(recipeText());
  });

  it("refuses - without --stdin-filename, and a name of a kind it does not read (exit 2)", async () => {
    const bare = await lint(["-"], "x = 1\n");
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/reading stdin \(-\) needs --stdin-filename NAME/);
    const odd = await lint(["-", "--stdin-filename", "notes.txt"], "x\n");
    expect(odd.code).toBe(2);
    expect(odd.stderr).toMatch(/cannot lint stdin as notes\.txt/);
  });
});

describe("--watch", () => {
  it("lints a folder, lints it again when a file changes, and stops on SIGTERM with 0", async () => {
    const { child, done } = startHcpBot(["lint", "--watch", "--all", "."], { cwd: dir, env });
    let out = "";
    let err = "";
    const waiters: Array<() => void> = [];
    const wake = () => waiters.splice(0).forEach((w) => w());
    child.stdout!.on("data", (d: string) => ((out += d), wake()));
    child.stderr!.on("data", (d: string) => ((err += d), wake()));
    const until = (check: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const look = () => (check() ? resolve() : child.exitCode !== null ? reject(new Error(`hcp-bot exited: ${err}`)) : waiters.push(look));
        look();
      });
    const watching = () => (err.match(/watching \. for changes/g) ?? []).length;

    await until(() => watching() === 1);
    expect(out).toMatch(/^hcp_recipes\.py:14:30: error HCP001 /m);
    const first = out.length;
    // The fix, made by hand: the next report no longer has HCP001.
    writeFileSync(join(dir, RECIPE), recipeText().replace('cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n\n\ndef good', 'cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    return cfg\n\n\ndef good'));
    await until(() => watching() >= 2 && /Found|No findings/.test(out.slice(first)));
    expect(err).toMatch(/files changed; linting again/);
    expect(out.slice(first)).not.toMatch(/HCP001/);
    child.kill("SIGTERM");
    const end = await done;
    expect(end.code).toBe(0);
  });
});
