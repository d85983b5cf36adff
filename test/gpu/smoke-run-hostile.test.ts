// A hostile checkout against the real `hcp-bot smoke-run` binary: real child processes, the fake
// torchrun of fixtures/python-torch (it spawns ranks as torch's does: a copy of os.environ, only
// fds 0-2 inherited), the real probe, and a venv inside the checkout as `uv run` makes one.
// The checkout holds what a PR can add:
//   - torch/distributed/run.py at its root: `python -m torch.distributed.run` in the checkout
//     would run it as the launcher; it hunts for the key and prints a whole passing run
//     (four signed reports, iteration lines, the end marker) without training anything;
//   - sitecustomize.py: importable wherever the checkout is on sys.path (the probe chains to it);
//   - an editable install's .pth in the venv: the checkout's path, plus an `import` line that
//     runs hostile code in every process that processes it.
// Each hunts the key where a process of the run could find it (its environment, a key file,
// /proc/self/environ, the parent's /proc/PID/environ) and records where it ran and what it found.
// Not covered, by design (README "Security"): code running inside a rank, before the probe (the
// .pth line) or after it, can read the rank's key descriptor or reach the probe's HMAC object.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { VerdictSchema } from "../../src/core/verdict/schema.ts";
import { baseEnv, fixtures, hcpBot, type Run, tempDir } from "./helpers.ts";

const RECIPE = "llama32_1b_pretrain_config";
const HCP_OVERRIDES = ["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"];

/** Python shared by the hostile files: where a key could be, and a record of what was found. */
const HUNT = String.raw`
import json, os, re, sys

def _hunt():
    found = []
    if os.environ.get("HCP_PROBE_KEY"):
        found.append(("environ", os.environ["HCP_PROBE_KEY"]))
    path = os.environ.get("HCP_PROBE_KEY_FILE")
    for label, p in (("key file", path), ("self environ", "/proc/self/environ"), ("parent environ", "/proc/%d/environ" % os.getppid())):
        try:
            data = open(p, "rb").read() if p else b""
        except OSError:
            continue
        m = re.search(rb"HCP_PROBE_KEY=([0-9a-f]{64})", data) or re.fullmatch(rb"\s*([0-9a-f]{64})\s*", data)
        if m and m.group(1) != b"0" * 64:
            found.append((label, m.group(1).decode()))
    return found

def _record(who):
    argv = " ".join(getattr(sys, "orig_argv", sys.argv))
    launcher = "torch.distributed.run" in argv or "launch.py" in argv
    found = _hunt()
    with open(os.path.join(os.environ["HOSTILE_OUT"], "records.jsonl"), "a") as f:
        f.write(json.dumps({"who": who, "launcher": launcher, "found": [label for label, _ in found], "pid": os.getpid()}) + "\n")
    return found[0][1] if found else None
`;

/** The PR's torchrun: no ranks, no training; a passing run's lines, signed with any key it found. */
const HOSTILE_TORCHRUN = `${HUNT}
import hashlib, hmac
key = _record("torch/distributed/run.py")
open(os.path.join(os.environ["HOSTILE_OUT"], "launcher-ran"), "w").write("yes")
for rank in range(4):
    levels = [
        {"level": 0, "desc": "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0", "size": 2, "ranks": [r for r in range(4) if r // 2 == rank // 2]},
        {"level": 1, "desc": "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1", "size": 2, "ranks": [r for r in range(4) if r % 2 == rank % 2]},
    ]
    body = json.dumps({"v": 2, "rank": rank, "world_size": 4, "hcp_sizes": [2, 2], "cp_size": 4, "levels": levels, "pid": 1}, separators=(",", ":"))
    if key:
        body = body[:-1] + ',"mac":"%s"}' % hmac.new(bytes.fromhex(key), b"hcp-probe-report/v2\\n" + body.encode(), hashlib.sha256).hexdigest()
    print("\\nHCP-PROBE " + body, flush=True)
print("Configuration Summary (Non-Default Values vs Megatron Core)\\n\\n[model] Non-default values (vs Mcore TransformerConfig):")
print("  context_parallel_size: 4  (Mcore default: 1)\\n  cp_comm_type: 'a2a+p2p'  (Mcore default: None)\\n  hierarchical_context_parallel_sizes: [2, 2]  (Mcore default: None)")
for i in (1, 2):
    print(" [2026-11-30 04:42:2%d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): 1234.5 | learning rate: 1.000000E-05 | global batch size:     4 | lm loss: 1.234567E+01 | loss scale: 1.0 | number of skipped iterations:   0 | number of nan iterations:   0 |" % (i, i, 2, 4 * i))
print("[after training is done] datetime: 2026-11-30 04:42:30 ", flush=True)
`;

function hostileCheckout(): { cwd: string; checkout: string; out: string; python: string } {
  const cwd = tempDir("hcp-hostile-");
  const checkout = join(cwd, "checkout");
  const out = join(cwd, "hostile-out");
  mkdirSync(out);
  mkdirSync(join(checkout, "scripts", "training"), { recursive: true });
  copyFileSync(join(fixtures, "bridge", "scripts", "training", "run_recipe.py"), join(checkout, "scripts", "training", "run_recipe.py"));
  mkdirSync(join(checkout, "torch", "distributed"), { recursive: true });
  writeFileSync(join(checkout, "torch", "__init__.py"), "");
  writeFileSync(join(checkout, "torch", "distributed", "__init__.py"), "");
  writeFileSync(join(checkout, "torch", "distributed", "run.py"), HOSTILE_TORCHRUN);
  writeFileSync(join(checkout, "sitecustomize.py"), `${HUNT}\n_record("sitecustomize.py")\n`);
  writeFileSync(join(checkout, "hostile_pth.py"), `${HUNT}\n_record(".pth import line")\n`);
  // The venv `uv run` keeps in the project, with the PR installed editable.
  const venv = join(checkout, ".venv");
  const made = spawnSync("python3", ["-m", "venv", "--without-pip", venv], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`python3 -m venv failed: ${made.stderr}`);
  const lib = readdirSync(join(venv, "lib")).find((d) => d.startsWith("python"))!;
  writeFileSync(join(venv, "lib", lib, "site-packages", "__editable__.hostile_pr-0.0.0.pth"), `${checkout}\nimport hostile_pth\n`);
  return { cwd, checkout, out, python: join(venv, "bin", "python") };
}

interface HostileRecord {
  who: string;
  launcher: boolean;
  found: string[];
  pid: number;
}

describe("smoke-run against a hostile checkout (torch/distributed/run.py, sitecustomize.py, an editable .pth)", () => {
  let setup: ReturnType<typeof hostileCheckout>;
  let run: Run;
  let records: HostileRecord[];
  beforeAll(async () => {
    setup = hostileCheckout();
    run = await hcpBot(["smoke-run", "--recipe", RECIPE, "--nproc", "4", "--", ...HCP_OVERRIDES], {
      cwd: setup.checkout,
      env: baseEnv({
        RUNNER_TEMP: setup.cwd,
        FAKE_UV_TORCHRUN: "1",
        FAKE_UV_PYTHON_BIN: setup.python,
        HOSTILE_OUT: setup.out,
        // The runner's own PYTHONPATH (outside the checkout): the fake torch and Megatron-Core.
        PYTHONPATH: [join(fixtures, "python-torch"), join(fixtures, "python")].join(delimiter),
      }),
    });
    const text = existsSync(join(setup.out, "records.jsonl")) ? readFileSync(join(setup.out, "records.jsonl"), "utf8") : "";
    records = text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as HostileRecord);
  });

  it("the checkout's torch/distributed/run.py never runs: torch's own launcher starts the ranks", () => {
    expect(existsSync(join(setup.out, "launcher-ran"))).toBe(false);
    expect(records.filter((r) => r.who === "torch/distributed/run.py")).toEqual([]);
  });

  it("nothing of the checkout runs in the launcher: no sitecustomize, no .pth line", () => {
    expect(records.filter((r) => r.launcher)).toEqual([]);
  });

  it("no hostile code finds the key, in the launcher or in a rank", () => {
    // The .pth line and the chained sitecustomize did run in the ranks (so the hunt was live there).
    expect(records.filter((r) => r.who === ".pth import line" && !r.launcher)).toHaveLength(4);
    expect(records.filter((r) => r.who === "sitecustomize.py" && !r.launcher)).toHaveLength(4);
    expect(records.flatMap((r) => r.found)).toEqual([]);
  });

  it("the run is the real one: four reports signed by the probe in the ranks, and the verdict passes on them", () => {
    expect(run.stderr).not.toMatch(/\[hcp-bot (probe|launcher)\]/);
    const v = VerdictSchema.parse(JSON.parse(readFileSync(join(setup.cwd, "hcp-smoke-out", "verdict.json"), "utf8")));
    const log = readFileSync(join(setup.cwd, "hcp-smoke-out", "smoke.log"), "utf8");
    const pids = [...log.matchAll(/^HCP-PROBE .*"pid":(\d+)/gm)].map((m) => Number(m[1]));
    expect(pids).not.toContain(1); // none of the forger's (it claims pid 1)
    expect(v.hcp).toMatchObject({ probeReports: 4, untrustedReports: 0, ranksReported: [0, 1, 2, 3] });
    expect(v.status).toBe("pass");
    expect(run.code).toBe(0);
  });
});
