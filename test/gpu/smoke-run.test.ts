// `hcp-bot smoke-run` through the real binary, with a fake `uv` (test/gpu/fixtures/fake-uv.mjs)
// that replays real torchrun logs, records its argv and environment, and can leave a
// grandchild behind or hang. No mocks: real processes, real signals, real files.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { parseProbeReports, requestedLayout, verdictOf, verifyProbeMac } from "../../src/core/verdict/index.ts";
import { VerdictSchema } from "../../src/core/verdict/schema.ts";
import { HARNESS_KEYS } from "../../src/gpu/overrides.ts";
import { smokeRun } from "../../src/gpu/smoke-run.ts";
import { baseEnv, fixtures, hcpBot as runBinary, type Run, logs, processAlive, readIf, root, startHcpBot as startBinary, tempDir, waitFor } from "./helpers.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const RECIPE = "llama32_1b_pretrain_config";
const HCP_OVERRIDES = ["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"];
/** The fixed harness settings for --iters N (always last). */
const fixed = (iters = 2) => [
  "logger.log_interval=1",
  "logger.log_throughput=true",
  `train.train_iters=${iters}`,
  "checkpoint.save=null",
  "checkpoint.load=null",
  "validation.eval_iters=0",
  "validation.eval_interval=0",
];
/** The harness defaults for N GPUs, unless the user set them. */
const defaults = (nproc: number) => [`train.global_batch_size=${nproc}`, "train.micro_batch_size=1"];

interface Recorded {
  argv: string[];
  env: Record<string, string | null>;
  probe: { dir: string; sitecustomize: boolean };
  pid: number;
  cwd: string;
}

/**
 * The binary run as the workflow runs it: in a checkout (DIR/checkout) with RUNNER_TEMP=DIR,
 * so the outputs land in DIR/hcp-smoke-out, outside the checkout.
 */
function checkoutIn(dir: string): string {
  const checkout = join(dir, "checkout");
  // A Megatron-Bridge checkout has run_recipe.py (smoke-run refuses one without it); the fake uv never runs it.
  const scripts = join(checkout, "scripts", "training");
  mkdirSync(scripts, { recursive: true });
  if (!existsSync(join(scripts, "run_recipe.py"))) copyFileSync(join(fixtures, "bridge", "scripts", "training", "run_recipe.py"), join(scripts, "run_recipe.py"));
  return checkout;
}
type BinaryOptions = NonNullable<Parameters<typeof runBinary>[1]> & { cwd: string; env: Record<string, string> };
const asWorkflow = (o: BinaryOptions) => ({ ...o, cwd: checkoutIn(o.cwd), env: { RUNNER_TEMP: o.cwd, ...o.env } });
const hcpBot = (args: string[], o: BinaryOptions) => runBinary(args, asWorkflow(o));
const startHcpBot = (args: string[], o: BinaryOptions) => startBinary(args, asWorkflow(o));

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

function verdictIn(dir: string) {
  return VerdictSchema.parse(readJson(join(dir, "hcp-smoke-out", "verdict.json")));
}

/** A run folder whose checkout has a stand-in run_recipe.py, for runs through the fake torchrun (fixtures/python-torch). */
function bridgeCheckout(): string {
  const cwd = tempDir();
  const scripts = join(checkoutIn(cwd), "scripts", "training");
  mkdirSync(scripts, { recursive: true });
  copyFileSync(join(fixtures, "bridge", "scripts", "training", "run_recipe.py"), join(scripts, "run_recipe.py"));
  return cwd;
}

/** The environment of a run whose `uv` starts the fake torchrun over fake torch and Megatron-Core. */
const torchrunEnv = (extra: Record<string, string | undefined> = {}) =>
  baseEnv({ FAKE_UV_TORCHRUN: "1", PYTHONPATH: [join(fixtures, "python-torch"), join(fixtures, "python")].join(delimiter), ...extra });

describe("smoke-run: a passing run (fake torchrun, 4 ranks, the real probe and its key)", () => {
  const cwd = bridgeCheckout();
  const record = join(cwd, "uv-record.json");
  const summary = join(cwd, "step-summary.md");
  writeFileSync(summary, "## earlier step\n");
  let run: Promise<Run>;
  beforeAll(() => {
    run = hcpBot(["smoke-run", "--recipe", RECIPE, "--nproc", "4", "--gpu", "H100", "--", ...HCP_OVERRIDES], {
      cwd,
      env: torchrunEnv({
        FAKE_UV_RECORD: record,
        GITHUB_STEP_SUMMARY: summary,
        HCP_REQUEST_ID: "req-123",
        TORCH_DISTRIBUTED_DEBUG: "DETAIL",
        TORCH_CPP_LOG_LEVEL: "WARNING",
        HCP_PROBE_KEY: "f".repeat(64), // a key from the runner's environment is not the run's
      }),
    });
  });

  it("runs exactly the seed's command, user overrides, then the harness overrides", async () => {
    await run;
    const rec = readJson<Recorded>(record);
    // torch's own launcher, isolated (python -I -S), from the probe dir: never `-m torch.distributed.run`.
    expect(rec.argv).toEqual([
      "run",
      "python",
      "-u",
      "-I",
      "-S",
      join(dirname(rec.probe.dir), "launch.py"),
      "--nproc_per_node=4",
      "scripts/training/run_recipe.py",
      "--recipe",
      RECIPE,
      ...HCP_OVERRIDES,
      ...defaults(4),
      ...fixed(),
    ]);
    expect(rec.cwd).toBe(join(cwd, "checkout"));
  });

  it("makes HCP observable: INFO C++ logs, unbuffered Python, the probe first on PYTHONPATH, DETAIL removed, no key and no key file in the environment", async () => {
    const r = await run;
    const rec = readJson<Recorded>(record);
    expect(rec.env.TORCH_CPP_LOG_LEVEL).toBe("INFO");
    expect(rec.env.PYTHONUNBUFFERED).toBe("1");
    expect(rec.env.TORCH_DISTRIBUTED_DEBUG).toBeNull();
    expect(rec.env.PYTHONPATH).toBe([rec.probe.dir, join(fixtures, "python-torch"), join(fixtures, "python")].join(delimiter));
    expect(rec.probe.sitecustomize).toBe(true);
    expect(rec.probe.dir).toMatch(/hcp-bot-probe-/);
    // uv's environment holds no key and names no key file (its /proc/PID/environ is readable):
    // only the descriptor the ranks read their key line from.
    expect(rec.env.HCP_PROBE_KEY).toBeNull();
    expect(rec.env.HCP_PROBE_KEY_FILE).toBeNull();
    expect(rec.env.HCP_PROBE_KEY_FD).toBe("0");
    expect(existsSync(rec.probe.dir)).toBe(false); // cleaned up afterwards
    expect(r.stderr).toMatch(/TORCH_DISTRIBUTED_DEBUG=DETAIL removed: .*HCP group names/);
    expect(r.stderr).toMatch(/TORCH_CPP_LOG_LEVEL=WARNING replaced by INFO/);
    expect(r.stderr).toMatch(/HCP_PROBE_KEY removed from the environment/);
    expect(r.stderr).not.toMatch(/\[hcp-bot (probe|launcher)\]/);
  });

  it("tees the merged output: the log file is what our stdout carried live, one signed report per rank on its own line", async () => {
    const r = await run;
    const log = readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8");
    // The report commitment comes first, before anything of the run; then the log, live.
    const [first, ...rest] = r.stdout.split("\n");
    expect(first).toMatch(/^hcp-bot smoke-run: report commitment sha256:[0-9a-f]{64}$/);
    expect(rest.join("\n").startsWith(log)).toBe(true);
    const reports = log.split("\n").filter((l) => l.includes("HCP-PROBE"));
    expect(reports).toHaveLength(4);
    expect(reports.every((l) => /^HCP-PROBE \{"v":2,.*,"mac":"[0-9a-f]{64}"\}$/.test(l))).toBe(true);
  });

  it("writes a passing verdict.json with the run's key (which verifies every report), run.json, the step summary, the key line and a one-line verdict; exits 0", async () => {
    const r = await run;
    expect(r.code).toBe(0);
    const v = verdictIn(cwd);
    expect(v.status).toBe("pass");
    expect(v.hcp).toMatchObject({ active: true, levels: [0, 1], levelSizes: [2, 2], probeReports: 4, ranksReported: [0, 1, 2, 3], untrustedReports: 0 });
    expect(v.iterations.count).toBe(2);
    expect(v.exitCode).toBe(0);
    expect(v.throughput.gpu).toBe("H100");
    const { probeKey, worldSize } = readJson<{ probeKey: string; worldSize: number }>(join(cwd, "hcp-smoke-out", "verdict.json"));
    expect(probeKey).toMatch(/^[0-9a-f]{64}$/);
    expect(probeKey).not.toBe("f".repeat(64));
    expect(worldSize).toBe(4);
    const log = readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8");
    const reports = log.split("\n").flatMap((l) => parseProbeReports(l)).filter((p) => p.ok);
    expect(reports.map((p) => verifyProbeMac(p.ok ? p.json : "", probeKey))).toEqual([true, true, true, true]);
    // The bot's way: the same log and the revealed key give the same verdict.
    expect(verdictOf(log, { expectHcp: true, probeKey, worldSize, ...requestedLayout(HCP_OVERRIDES) }, 0).status).toBe("pass");
    const runJson = readJson<{ argv: string[]; env: Record<string, string>; unset: string[]; request: { requestId: string } }>(join(cwd, "hcp-smoke-out", "run.json"));
    expect(runJson.argv[0]).toBe("uv");
    expect(runJson.env.TORCH_CPP_LOG_LEVEL).toBe("INFO");
    expect(runJson.unset).toEqual(["HCP_PROBE_KEY", "TORCH_DISTRIBUTED_DEBUG"]);
    expect(runJson.request.requestId).toBe("req-123");
    const md = readFileSync(summary, "utf8");
    expect(md.startsWith("## earlier step\n")).toBe(true); // appended, not replaced
    expect(md).toContain("## hcp-bot smoke: PASS");
    expect(md).toContain("`req-123`");
    expect(md).toContain("HCP smoke run: PASS"); // the core Markdown renderer's verdict
    expect(r.stdout).toContain("HCP smoke verdict: PASS (exit 0)"); // and its text verdict in the job log
    expect(r.stdout).toContain(`hcp-bot smoke: probe key ${probeKey} (revealed after the run exited;`);
    const last = r.stdout.trimEnd().split("\n").at(-1)!;
    expect(last).toMatch(/^hcp-bot smoke: PASS llama32_1b_pretrain_config: 2 iterations, last lm loss 1\.234567E\+01; HCP active/);
  });
});

describe("smoke-run: runs that did something else do not pass", () => {
  it("a hostile run_recipe that trains flat and prints a passing run's lines, signed with any key it can find, fails: it finds none", async () => {
    const cwd = bridgeCheckout();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--nproc", "4", "--", ...HCP_OVERRIDES], { cwd, env: torchrunEnv({ FAKE_TRAIN_ATTACK: "forge" }) });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("run_recipe: attack found a key: False");
    const v = verdictIn(cwd);
    expect(v.hcp.untrustedReports).toBe(4); // the forged ones: listed, never evidence
    expect(v.hcp.probeReports).toBe(4); // the probe's own, signed: levels null
    expect(v.hcp.active).toBe(false);
    expect(v.status).toBe("hcp-inactive");
    expect(v.cause?.message).toContain("authenticated HCP probe of rank");
  });

  it("a real signed log of another run (CP=4 [2, 2], its own key) replayed with training lines is untrusted here: never a pass", async () => {
    const cwd = tempDir();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--nproc", "4", "--", ...HCP_OVERRIDES], {
      cwd,
      env: baseEnv({ FAKE_UV_REPLAY: join(root, "fixtures", "logs", "real-probe", "s1_gloo_cp4_hcp2x2.v2.log"), FAKE_UV_ITERATIONS: "2" }),
    });
    expect(r.code).toBe(1);
    const v = verdictIn(cwd);
    expect(v).toMatchObject({ status: "inconclusive", cause: { kind: "hcp-unverified" }, hcp: { probeReports: 0, untrustedReports: 4 } });
  });

  it("the mismatched replay (a CP=2 [2, 1] log against a CP=4 [2, 2] request) does not pass, and the log is exactly what was streamed", async () => {
    const cwd = tempDir();
    const copy = join(cwd, "uv-stdout.txt");
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--nproc", "2", "--", ...HCP_OVERRIDES], {
      cwd,
      env: baseEnv({ FAKE_UV_REPLAY: logs("a_nccl_cp2_hcp2x1.log"), FAKE_UV_CHUNK: "777", FAKE_UV_ITERATIONS: "2", FAKE_UV_COPY: copy }),
    });
    expect(r.code).toBe(1);
    const log = readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8");
    expect(log).toBe(readFileSync(copy, "utf8"));
    expect(log.startsWith(readFileSync(logs("a_nccl_cp2_hcp2x1.log"), "utf8"))).toBe(true);
    const v = verdictIn(cwd);
    expect(v.status).not.toBe("pass");
    expect(v.hcp.levelSizes).toEqual([2, 1]);
    // The log answers another request (CP=2, not 4): that outranks its degenerate layout.
    expect(v.cause).toMatchObject({ kind: "config-mismatch" });
  });
});

describe.concurrent("smoke-run: a failing replay", () => {
  it("rank 1 raising after init: verdict fail with the Python exception, exit 1", async () => {
    const cwd = tempDir();
    const summary = join(cwd, "summary.md");
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--nproc", "2"], {
      cwd,
      env: baseEnv({ FAKE_UV_REPLAY: logs("g_nccl_cp2_hcp2x1_fail_rank1.log"), FAKE_UV_EXIT: "1", GITHUB_STEP_SUMMARY: summary }),
    });
    expect(r.code).toBe(1);
    const v = verdictIn(cwd);
    expect(v.status).toBe("fail");
    expect(v.exitCode).toBe(1);
    expect(v.cause?.kind).toBe("python-exception");
    expect(v.cause?.message).toContain("injected failure on rank 1");
    expect(readFileSync(summary, "utf8")).toContain("## hcp-bot smoke: FAIL");
    expect(r.stdout.trimEnd().split("\n").at(-1)).toMatch(/^hcp-bot smoke: FAIL .*python-exception/);
    expect(readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8")).toBe(readFileSync(logs("g_nccl_cp2_hcp2x1_fail_rank1.log"), "utf8"));
  });

  it("a flat-CP run that trained is not a pass when HCP is expected, and passes with --no-expect-hcp", async () => {
    const env = { FAKE_UV_REPLAY: logs("c_nccl_cp2_flat.log"), FAKE_UV_ITERATIONS: "2" };
    const cwd = tempDir();
    const strict = await hcpBot(["smoke-run", "--recipe", RECIPE], { cwd, env: baseEnv(env) });
    expect(strict.code).toBe(1);
    expect(verdictIn(cwd).status).toBe("hcp-inactive");
    const cwd2 = tempDir();
    const lax = await hcpBot(["smoke-run", "--recipe", RECIPE, "--no-expect-hcp"], { cwd: cwd2, env: baseEnv(env) });
    expect(lax.code).toBe(0);
    expect(verdictIn(cwd2).status).toBe("pass");
  });

  it("stderr of the run is merged into the log", async () => {
    const cwd = tempDir();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE], {
      cwd,
      env: baseEnv({ FAKE_UV_STDERR: "[rank0]: warning on stderr\n", FAKE_UV_REPLAY: logs("m_oom_default.log"), FAKE_UV_EXIT: "1" }),
    });
    expect(r.code).toBe(1);
    const log = readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8");
    // One write on stderr arrives whole, wherever the two pipes interleave.
    expect(log).toContain("[rank0]: warning on stderr\n");
    expect(log.replace("[rank0]: warning on stderr\n", "")).toBe(readFileSync(logs("m_oom_default.log"), "utf8"));
    expect(verdictIn(cwd).cause?.kind).toBe("cuda-oom");
  });

  it("uv missing from PATH: a clear message, a failing verdict, exit 1", async () => {
    const cwd = tempDir();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE], { cwd, env: baseEnv({ PATH: "/nonexistent" }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/could not start the run: uv is not on PATH: install uv on the runner, or set smoke.launcher: python/);
    expect(verdictIn(cwd).status).toBe("fail");
    // The log the bot reads says it too.
    expect(readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8")).toMatch(/uv is not on PATH/);
  });
});

describe("smoke-run: a probe outside torchrun", () => {
  it("reports the groups from a (fake) Megatron-Core through the real python3, but gets no key: its report is untrusted and the run does not pass", async () => {
    const cwd = tempDir();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--", ...HCP_OVERRIDES], {
      cwd,
      env: baseEnv({ FAKE_UV_PYTHON: join(fixtures, "python", "train.py"), PYTHONPATH: join(fixtures, "python"), RANK: "0", WORLD_SIZE: "4" }),
    });
    expect(r.stderr).not.toContain("[hcp-bot probe]");
    expect(r.stdout).toMatch(/^HCP-PROBE \{"v":2,"rank":0,"world_size":4,"hcp_sizes":\[2,2\],"cp_size":4,"levels":\[.*"pid":\d+\}$/m);
    expect(r.code).toBe(1);
    const v = verdictIn(cwd);
    expect(v.status).toBe("inconclusive");
    expect(v.hcp).toMatchObject({ probeReports: 0, untrustedReports: 1 });
  });
});

// One at a time: each run polls /proc and stops a process tree; side by side on a loaded
// machine they starve each other past their time limits.
describe("smoke-run: stopping the whole process tree", () => {
  const hangEnv = (cwd: string) =>
    baseEnv({
      FAKE_UV_GRANDCHILD: join(cwd, "grandchild.pid"),
      FAKE_UV_RECORD: join(cwd, "uv-record.json"),
      FAKE_UV_REPLAY: logs("a_nccl_cp2_hcp2x1.log"),
      FAKE_UV_IGNORE_TERM: "1",
      FAKE_UV_TERM_TRACEBACK: "1",
      FAKE_UV_HANG: "1",
    });

  it("the time limit sends SIGTERM then SIGKILL to the group: uv and its grandchild are gone", async () => {
    const cwd = tempDir();
    const started = Date.now();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--timeout", "1500ms", "--grace", "500ms"], { cwd, env: hangEnv(cwd) });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/time limit of 1500ms reached: stopping the whole process group/);
    const grandchild = Number(readFileSync(join(cwd, "grandchild.pid"), "utf8"));
    const uv = readJson<Recorded>(join(cwd, "uv-record.json")).pid;
    await waitFor(() => (processAlive(grandchild) || processAlive(uv) ? undefined : true), PATIENCE_MS, "the tree to die");
    const v = verdictIn(cwd);
    expect(v.timedOut).toBe(true);
    expect(v.cause?.kind).toBe("timeout");
    expect(v.status).toBe("fail");
    // torchrun's traceback about the SIGTERM is listed, not taken for the cause.
    expect(v.otherFailures.some((f) => /SignalException: Process \d+ got signal: 15/.test(f.message))).toBe(true);
    // What arrived before the kill is still in the log.
    expect(readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8")).toMatch(/^[^]*got signal: 15\n$/);
    expect(readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8").startsWith(readFileSync(logs("a_nccl_cp2_hcp2x1.log"), "utf8"))).toBe(true);
  });

  it("a slow run cut by the time limit mid-log keeps what arrived, and its verdict says timeout", async () => {
    const cwd = tempDir();
    const fixture = readFileSync(logs("a_nccl_cp2_hcp2x1.log"), "utf8");
    // 72 KB in 1 KB chunks 50 ms apart: about 3.5 s of output, cut after 1 s.
    const env = baseEnv({ FAKE_UV_REPLAY: logs("a_nccl_cp2_hcp2x1.log"), FAKE_UV_CHUNK: "1024", FAKE_UV_DELAY_MS: "50", FAKE_UV_TERM_TRACEBACK: "1" });
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--timeout", "1s", "--grace", "500ms"], { cwd, env });
    expect(r.code).toBe(1);
    const log = readFileSync(join(cwd, "hcp-smoke-out", "smoke.log"), "utf8");
    const replayed = log.slice(0, log.indexOf("W1130 05:40:00"));
    expect(replayed.length).toBeGreaterThan(1024);
    expect(replayed.length).toBeLessThan(fixture.length);
    expect(fixture.startsWith(replayed)).toBe(true);
    const v = verdictIn(cwd);
    expect(v.cause?.kind).toBe("timeout");
    expect(v.stats.bytes).toBe(Buffer.byteLength(log));
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} to smoke-run (a workflow cancel) stops the tree and still writes the verdict`, async () => {
      const cwd = tempDir();
      const { child, done } = startHcpBot(["smoke-run", "--recipe", RECIPE, "--timeout", "5m", "--grace", "500ms"], { cwd, env: hangEnv(cwd) });
      const grandchild = await waitFor(() => {
        const text = readIf(join(cwd, "grandchild.pid"));
        return text ? Number(text) : undefined;
      });
      await waitFor(() => (readIf(join(cwd, "hcp-smoke-out", "smoke.log"))?.length ? true : undefined), PATIENCE_MS, "the log to start");
      expect(processAlive(grandchild)).toBe(true);
      child.kill(signal);
      const r = await done;
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${signal} received: stopping the whole process group`);
      const uv = readJson<Recorded>(join(cwd, "uv-record.json")).pid;
      await waitFor(() => (processAlive(grandchild) || processAlive(uv) ? undefined : true), PATIENCE_MS, "the tree to die");
      const v = verdictIn(cwd);
      expect(v.status).toBe("fail");
      expect(v.timedOut).toBe(false);
      expect(v.signal).toBe("SIGKILL"); // uv ignored SIGTERM, so the grace period ran out
      expect(v.cause?.message).toBe(`cancelled: the harness received ${signal} and stopped the run`);
      expect(v.otherFailures.some((f) => /SignalException/.test(f.message))).toBe(true);
    });
  }

  it("a grandchild left behind after uv exits does not keep the run open", async () => {
    const cwd = tempDir();
    const started = Date.now();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--no-expect-hcp", "--grace", "500ms"], {
      cwd,
      env: baseEnv({ FAKE_UV_GRANDCHILD: join(cwd, "grandchild.pid"), FAKE_UV_REPLAY: logs("a_nccl_cp2_hcp2x1.log"), FAKE_UV_ITERATIONS: "2" }),
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/uv exited but processes of its group remain: stopping them/);
    const grandchild = Number(readFileSync(join(cwd, "grandchild.pid"), "utf8"));
    await waitFor(() => (processAlive(grandchild) ? undefined : true), PATIENCE_MS, "the grandchild to die");
  });
});

// One at a time: each run polls /proc and stops a process tree; side by side on a loaded
// machine they starve each other past their time limits.
describe("smoke-run: nothing of the run outlives it, and its files carry the runner's hashes", () => {
  const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
  /** The hashes smoke-run printed in its report (the job log). */
  const reported = (stdout: string) =>
    Object.fromEntries([...stdout.matchAll(/^hcp-bot smoke-run: sha256 (smoke\.log|verdict\.json) ([0-9a-f]{64}) \d+$/gm)].map((m) => [m[1]!, m[2]!]));

  for (const cleanEnv of [false, true]) {
    it(`a setsid child${cleanEnv ? " with an empty environment" : ""} that rewrites smoke.log and verdict.json after the run is killed first`, async () => {
      const cwd = tempDir();
      const out = join(cwd, "hcp-smoke-out");
      const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--grace", "500ms"], {
        cwd,
        env: baseEnv({
          FAKE_UV_REPLAY: logs("m_oom_default.log"),
          FAKE_UV_EXIT: "1",
          FAKE_UV_REWRITE: "2500",
          FAKE_UV_REWRITE_PID: join(cwd, "forger.pid"),
          ...(cleanEnv ? { FAKE_UV_REWRITE_CLEAN_ENV: "1" } : {}),
        }),
      });
      expect(r.code).toBe(1);
      const log = readFileSync(join(out, "smoke.log"), "utf8");
      const verdict = readFileSync(join(out, "verdict.json"), "utf8");
      const forger = Number(readFileSync(join(cwd, "forger.pid"), "utf8"));
      await new Promise((resolve) => setTimeout(resolve, 3500)); // past the forger's moment
      expect(processAlive(forger)).toBe(false);
      expect(readFileSync(join(out, "smoke.log"), "utf8")).toBe(log);
      expect(readFileSync(join(out, "verdict.json"), "utf8")).toBe(verdict);
      expect(JSON.parse(verdict).status).toBe("fail");
      expect(reported(r.stdout)).toEqual({ "smoke.log": sha256(join(out, "smoke.log")), "verdict.json": sha256(join(out, "verdict.json")) });
    });
  }

  it("hashes the bytes it wrote, so a file changed while the run went on no longer matches the report", async () => {
    const cwd = tempDir();
    const out = join(cwd, "hcp-smoke-out");
    // The code under test overwrites the start of smoke.log behind the runner's back (a flat
    // replay, so the run passes without signed probe reports).
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--no-expect-hcp"], {
      cwd,
      env: baseEnv({ FAKE_UV_REPLAY: logs("a_nccl_cp2_hcp2x1.log"), FAKE_UV_ITERATIONS: "2", FAKE_UV_TAMPER: join(out, "smoke.log") }),
    });
    expect(r.code).toBe(0);
    const hashes = reported(r.stdout);
    expect(hashes["verdict.json"]).toBe(sha256(join(out, "verdict.json")));
    expect(readFileSync(join(out, "smoke.log"), "utf8").startsWith("FORGED")).toBe(true);
    expect(hashes["smoke.log"]).not.toBe(sha256(join(out, "smoke.log")));
  });

  it("refuses outputs inside the checkout (exit 2), where the code under test could rewrite them", async () => {
    const cwd = tempDir();
    const checkout = join(cwd, "checkout");
    for (const args of [["--out", "hcp-smoke-out"], ["--out", join(checkout, "sub")], ["--out", join(cwd, "elsewhere"), "--log", "smoke.log"]]) {
      const r = await hcpBot(["smoke-run", "--recipe", RECIPE, ...args], { cwd, env: baseEnv() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is inside the checkout/);
    }
  });
});

describe("smoke-run: refusing bad input (exit 2, nothing runs)", () => {
  it("through the real binary: exit 2, the reason, no run, no output folder", async () => {
    const cwd = tempDir();
    const record = join(cwd, "uv-record.json");
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--", "model.x=$(id)", "checkpoint.save=/data"], { cwd, env: baseEnv({ FAKE_UV_RECORD: record }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^hcp-bot smoke-run: invalid override:\n  - override 1: "model\.x=\$\(id\)": the value may contain only/);
    expect(existsSync(record)).toBe(false);
    expect(existsSync(join(cwd, "hcp-smoke-out"))).toBe(false);
  });

  // The same command in-process (nothing is spawned when the input is refused).
  async function refused(args: string[], extraEnv: Record<string, string> = {}) {
    const cwd = tempDir();
    let stderr = "";
    const live = new PassThrough();
    const code = await smokeRun(args, { out: () => {}, err: (t) => (stderr += t), live, env: baseEnv(extraEnv), cwd });
    expect(code).toBe(2);
    expect(existsSync(join(cwd, "hcp-smoke-out"))).toBe(false);
    return stderr;
  }

  it.each([
    ["model.x=$(id)", /the value may contain only letters/],
    ["model.x=`id`", /the value may contain only/],
    ["model.x=a;b", /the value may contain only/],
    ["model.x=a b", /the value may contain only/],
    ["model.x='a'", /the value may contain only/],
    ["model.x=a\nb", /the value may contain only/],
    ["model.x=a|b", /the value may contain only/],
    ["model.x=a&b", /the value may contain only/],
    ["model.x=<a>", /the value may contain only/],
    ["--save_dir=/tmp", /is a flag; only KEY=VALUE/],
    ["model x=1", /expected KEY=VALUE/],
    ["model.context_parallel_size", /expected KEY=VALUE/],
    ["1model=2", /expected KEY=VALUE/],
    [`model.x=${"9".repeat(300)}`, /at most/],
  ])("refuses the override %j", async (override, message) => {
    const stderr = await refused(["--recipe", RECIPE, "--", override]);
    expect(stderr).toMatch(message);
    expect(stderr).toContain("hcp-bot smoke-run --help");
  });

  it.each([
    ["checkpoint.save=/data/ckpt", "checkpoint.save"],
    ["checkpoint.load=/old/run", "checkpoint.load"],
    ["++logger.log_interval=10", "logger.log_interval"],
    ["~validation.eval_iters", "validation.eval_iters"],
    ["checkpoint={save:x}", "checkpoint.save"],
    ["train.train_iters=100", "train.train_iters"],
    ["+checkpoint.save=null", "checkpoint.save"],
    ["checkpoint.pretrained_checkpoint=/data/llama", "checkpoint"],
    ["~checkpoint", "checkpoint.save"],
  ])("protects the harness setting touched by %j", async (override, key) => {
    const stderr = await refused(["--recipe", RECIPE, "--", "model.context_parallel_size=4", override]);
    expect(stderr).toContain(`${JSON.stringify(override)} touches ${key}; the smoke harness `);
  });

  it("every fixed harness setting is protected", () => {
    expect([...HARNESS_KEYS].sort()).toEqual(fixed().map((h) => h.slice(0, h.indexOf("="))).sort());
  });

  it.each([
    [["--nproc", "4"], /--recipe NAME is required/],
    [["--recipe", "a;b"], /--recipe must be a Python identifier/],
    [["--recipe", RECIPE, "--nproc", "0"], /--nproc must be at least 1/],
    [["--recipe", RECIPE, "--iters", "x"], /--iters must be a number/],
    [["--recipe", RECIPE, "--timeout", "soon"], /--timeout must be a duration/],
    [["--recipe", RECIPE, "--expect-hcp", "--no-expect-hcp"], /exclusive/],
    [["--recipe", RECIPE, "--bogus"], /Unknown option '--bogus'/],
  ])("refuses the arguments %j", async (args, message) => {
    expect(await refused(args)).toMatch(message);
  });

  it.each([
    ["not json", /is not JSON/],
    ['{"a":1}', /must be a JSON array of strings/],
    ["[1,2]", /must be a JSON array of strings/],
    ['["model.x=$(reboot)"]', /the value may contain only/],
    ['["checkpoint.load=/old"]', /touches checkpoint\.load/],
  ])("refuses --overrides-env holding %j", async (value, message) => {
    expect(await refused(["--recipe", RECIPE, "--overrides-env", "HCP_OVERRIDES"], { HCP_OVERRIDES: value })).toMatch(message);
  });

  it("refuses an unset --overrides-env variable", async () => {
    expect(await refused(["--recipe", RECIPE, "--overrides-env", "HCP_NOT_SET"])).toMatch(/HCP_NOT_SET is not set/);
  });
});

describe("smoke-run --dry-run", () => {
  it("prints the argv and environment changes as JSON: --overrides-env first, then positional overrides, harness defaults, fixed harness; runs nothing", async () => {
    const cwd = tempDir();
    const record = join(cwd, "uv-record.json");
    const r = await hcpBot(
      ["smoke-run", "--recipe", RECIPE, "--nproc", "8", "--iters", "3", "--overrides-env", "HCP_OVERRIDES", "--dry-run", "--", "+model.extra=1", "train.global_batch_size=16", "checkpoint.save=null", "logger.log_interval=1"],
      { cwd, env: baseEnv({ FAKE_UV_RECORD: record, HCP_OVERRIDES: JSON.stringify(HCP_OVERRIDES), TORCH_DISTRIBUTED_DEBUG: "DETAIL" }) },
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { argv: string[]; env: Record<string, string>; unset: string[]; notices: string[] };
    expect(out.argv).toEqual([
      "uv",
      "run",
      "python",
      "-u",
      "-I",
      "-S",
      "<probe-dir>/launch.py",
      "--nproc_per_node=8",
      "scripts/training/run_recipe.py",
      "--recipe",
      RECIPE,
      ...HCP_OVERRIDES,
      "+model.extra=1",
      "train.global_batch_size=16", // the user's, so no harness default for it
      "train.micro_batch_size=1",
      ...fixed(3), // the user's exact repeats of these were dropped: each key once
    ]);
    expect(out.env).toEqual({ TORCH_CPP_LOG_LEVEL: "INFO", PYTHONUNBUFFERED: "1", PYTHONPATH: "<probe-dir>/python", HCP_PROBE_KEY_FD: "0" });
    expect(out.unset).toEqual(["TORCH_DISTRIBUTED_DEBUG"]);
    expect(out.notices[0]).toBe("dropped overrides that repeat the harness settings: checkpoint.save=null logger.log_interval=1");
    expect(existsSync(record)).toBe(false);
    expect(existsSync(join(cwd, "hcp-smoke-out"))).toBe(false);
  });

  it("keeps TORCH_DISTRIBUTED_DEBUG=INFO (it does not hide group names) and accepts an empty overrides variable", async () => {
    const cwd = tempDir();
    const r = await hcpBot(["smoke-run", "--recipe", RECIPE, "--overrides-env", "HCP_OVERRIDES", "--dry-run"], {
      cwd,
      env: baseEnv({ HCP_OVERRIDES: "", TORCH_DISTRIBUTED_DEBUG: "INFO" }),
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { argv: string[]; unset: string[] };
    expect(out.unset).toEqual([]);
    expect(out.argv.slice(11)).toEqual([...defaults(4), ...fixed()]);
  });
});
