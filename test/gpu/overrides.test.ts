// The runner's override grammar and harness composition, and that what the bot resolves for
// `/hcp smoke` (src/core/commands) goes through the runner unchanged.
import { describe, expect, it } from "vitest";
import { SmokeConfigSchema } from "../../src/core/config/repo-config.ts";
import { parseSlackCommand, resolveSmokeRequest } from "../../src/core/commands/index.ts";
import { buildArgv, buildEnv } from "../../src/gpu/command.ts";
import { composeOverrides, overridesFromEnv, OverrideError, parseOverrides } from "../../src/gpu/overrides.ts";
import { parseDuration } from "../../src/gpu/process.ts";
import { requestedLayout } from "../../src/core/verdict/index.ts";

describe("override grammar", () => {
  it.each([
    "model.context_parallel_size=4",
    "model.cp_comm_type=a2a+p2p",
    "model.cp_comm_type=[a2a+p2p,p2p]",
    "model.hierarchical_context_parallel_sizes=[2,2]",
    "model.hierarchical_context_parallel_sizes=null",
    "+dataset.offline_packing_specs.pad_seq_to_mult=16",
    "++tokenizer.hf_tokenizer_kwargs.revision=main",
    "~model.extra_field",
    "train.lr=1.0e-5",
    "dataset.path=/data/tokens_text_document",
    "model.hf_path=meta-llama/Llama-3.2-1B",
    "model.layers.0.size=1",
    "train.note=",
  ])("accepts %j", (text) => {
    expect(parseOverrides([text])[0]!.text).toBe(text);
  });

  it("splits prefix, key and value", () => {
    expect(parseOverrides(["++a.b=c=d", "~x.y"])).toEqual([
      { text: "++a.b=c=d", prefix: "++", key: "a.b", value: "c=d" },
      { text: "~x.y", prefix: "~", key: "x.y", value: null },
    ]);
  });

  it.each([
    ["model.x=a b", /value may contain only/],
    ['model.x="a"', /value may contain only/],
    ["model.x=${HOME}", /value may contain only/],
    ["model.x=choice(1,2)", /value may contain only/],
    ["model.x=a\\b", /value may contain only/],
    ["-m=1", /is a flag/],
    ["+++model.x=1", /expected KEY=VALUE/],
    ["model..x=1", /expected KEY=VALUE/],
    ["=1", /expected KEY=VALUE/],
    ["model.x", /only ~KEY may omit the value/],
    [`model.${"k".repeat(130)}=1`, /a key is at most 128 characters/],
  ])("refuses %j", (text, message) => {
    expect(() => parseOverrides([text])).toThrow(message);
  });

  it("caps the number of overrides", () => {
    expect(() => parseOverrides(Array.from({ length: 65 }, (_, i) => `model.k${i}=1`))).toThrow(/at most 64 overrides/);
  });

  it("names every bad override with its position", () => {
    try {
      parseOverrides(["model.ok=1", "model.x=$y", "bad"]);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(OverrideError);
      expect((error as Error).message).toMatch(/^invalid overrides:\n {2}- override 2: .*\n {2}- override 3: /);
    }
  });
});

describe("--overrides-env", () => {
  it("reads a JSON array of strings; empty means none", () => {
    expect(overridesFromEnv("V", { V: '["a.b=1","c.d=[2,2]"]' })).toEqual(["a.b=1", "c.d=[2,2]"]);
    expect(overridesFromEnv("V", { V: "  " })).toEqual([]);
    expect(overridesFromEnv("V", { V: "[]" })).toEqual([]);
  });

  it.each([
    ["V", {}, /V is not set/],
    ["V", { V: "a.b=1" }, /is not JSON/],
    ["V", { V: '"a.b=1"' }, /JSON array of strings/],
    ["V", { V: '[["a.b=1"]]' }, /JSON array of strings/],
    ["1BAD", { "1BAD": "[]" }, /not an environment variable name/],
  ])("refuses %s in %j", (name, env, message) => {
    expect(() => overridesFromEnv(name, env)).toThrow(message);
  });
});

describe("harness composition", () => {
  const settings = { iters: 2, nproc: 4 };

  it("user overrides first, then the defaults the user did not set, then the fixed settings", () => {
    const { overrides, duplicates } = composeOverrides(parseOverrides(["model.cp_comm_type=a2a+p2p", "train.micro_batch_size=2"]), settings);
    expect(overrides).toEqual([
      "model.cp_comm_type=a2a+p2p",
      "train.micro_batch_size=2",
      "train.global_batch_size=4",
      "logger.log_interval=1",
      "logger.log_throughput=true",
      "train.train_iters=2",
      "checkpoint.save=null",
      "checkpoint.load=null",
      "validation.eval_iters=0",
      "validation.eval_interval=0",
    ]);
    expect(duplicates).toEqual([]);
  });

  it("drops exact repeats of fixed settings (true/false/null in any case), refuses other values", () => {
    const { overrides, duplicates } = composeOverrides(parseOverrides(["checkpoint.save=NULL", "logger.log_throughput=True", "train.train_iters=2"]), settings);
    expect(duplicates).toEqual(["checkpoint.save=NULL", "logger.log_throughput=True", "train.train_iters=2"]);
    expect(new Set(overrides.map((o) => o.split("=")[0])).size).toBe(overrides.length);
    expect(() => composeOverrides(parseOverrides(["train.train_iters=3"]), settings)).toThrow(/touches train\.train_iters; the smoke harness sets train\.train_iters=2 itself \(use --iters\)/);
    expect(() => composeOverrides(parseOverrides(["checkpoint.async_save=true"]), settings)).toThrow(/the smoke harness owns checkpoint\.\*/);
    expect(() => composeOverrides(parseOverrides(["logger=null"]), settings)).toThrow(/touches logger\.log_interval/);
  });

  it("takes what the bot resolves for /hcp smoke unchanged: each key once, the same command", () => {
    const config = SmokeConfigSchema.parse({ iters: 3 });
    const parsed = parseSlackCommand("smoke o/r#1 cp=4 sizes=2,2 gpus=4 train.global_batch_size=8 model.tensor_model_parallel_size=1");
    expect(parsed.ok).toBe(true);
    if (!parsed.ok || parsed.command.kind !== "smoke") throw new Error("not a smoke command");
    const resolved = resolveSmokeRequest(parsed.command, config);
    if (!resolved.ok) throw new Error(resolved.error);
    const plan = resolved.plan;
    const user = parseOverrides(plan.overrides); // what the workflow's overrides input would carry
    const composed = composeOverrides(user, { iters: plan.iters, nproc: plan.gpus });
    const keys = composed.overrides.map((o) => o.slice(0, o.indexOf("=")));
    expect(new Set(keys).size).toBe(keys.length);
    const launched = buildArgv({ recipe: plan.recipe, nproc: plan.gpus, overrides: composed.overrides, launcherScript: "/probe/launch.py" });
    // The runner starts torch's launcher isolated, where the bot's plan says `-m torch.distributed.run`.
    expect(launched.slice(0, 7)).toEqual(["uv", "run", "python", "-u", "-I", "-S", "/probe/launch.py"]);
    expect(plan.argv.slice(0, 5)).toEqual(["uv", "run", "python", "-m", "torch.distributed.run"]);
    const runnerArgv = [...plan.argv.slice(0, 5), ...launched.slice(7)];
    // Same words, possibly in another order (the runner puts its fixed settings last).
    expect([...runnerArgv].sort()).toEqual([...new Set([...plan.argv, "validation.eval_interval=0"])].sort());
    expect(runnerArgv.slice(0, 9)).toEqual(plan.argv.slice(0, 9));
    expect(composed.overrides).toContain("train.global_batch_size=8");
    expect(requestedLayout(user.map((o) => o.text))).toEqual({ cpCommType: "a2a+p2p", contextParallelSize: 4, sizes: [2, 2] });
    expect(requestedLayout(plan.overrides)).toEqual({ cpCommType: "a2a+p2p", contextParallelSize: 4, sizes: [2, 2] });
    expect(requestedLayout(["model.cp_comm_type=p2p", "++model.cp_comm_type=a2a", "~model.context_parallel_size", "model.context_parallel_size=x"])).toEqual({ cpCommType: "a2a" });
  });
});

describe("environment", () => {
  it("adds the observability settings and keeps the rest of the parent environment", () => {
    const built = buildEnv({ PATH: "/bin", HF_HOME: "/hf", TORCH_DISTRIBUTED_DEBUG: "detail", PYTHONPATH: "/a" }, "/probe");
    expect(built.env).toEqual({ PATH: "/bin", HF_HOME: "/hf", PYTHONPATH: "/probe:/a", TORCH_CPP_LOG_LEVEL: "INFO", PYTHONUNBUFFERED: "1", HCP_PROBE_KEY_FD: "0" });
    expect(built.removed).toEqual(["TORCH_DISTRIBUTED_DEBUG"]);
    expect(buildEnv({}, "/probe").env.PYTHONPATH).toBe("/probe");
  });

  it("names the ranks' key descriptor, never a key or a key file; those in the runner's environment are removed", () => {
    const built = buildEnv({ PATH: "/bin", HCP_PROBE_KEY: "ab".repeat(32), HCP_PROBE_KEY_FILE: "/elsewhere" }, "/probe");
    expect(built.env.HCP_PROBE_KEY).toBeUndefined();
    expect(built.env.HCP_PROBE_KEY_FILE).toBeUndefined();
    expect(built.env.HCP_PROBE_KEY_FD).toBe("0");
    expect(built.removed).toEqual(["HCP_PROBE_KEY", "HCP_PROBE_KEY_FILE"]);
    expect(built.notices).toContain("HCP_PROBE_KEY removed from the environment: the probe signs only with the key this run makes");
  });
});

describe("durations", () => {
  it.each([
    ["30m", 1_800_000],
    ["90s", 90_000],
    ["1h30m", 5_400_000],
    ["500ms", 500],
    ["45", 2_700_000],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "m", "5 m", "1d", "-5m", "5m!"])("%j is not a duration", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
