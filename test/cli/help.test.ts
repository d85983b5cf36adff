// Help, unknown flags and terminal output, through the CLI's front door: main() in-process
// for the many small cases, the real binary (under a real pseudo-terminal for colour) for
// the wiring.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commandFlags, main, type Io } from "../../src/cli.ts";
import { COMMANDS, flagsOf } from "../../src/cli/spec.ts";
import { bin, hcpBot, root } from "../support/cli.ts";

interface Ran {
  code: number;
  out: string;
  err: string;
}

async function cli(args: string[], extra: Partial<Io> = {}): Promise<Ran> {
  let out = "";
  let err = "";
  const code = await main(args, { out: (t) => (out += t), err: (t) => (err += t), ...extra });
  return { code, out, err };
}

const ESC = "\u001b[";

describe("--help on every command", () => {
  it.each(COMMANDS.map((c) => c.name))("%s: --help, -h and `help COMMAND` print the same usage with exit codes", async (name) => {
    const long = await cli([name, "--help"]);
    const short = await cli([name, "-h"]);
    const viaHelp = await cli(["help", name]);
    expect(long.code).toBe(0);
    expect(long.err).toBe("");
    expect(long.out).toMatch(/Usage:/);
    expect(long.out).toMatch(/Exit status:?\s/);
    expect(short.out).toBe(long.out);
    expect(viaHelp.out).toBe(long.out);
  });

  it("lists every flag a command takes, and --help wins over missing arguments", async () => {
    const lint = await cli(["lint", "--help"]);
    for (const flag of flagsOf(COMMANDS.find((c) => c.name === "lint")!)) expect(lint.out).toContain(flag.name);
    expect(lint.out).toMatch(/0 +no error found/);
    expect(lint.out).toMatch(/1 +an error-severity finding/);
    expect(lint.out).toMatch(/2 +bad usage/);
    // Unreadable input is exit 2 alone: the status list says so once.
    expect(lint.out.match(/unread|could not be read/g)).toHaveLength(1);
    expect(lint.out).toMatch(/^ {2}2 +.*could not be read/m);
    expect((await cli(["advise", "--help"])).out).toMatch(/^ {2}hcp-bot advise --cp N \[--tp N\] \[--pp N\]/m);
    expect((await cli(["verdict", "--help", "--exit-code"])).code).toBe(0);
  });

  it("top-level help lists the commands; no command at all is a usage error on stderr", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const c of COMMANDS) expect(help.out).toContain(c.name);
    const bare = await cli([]);
    expect(bare.code).toBe(2);
    expect(bare.out).toBe("");
    expect(bare.err).toMatch(/Commands:/);
  });

  it("a flag after `--` belongs to the command (smoke-run overrides), not to help", async () => {
    const r = await cli(["smoke-run", "--recipe", "llama32_1b_pretrain_config", "--dry-run", "--", "-h"]);
    expect(r.out).not.toMatch(/Usage:/);
  });
});

describe("every flag in a command's help is one its parser takes", () => {
  // A flag the parser does not know would be refused with "unknown option"; any other answer means it was read.
  // init-workflow writes a file: into a scratch folder, never into the checkout the suite runs in.
  const scratch = mkdtempSync(join(tmpdir(), "hcp-help-"));
  const argsFor = (command: string, flag: string, takesValue: boolean): string[] => {
    const value = flag === "--out" ? [join(scratch, "out.yml")] : takesValue ? ["2"] : [];
    const out = command === "init-workflow" && flag !== "--out" ? ["--out", join(scratch, `${flag.slice(2)}.yml`)] : [];
    return [command, flag, ...value, ...out];
  };
  // `server --stdio` would take over this process's stdin and stdout for good: test/cli/lsp.test.ts runs it as a child.
  const inProcess = (command: string, flag: string) => !(command === "server" && flag === "--stdio");
  it.each(COMMANDS.flatMap((c) => flagsOf(c).filter((f) => inProcess(c.name, f.name)).map((f) => [c.name, f.name, f.takesValue] as const)))("%s %s", async (command, flag, takesValue) => {
    const r = await cli(argsFor(command, flag, takesValue), { env: { HCP_BOT_SPEC: "hcp-bot@0.0.0" } });
    expect(r.err).not.toMatch(/unknown option/i);
  });
});

describe("every flag a command's parser takes is in its help", () => {
  it.each(COMMANDS.map((c) => c.name))("%s", async (name) => {
    const help = (await cli([name, "--help"])).out;
    for (const flag of await commandFlags(name)) expect(help, flag.name).toMatch(new RegExp(`(^|[\\s,[|])${flag.name}(?![a-z-])`, "m"));
  });
});

describe("unknown flags and commands name the closest valid one", () => {
  it.each([
    [["lint", "--fromat", "json", "x.py"], "unknown option --fromat for lint; did you mean --format?"],
    [["lint", "--gpus-per-nod", "8", "x.py"], "did you mean --gpus-per-node?"],
    [["verdict", "log", "--exit-cod", "0"], "did you mean --exit-code?"],
    [["verdict", "log", "--expect"], "did you mean --expect-hcp?"],
    [["smoke-run", "--recpie", "x"], "did you mean --recipe?"],
    [["init-workflow", "--lables", "a"], "did you mean --labels?"],
    [["advise", "--kv-head", "8", "--cp", "4"], "did you mean --kv-heads?"],
    [["lnit", "x.py"], "unknown command lnit; did you mean lint?"],
    [["help", "advice"], "unknown command advice; did you mean advise?"],
    [["lint", "--fxi", "x.py"], "unknown option --fxi for lint; did you mean --fix?"],
    [["lint", "--quite", "x.py"], "did you mean --quiet?"],
    [["lint", "--stdin-file", "x.py", "-"], "did you mean --stdin-filename?"],
    [["lint", "--dif", "x.py"], "did you mean --diff?"],
  ])("%j", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it("names no neighbour when none is a typo away (advise has no --fix; --all is not one)", async () => {
    const r = await cli(["advise", "--fix", "--cp", "4"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown option --fix for advise (see `hcp-bot advise --help`)");
    expect(r.err).not.toContain("did you mean");
  });

  it.each([
    [["--format", "xml"], '--format takes text, json, sarif, github (got "xml")'],
    [["--format=JSON"], '--format takes text, json, sarif, github (got "JSON")'],
    [["--gpus-per-node", "0"], '--gpus-per-node takes a whole number of GPUs, 1 or more (got "0")'],
    [["--gpus-per-node", "2.5"], '(got "2.5")'],
    [["--gpus-per-node", "eight"], '(got "eight")'],
    [["--gpus-per-node", "99999999999999999999"], "(got \"99999999999999999999\")"],
  ])("lint %j is a usage error that says what the flag takes", async (flags, message) => {
    const r = await cli(["lint", ...flags, "fixtures/cli/clean_recipe.py"]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toContain(message);
  });

  it("lint takes --gpus-per-node as a whole number (it reaches the report's sizes)", async () => {
    const r = await cli(["lint", "--gpus-per-node", "4", "--format", "json", "fixtures/cli/hcp_recipes.py"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/4 GPUs per NVLink domain \(--gpus-per-node\)/);
  });

  it("a command without options says so", async () => {
    const r = await cli(["serve", "--verbose"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/serve takes no options, but got --verbose/);
  });
});

describe("terminal output", () => {
  const recipe = join("fixtures", "cli", "hcp_recipes.py");

  it("colours the text report on a terminal, not when piped, and never machine formats", async () => {
    const tty = await cli(["lint", recipe], { tty: { out: true, err: true } });
    expect(tty.out).toContain(`${ESC}31merror${ESC}39m`);
    const piped = await cli(["lint", recipe]);
    expect(piped.out).not.toContain(ESC);
    // The same report, and on the terminal each finding's code frame under it (lines that start with a space).
    const plain = tty.out.replace(/\u001b\[[0-9;]*m/g, "").split("\n");
    expect(plain.filter((l) => !l.startsWith(" "))).toEqual(piped.out.split("\n"));
    expect(plain.some((l) => /^ +\d+ \| /.test(l))).toBe(true);
    for (const format of ["json", "sarif", "github"]) {
      const r = await cli(["lint", recipe, "--format", format, "--color=always"], { tty: { out: true, err: true } });
      expect(r.out, format).not.toContain(ESC);
    }
  });

  it("NO_COLOR and --no-color turn colour off on a terminal; --color forces it when piped", async () => {
    expect((await cli(["lint", recipe], { tty: { out: true, err: true }, env: { NO_COLOR: "1" } })).out).not.toContain(ESC);
    expect((await cli(["lint", recipe, "--no-color"], { tty: { out: true, err: true } })).out).not.toContain(ESC);
    expect((await cli(["lint", recipe, "--color"])).out).toContain(ESC);
    expect((await cli(["lint", recipe, "--color=always"], { env: { NO_COLOR: "1" } })).out).toContain(ESC);
    expect((await cli(["lint", recipe, "--color=never"], { tty: { out: true, err: true }, env: { FORCE_COLOR: "1" } })).out).not.toContain(ESC);
    expect((await cli(["lint", recipe, "--color=sometimes"])).err).toMatch(/--color takes always, never or auto/);
  });

  it("shows control characters from a recipe as \\xNN on a terminal, so a file cannot drive it", async () => {
    // A folder name is as much the repository's text as a value: it reaches the report's file paths.
    const dir = join(mkdtempSync(join(tmpdir(), "hcp-ctl-")), "x\u001b[2J\u001b]0;owned\u0007");
    mkdirSync(dir);
    const file = join(dir, "evil_recipe.py");
    writeFileSync(file, readFileSync(join(root, recipe)));
    const r = await cli(["lint", file], { tty: { out: true, err: false } });
    expect(r.out).toContain("\\x1b[2J");
    expect(r.out).not.toMatch(/\u001b\[2J|\u0007/);
    const piped = await cli(["lint", file, "--format", "json"]);
    expect(JSON.parse(piped.out).findings.length).toBeGreaterThan(0);
  });

  it("through a real pseudo-terminal: colour by default, none with NO_COLOR", () => {
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} lint ${recipe}`;
    const run = (env: NodeJS.ProcessEnv) => spawnSync("script", ["-qec", command, "/dev/null"], { cwd: root, encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm", ...env } });
    const coloured = run({});
    expect(coloured.stdout).toContain(ESC);
    expect(coloured.stdout).toMatch(/HCP001/);
    const plain = run({ NO_COLOR: "1" });
    expect(plain.stdout).toMatch(/HCP001/);
    expect(plain.stdout).not.toContain(ESC);
  });

  it("the real binary pipes plain text and answers --version from package.json", async () => {
    const r = await hcpBot(["lint", recipe]);
    expect(r.stdout).not.toContain(ESC);
    expect((await hcpBot(["--version"])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
