// The HCP probe (src/gpu/probe/sitecustomize.py) under the real python3, against a tiny
// fake megatron.core.parallel_state (and, where ranks matter, a fake torch.distributed).
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVerdictParser } from "../../src/core/verdict/parser.ts";
import { parseProbeLine, parseProbeReports, verifyProbeMac } from "../../src/core/verdict/probe.ts";
import { writeProbeDir, type ProbeDir } from "../../src/gpu/probe.ts";
import { fixtures, tempDir } from "./helpers.ts";

const fakeMegatron = join(fixtures, "python");
const fakeTorch = join(fixtures, "python-torch");

let probe: ProbeDir;
let scripts: string;

beforeAll(async () => {
  probe = await writeProbeDir();
  scripts = tempDir("hcp-probe-scripts-");
  const init = "initialize_model_parallel(tensor_model_parallel_size=1, pipeline_model_parallel_size=1, context_parallel_size=4, hierarchical_context_parallel_sizes=[2, 2])";
  const scriptsByName: Record<string, string> = {
    // Bridge's style: the module, then the function through it.
    "module.py": `from megatron.core import parallel_state\nparallel_state.${init}\nprint("script: after init", flush=True)\n`,
    // A from-import taken after the module loaded still gets the wrapper.
    "from_import.py": `from megatron.core.parallel_state import initialize_model_parallel\n${init}\nprint("script: after init", flush=True)\n`,
    // Positional arguments: the requested sizes are still read.
    "positional.py": "import megatron.core.parallel_state as ps\nps.initialize_model_parallel(1, 1, None, None, False, 4, [2, 2])\nprint('script: after init', flush=True)\n",
    "twice.py": `from megatron.core import parallel_state\nparallel_state.${init}\nparallel_state.${init}\n`,
    "no_megatron.py": "import json\nprint('script: no megatron here', flush=True)\n",
    // What a training script could try for the key: its environment, its own and its parent's
    // initial environment (/proc/PID/environ), then it initializes like Bridge.
    "look_for_key.py": [
      "import os, re",
      "def holds(path):",
      "    try:",
      "        data = open(path, 'rb').read()",
      "    except OSError:",
      "        return 'unreadable'",
      "    return any(m.group(1) != b'0' * 64 for m in re.finditer(rb'HCP_PROBE_KEY=([0-9a-f]{64})', data))",
      "import sys",
      "print('script: key in os.environ=%s self=%s parent=%s file-env=%s fd-env=%s stdin=%d' % ('HCP_PROBE_KEY' in os.environ, holds('/proc/self/environ'), holds('/proc/%d/environ' % os.getppid()), 'HCP_PROBE_KEY_FILE' in os.environ, 'HCP_PROBE_KEY_FD' in os.environ, len(sys.stdin.buffer.read())), flush=True)",
      "from megatron.core import parallel_state",
      `parallel_state.${init}`,
    ].join("\n"),
  };
  for (const [name, text] of Object.entries(scriptsByName)) writeFileSync(join(scripts, name), text);
});

afterAll(async () => {
  await probe.remove();
});

const KEY = "c0ffee".repeat(10) + "c0ff";

interface PyRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script with the probe; `key` is written to its stdin (a pipe) with HCP_PROBE_KEY_FD=0, as a rank gets it. */
function python(script: string, opts: { mode?: string; torch?: boolean; env?: Record<string, string>; pythonPath?: string[]; key?: string } = {}): PyRun {
  const path = [probe.dir, ...(opts.pythonPath ?? []), ...(opts.torch ? [fakeTorch] : []), fakeMegatron];
  const r = spawnSync("python3", [join(scripts, script)], {
    encoding: "utf8",
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      PYTHONPATH: path.join(delimiter),
      PYTHONDONTWRITEBYTECODE: "1",
      RANK: "2",
      WORLD_SIZE: "4",
      FAKE_MCORE_MODE: opts.mode ?? "hcp",
      ...(opts.key === undefined ? {} : { HCP_PROBE_KEY_FD: "0" }),
      ...opts.env,
    },
    ...(opts.key === undefined ? {} : { input: `${opts.key}\n` }),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function probeLines(stdout: string): string[] {
  return stdout.split("\n").filter((l) => l.startsWith("HCP-PROBE "));
}

function verdictFor(stdout: string, probeKey?: string) {
  const parser = createVerdictParser({ expectHcp: true, probeKey });
  parser.push(stdout);
  return parser.end(0);
}

describe("the HCP probe (sitecustomize) under python3", () => {
  it("reports the hierarchical groups in the verdict parser's format, and the parser calls HCP active", () => {
    const r = python("module.py", { torch: true });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
    const lines = probeLines(r.stdout);
    expect(lines).toHaveLength(1);
    const parsed = parseProbeLine(lines[0]!);
    expect(parsed).toMatchObject({
      ok: true,
      report: {
        v: 2,
        rank: 2,
        world_size: 4,
        hcp_sizes: [2, 2],
        cp_size: 4,
        levels: [
          { level: 0, desc: "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0", size: 2, ranks: [2, 3] },
          { level: 1, desc: "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1", size: 2, ranks: [0, 2] },
        ],
      },
    });
    expect(parsed?.ok && parsed.report.pid).toBeGreaterThan(0);
    expect(parsed?.ok && parsed.report.mac).toBeUndefined(); // no key handed over: unsigned
    // The report comes right after initialize_model_parallel returns, before the script goes on.
    expect(r.stdout.indexOf("HCP-PROBE")).toBeLessThan(r.stdout.indexOf("script: after init"));
    // Unsigned: listed, never evidence.
    const v = verdictFor(r.stdout);
    expect(v.hcp).toMatchObject({ active: null, probeReports: 0, untrustedReports: 1 });
  });

  it("without torch.distributed, rank and world size come from the torchrun environment (no ranks listed)", () => {
    const r = python("module.py");
    const parsed = parseProbeLine(probeLines(r.stdout)[0]!);
    expect(parsed?.ok && parsed.report.rank).toBe(2);
    expect(parsed?.ok && parsed.report.world_size).toBe(4);
    expect(parsed?.ok && parsed.report.levels?.map((l) => [l.desc, l.size, l.ranks])).toEqual([
      ["HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0", 2, undefined],
      ["HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1", 2, undefined],
    ]);
  });

  it.each(["from_import.py", "positional.py"])("works for %s", (script) => {
    const r = python(script, { torch: true });
    expect(r.status).toBe(0);
    const parsed = parseProbeLine(probeLines(r.stdout)[0] ?? "");
    expect(parsed?.ok && parsed.report.hcp_sizes).toEqual([2, 2]);
    expect(parsed?.ok && parsed.report.levels?.length).toBe(2);
  });

  it("reports each initialization (one line per call)", () => {
    expect(probeLines(python("twice.py").stdout)).toHaveLength(2);
  });

  it("a flat run reports levels null, which the parser reads as HCP not active, signed or not (an unsigned flat report only ever counts against a run)", () => {
    const key = "ab".repeat(32);
    const r = python("module.py", { mode: "flat", torch: true, key });
    const parsed = parseProbeLine(probeLines(r.stdout)[0]!);
    expect(parsed?.ok && parsed.report.levels).toBeNull();
    expect(verdictFor(r.stdout, key).hcp.active).toBe(false);
    // Without the key the report is untrusted: it can never make a run pass, but a flat one
    // still says CP ran without its hierarchy, so it counts against the run.
    expect(verdictFor(r.stdout).hcp.active).toBe(false);
  });

  it("a probe failure never breaks the script: it prints an error report and a diagnostic, and the run goes on", () => {
    const r = python("module.py", { mode: "groups-raise", torch: true, key: "ab".repeat(32) });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("script: after init");
    const parsed = parseProbeLine(probeLines(r.stdout)[0]!);
    expect(parsed?.ok && parsed.report.error).toBe("RuntimeError: fake: hierarchical groups unavailable");
    expect(r.stderr).toMatch(/^\[hcp-bot probe\] rank 2: could not read the HCP groups \(RuntimeError: fake: hierarchical groups unavailable\); training continues$/m);
    const v = verdictFor(r.stdout, "ab".repeat(32));
    expect(v.hcp.active).toBeNull(); // a failed probe proves nothing either way
    expect(v.notes.join("\n")).toMatch(/the HCP probe on rank 2 failed/);
  });

  it("an initialize_model_parallel error is the run's own: it propagates unchanged, and no report is printed", () => {
    const r = python("module.py", { mode: "init-raise", torch: true });
    expect(r.status).toBe(1);
    expect(probeLines(r.stdout)).toEqual([]);
    expect(r.stderr).toContain("assert hierarchical_context_parallel_sizes is None");
    expect(r.stderr).toMatch(/\nAssertionError\n$/);
    expect(r.stderr).not.toContain("[hcp-bot probe]");
  });

  it("stays silent in processes that never import Megatron (the torchrun launcher)", () => {
    const r = python("no_megatron.py");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("script: no megatron here\n");
    expect(r.stderr).toBe("");
  });

  it("runs the sitecustomize it shadows (a venv's or the distro's)", () => {
    const other = tempDir("hcp-probe-other-");
    writeFileSync(join(other, "sitecustomize.py"), "print('the other sitecustomize ran', flush=True)\n");
    const r = python("module.py", { pythonPath: [other] });
    expect(r.stdout.split("\n")[0]).toBe("the other sitecustomize ran");
    expect(probeLines(r.stdout)).toHaveLength(1);
  });

  it("a broken shadowed sitecustomize is reported and does not stop the probe", () => {
    const other = tempDir("hcp-probe-broken-");
    writeFileSync(join(other, "sitecustomize.py"), "raise ValueError('broken site hook')\n");
    const r = python("module.py", { pythonPath: [other] });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^\[hcp-bot probe\] the shadowed sitecustomize failed \(ValueError: broken site hook\)$/m);
    expect(probeLines(r.stdout)).toHaveLength(1);
  });
});

describe("the probe's key (it signs reports; the training script must not be able to read it)", () => {
  it("a rank takes its key line from fd 0 before user code runs: no key or marker in its environment, /dev/null as stdin; its report's MAC verifies", () => {
    const r = python("look_for_key.py", { torch: true, key: KEY });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("script: key in os.environ=False self=False parent=False file-env=False fd-env=False stdin=0");
    const [report] = parseProbeReports(probeLines(r.stdout)[0]!);
    expect(report?.ok && verifyProbeMac(report.json, KEY)).toBe(true);
    expect(report?.ok && verifyProbeMac(report.json, "0".repeat(64))).toBe(false);
    expect(verdictFor(r.stdout, KEY).hcp).toMatchObject({ active: true, probeReports: 1, untrustedReports: 0 });
  });

  it("the launcher (python -I -S launch.py) passes the key lines on fd 3 to torchrun's ranks as fd 0: each rank takes one, none sees it elsewhere", async () => {
    const path = [probe.dir, fakeTorch, fakeMegatron].join(delimiter);
    const child = spawn("python3", ["-u", "-I", "-S", probe.launcher, "--nproc_per_node=4", join(scripts, "look_for_key.py")], {
      cwd: scripts,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PYTHONPATH: path, PYTHONDONTWRITEBYTECODE: "1", HCP_PROBE_KEY_FD: "0" },
    });
    (child.stdio[3] as NodeJS.WritableStream).end(`${KEY}\n`.repeat(4));
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(status).toBe(0);
    expect(stdout.match(/script: key in os\.environ=False self=False parent=False file-env=False fd-env=False stdin=0/g)).toHaveLength(4);
    // Each report begins its own line (a leading newline in one write), whatever the ranks interleave.
    const lines = probeLines(stdout);
    expect(lines).toHaveLength(4);
    const reports = lines.flatMap((l) => parseProbeReports(l));
    expect(reports.map((p) => p.ok && verifyProbeMac(p.json, KEY))).toEqual([true, true, true, true]);
    const v = verdictFor(stdout, KEY);
    expect(v.hcp).toMatchObject({ active: true, probeReports: 4, ranksReported: [0, 1, 2, 3], levelSizes: [2, 2] });
  });

  it("one key line per rank: a second reader of a one-line channel gets nothing and signs nothing", async () => {
    const child = spawn("python3", ["-u", "-I", "-S", probe.launcher, "--nproc_per_node=2", join(scripts, "module.py")], {
      cwd: scripts,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PYTHONPATH: [probe.dir, fakeTorch, fakeMegatron].join(delimiter), PYTHONDONTWRITEBYTECODE: "1", HCP_PROBE_KEY_FD: "0" },
    });
    (child.stdio[3] as NodeJS.WritableStream).end(`${KEY}\n`); // one line, two ranks
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    await new Promise((resolve) => child.on("close", resolve));
    const signed = probeLines(stdout).filter((l) => l.includes('"mac"'));
    expect(signed).toHaveLength(1);
    expect(probeLines(stdout)).toHaveLength(2);
    expect(stderr).toMatch(/^\[hcp-bot probe\] no key arrived for this process \(0 bytes\); reports stay unsigned$/m);
  });

  it("HCP_PROBE_KEY or HCP_PROBE_KEY_FILE in the environment is never a key: the report stays unsigned and the script sees neither", () => {
    const keyFile = join(tempDir("hcp-probe-key-"), "key");
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    const r = python("look_for_key.py", { torch: true, env: { HCP_PROBE_KEY: KEY, HCP_PROBE_KEY_FILE: keyFile } });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("key in os.environ=False");
    expect(r.stdout).toContain("file-env=False");
    expect(parseProbeLine(probeLines(r.stdout)[0]!)).toMatchObject({ ok: true, report: { v: 2 } });
    expect(probeLines(r.stdout)[0]).not.toContain('"mac"');
  });

  it("the launcher finds torch in a venv's own site-packages (PYTHONPATH naming no torch), as on a runner whose python is a venv's", () => {
    const venv = join(tempDir("hcp-probe-venv-"), "venv");
    expect(spawnSync("python3", ["-m", "venv", "--without-pip", venv]).status).toBe(0);
    const lib = readdirSync(join(venv, "lib")).find((d) => d.startsWith("python"))!;
    cpSync(join(fakeTorch, "torch"), join(venv, "lib", lib, "site-packages", "torch"), { recursive: true });
    const r = spawnSync(join(venv, "bin", "python"), ["-u", "-I", "-S", probe.launcher, "--nproc_per_node=2", join(scripts, "no_megatron.py")], {
      cwd: scripts,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", PYTHONDONTWRITEBYTECODE: "1" },
    });
    expect(r.stderr).toBe("");
    expect(r.stdout.match(/script: no megatron here/g)).toHaveLength(2); // both ranks ran (their lines may interleave)
    expect(r.status).toBe(0);
  });

  it("the launcher never imports a torch that only the checkout provides (at its root or through PYTHONPATH)", () => {
    const checkout = tempDir("hcp-probe-checkout-");
    for (const dir of [join(checkout, "torch", "distributed"), join(checkout, "vendor", "torch", "distributed")]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "run.py"), "print('the checkout launched')\n");
      writeFileSync(join(dir, "..", "__init__.py"), "");
      writeFileSync(join(dir, "__init__.py"), "");
    }
    const r = spawnSync("python3", ["-u", "-I", "-S", probe.launcher, "--nproc_per_node=1", "x.py"], {
      cwd: checkout,
      encoding: "utf8",
      // The runner's PYTHONPATH names a folder inside the checkout (and the checkout itself): never used by the launcher.
      env: { PATH: process.env.PATH ?? "", PYTHONPATH: [checkout, join(checkout, "vendor")].join(delimiter) },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("[hcp-bot launcher] torch is not importable from the environment (outside the checkout): no run\n");
  });

  it("a malformed key is refused with a diagnostic: the report stays unsigned and the script still runs", () => {
    const r = python("look_for_key.py", { torch: true, key: "not-a-key" });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^\[hcp-bot probe\] no key arrived for this process \(10 bytes\); reports stay unsigned$/m);
    expect(r.stdout).toContain("script: key in os.environ=False");
    expect(probeLines(r.stdout)[0]).not.toContain('"mac"');
  });
});
