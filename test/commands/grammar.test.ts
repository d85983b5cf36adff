// The /hcp grammar, table-driven: what is accepted, what is refused, and that every
// refusal says what is allowed.
import { describe, expect, it } from "vitest";
import { parseCommentCommands, parseSlackCommand, type Command, type ParsedCommand } from "../../src/core/commands/index.ts";

function one(body: string, allowedKeys?: string[]): ParsedCommand {
  const all = parseCommentCommands(body, allowedKeys ? { allowedKeys } : {});
  expect(all).toHaveLength(1);
  return all[0]!;
}

function accepted(p: ParsedCommand): Command {
  if (!p.ok) throw new Error(`expected the command to be accepted, got: ${p.error}`);
  return p.command;
}

function refused(p: ParsedCommand): string {
  if (p.ok) throw new Error(`expected a refusal, got ${JSON.stringify(p.command)}`);
  return p.error;
}

describe("GitHub comment commands that are accepted", () => {
  const cases: [string, Command][] = [
    ["/hcp smoke", { kind: "smoke", overrides: [], dryRun: false }],
    ["/hcp", { kind: "help" }],
    ["/hcp help", { kind: "help" }],
    ["/HCP Smoke", { kind: "smoke", overrides: [], dryRun: false }],
    ["   /hcp status", { kind: "status" }],
    ["/hcp cancel   ", { kind: "cancel" }],
    ["/hcp\tsmoke\tcp=2\tsizes=2,1", { kind: "smoke", overrides: [], dryRun: false, cp: 2, sizes: [2, 1] }],
    ["/hcp check", { kind: "check", input: { form: "pr" } }],
    [
      "/hcp smoke recipe=llama3_8b_pretrain_config cp=8 sizes=[4,2] iters=3 gpus=8 --dry-run",
      { kind: "smoke", overrides: [], dryRun: true, recipe: "llama3_8b_pretrain_config", cp: 8, sizes: [4, 2], iters: 3, gpus: 8 },
    ],
    [
      "/hcp smoke model.context_parallel_size=8 model.hierarchical_context_parallel_sizes=[2,4] gpus=8",
      { kind: "smoke", overrides: [], dryRun: false, cp: 8, sizes: [2, 4], gpus: 8 },
    ],
    [
      "/hcp smoke model.cp_comm_type=p2p sizes=none",
      { kind: "smoke", overrides: [{ key: "model.cp_comm_type", text: "p2p", value: "p2p" }], dryRun: false, sizes: null },
    ],
    [
      "/hcp smoke model.hierarchical_context_parallel_sizes=null model.cp_comm_type=a2a",
      { kind: "smoke", overrides: [{ key: "model.cp_comm_type", text: "a2a", value: "a2a" }], dryRun: false, sizes: null },
    ],
    [
      "/hcp smoke model.sequence_parallel=true model.tensor_model_parallel_size=2 dist.use_decentralized_pg=false train.global_batch_size=16",
      {
        kind: "smoke",
        dryRun: false,
        overrides: [
          { key: "model.sequence_parallel", text: "true", value: true },
          { key: "model.tensor_model_parallel_size", text: "2", value: 2 },
          { key: "dist.use_decentralized_pg", text: "false", value: false },
          { key: "train.global_batch_size", text: "16", value: 16 },
        ],
      },
    ],
    [
      "/hcp smoke model.cp_comm_type=[a2a+p2p,p2p]",
      { kind: "smoke", dryRun: false, overrides: [{ key: "model.cp_comm_type", text: "[a2a+p2p,p2p]", value: ["a2a+p2p", "p2p"] }] },
    ],
    [
      "/hcp check model.context_parallel_size=4 model.cp_comm_type=a2a+p2p",
      {
        kind: "check",
        input: {
          form: "overrides",
          overrides: [
            { key: "model.context_parallel_size", text: "4", value: 4 },
            { key: "model.cp_comm_type", text: "a2a+p2p", value: "a2a+p2p" },
          ],
        },
      },
    ],
    [
      "/hcp check torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe x_config model.context_parallel_size=4",
      { kind: "check", input: { form: "launch", text: "torchrun --nproc_per_node=4 scripts/training/run_recipe.py --recipe x_config model.context_parallel_size=4" } },
    ],
    [
      "/hcp check `python run_recipe.py model.cp_comm_type=a2a+p2p`",
      { kind: "check", input: { form: "launch", text: "python run_recipe.py model.cp_comm_type=a2a+p2p" } },
    ],
  ];
  it.each(cases)("%s", (body, command) => {
    const p = one(body);
    expect(accepted(p)).toEqual(command);
    expect(p.line).toBe(1);
  });

  it("refuses reserved keys even when the repo config allows them, and their parents and children", () => {
    for (const key of ["train.train_iters", "checkpoint.save", "logger.log_interval.x", "logger.log_interval"]) {
      expect(refused(one(`/hcp smoke ${key}=1`, [key]))).toMatch(/is set by the smoke harness and cannot be overridden/);
    }
  });

  it("accepts the repo config's allowed_keys, without a type check", () => {
    const p = one("/hcp smoke model.recompute_granularity=selective", ["model.recompute_granularity"]);
    expect(accepted(p)).toMatchObject({ overrides: [{ key: "model.recompute_granularity", value: "selective" }] });
  });
});

describe("GitHub comment commands that are refused, with what is allowed", () => {
  const cases: [string, RegExp[]][] = [
    ["/hcp smok", [/`smok` is not an \/hcp command/, /\/hcp smoke, \/hcp cancel, \/hcp check, \/hcp status, \/hcp help/]],
    ["/hcp smoke cp=65", [/cp must be an integer from 1 to 64 \(got `65`\)/]],
    ["/hcp smoke cp=0", [/cp must be an integer from 1 to 64/]],
    ["/hcp smoke cp=-4", [/cp must be an integer from 1 to 64/]],
    ["/hcp smoke cp=4.0", [/cp must be an integer/]],
    ["/hcp smoke gpus=9", [/gpus must be an integer from 1 to 8 \(got `9`\)/]],
    ["/hcp smoke iters=51", [/iters must be an integer from 1 to 50/]],
    ["/hcp smoke iters=99999999999999999999", [/iters must be an integer from 1 to 50/]],
    ["/hcp smoke sizes=2", [/sizes must be two integers from 1 to 64 such as sizes=2,2/]],
    ["/hcp smoke sizes=2,2,2", [/sizes must be two integers/]],
    ["/hcp smoke sizes=0,4", [/sizes must be two integers from 1/]],
    ["/hcp smoke sizes=[2,2", [/sizes must be two integers/]],
    ["/hcp smoke cp=4 cp=2", [/cp is given twice/]],
    ["/hcp smoke cp=4 model.context_parallel_size=4", [/cp= and model.context_parallel_size= set the same setting; give it once/]],
    ["/hcp smoke sizes=2,2 model.hierarchical_context_parallel_sizes=[2,2]", [/set the same setting/]],
    ["/hcp smoke model.cp_comm_type=p2p model.cp_comm_type=a2a", [/model.cp_comm_type is given twice/]],
    ["/hcp smoke --dry-run --dry-run", [/--dry-run is given twice/]],
    ["/hcp smoke --force", [/`--force` is not a flag of \/hcp smoke \(the only flag is --dry-run\)/, /Usage: \/hcp smoke \[recipe=NAME\]/]],
    ["/hcp smoke model.foo=1", [/model.foo is not an allowed override key/, /Allowed override keys: model.context_parallel_size, .*train.global_batch_size\./]],
    ["/hcp smoke foo=1", [/`foo` is neither an option \(recipe, cp, sizes, iters, gpus, sha, compare\) nor an override key/]],
    ["/hcp smoke recipe", [/`recipe` is not NAME=VALUE/]],
    ["/hcp smoke recipe=../../etc/passwd", [/recipe must be a recipe function name/]],
    ["/hcp smoke recipe=a.b", [/recipe must be a recipe function name/]],
    ["/hcp smoke model.cp_comm_type=a2a+p2q", [/model.cp_comm_type must be one of p2p, all_gather, a2a, a2a\+p2p, or a per-layer list of them \(got "a2a\+p2q"\)/]],
    ["/hcp smoke model.sequence_parallel=yes", [/model.sequence_parallel must be true or false/]],
    ["/hcp smoke model.tensor_model_parallel_size=16", [/must be an integer from 1 to 8 \(got 16\)/]],
    ["/hcp smoke model.hierarchical_context_parallel_sizes=[2,2,2]", [/must be a list of two integers/]],
    ["/hcp smoke train.train_iters=1000", [/train.train_iters is set by the smoke harness and cannot be overridden/]],
    ["/hcp smoke checkpoint.load=/data/ckpt", [/is not allowed|set by the smoke harness/]],
    ["/hcp smoke checkpoint.load=null", [/checkpoint.load is set by the smoke harness/]],
    ["/hcp smoke validation.eval_interval=5", [/validation.eval_interval is set by the smoke harness/]],
    ["/hcp status now", [/`\/hcp status` takes no arguments on a pull request/]],
    ["/hcp cancel all", [/`\/hcp cancel` takes no arguments/]],
    ["/hcp help me", [/`\/hcp help` takes no arguments/]],
    ["/hcp smoke NVIDIA/Megatron-Bridge#12", [/on a pull request, \/hcp smoke runs on that pull request; leave out OWNER\/REPO#PR/]],
    ["/hcp check hello world", [/neither a launch line .* nor KEY=VALUE overrides/, /Keys the check reads: model.context_parallel_size/]],
    ["/hcp check model.nonsense=4", [/model.nonsense is not a setting the check reads/]],
  ];
  it.each(cases)("%s", (body, patterns) => {
    const error = refused(one(body));
    for (const re of patterns) expect(error).toMatch(re);
  });

  it("says the kind of a refused command, so the reply can be specific", () => {
    expect(one("/hcp smoke cp=99")).toMatchObject({ ok: false, kind: "smoke" });
  });

  it("lists every problem of one command (up to five), and the allowed keys once", () => {
    const error = refused(one("/hcp smoke cp=99 gpus=0 model.a=1 model.b=2"));
    expect(error).toMatch(/cp must be .*; gpus must be .*; model.a is not an allowed override key; model.b is not an allowed override key/);
    expect(error.match(/Allowed override keys/g)).toHaveLength(1);
    const many = refused(one(`/hcp smoke ${Array.from({ length: 8 }, (_, i) => `model.k${i}=1`).join(" ")}`));
    expect(many).toMatch(/and 3 more/);
  });
});

describe("shell metacharacters and hostile values never get through", () => {
  const hostile = [
    "model.cp_comm_type=a2a+p2p;rm",
    "model.cp_comm_type=$(id)",
    "model.cp_comm_type=`id`",
    "model.cp_comm_type=a|b",
    "model.cp_comm_type=a&b",
    "model.cp_comm_type=<x",
    "model.cp_comm_type=>x",
    'model.cp_comm_type="a2a+p2p"',
    "model.cp_comm_type='a2a+p2p'",
    "model.cp_comm_type=${oc.env:HOME}",
    "model.cp_comm_type=a\\b",
    "model.cp_comm_type=[2, 2]",
    "model.cp_comm_type=a=b",
    "model.cp_comm_type=~x",
    "+model.cp_comm_type=p2p",
    "~model.cp_comm_type",
    "model.cp_comm_type=",
  ];
  it.each(hostile)("%s", (word) => {
    const error = refused(one(`/hcp smoke ${word}`));
    expect(error.length).toBeGreaterThan(10);
  });

  it("names the offending character", () => {
    expect(refused(one("/hcp smoke model.cp_comm_type=a;b"))).toMatch(/the character `;` is not allowed; use a number, true, false, null, a name such as a2a\+p2p, or a list such as \[2,2\]/);
    expect(refused(one("/hcp smoke model.cp_comm_type=`id`"))).toMatch(/the character `backtick` is not allowed/);
  });

  it("shows unicode look-alikes by code point", () => {
    // Fullwidth digit four, Cyrillic small a, a zero-width space, a non-breaking space.
    expect(refused(one("/hcp smoke cp=\uFF14"))).toMatch(/U\+FF14 is not allowed \(plain ASCII only\)/);
    expect(refused(one("/hcp smoke model.cp_comm_type=\u0430\u0032a+p2p"))).toMatch(/U\+0430/);
    expect(refused(one("/hcp smoke cp=4\u200B"))).toMatch(/U\+200B/);
    expect(refused(one("/hcp smoke\u00A0cp=4"))).toMatch(/U\+00A0 is not allowed/);
  });

  it("ignores look-alike prefixes: they are not /hcp", () => {
    for (const body of ["/\u04BBcp smoke", "\uFF0Fhcp smoke", "/hcp\u200B smoke", "/hcpsmoke", "//hcp smoke", "hcp smoke"]) {
      expect(parseCommentCommands(body)).toEqual([]);
    }
  });

  it("never echoes raw control characters or backticks in an error", () => {
    const error = refused(one("/hcp smoke recipe=a`b\u0007c"));
    expect(error).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(error).toMatch(/`recipe=a\?b\?c`: the character U\+0007 is not allowed/);
  });

  it("refuses an over-long command without reading it", () => {
    const error = refused(one(`/hcp smoke ${"model.num_layers=2 ".repeat(100)}`));
    expect(error).toMatch(/at most 1000 are read/);
    expect(refused(one(`/hcp smoke ${"--dry-run ".repeat(41)}`))).toMatch(/at most 40 words/);
    expect(refused(one(`/hcp smoke model.cp_comm_type=[${Array(70).fill("1").join(",")}]`))).toMatch(/at most 64 items/);
    expect(refused(one(`/hcp smoke model.cp_comm_type=${"a".repeat(201)}`))).toMatch(/at most 200 are allowed/);
  });

  it("caps the raw text it keeps", () => {
    const p = one(`/hcp smoke ${"x".repeat(5000)}`);
    expect(p.raw.length).toBeLessThan(220);
  });
});

describe("Slack /hcp text", () => {
  const target = { owner: "NVIDIA-NeMo", repo: "Megatron-Bridge", pr: 1234 };
  const cases: [string, Command][] = [
    ["", { kind: "help" }],
    ["help", { kind: "help" }],
    ["smoke NVIDIA-NeMo/Megatron-Bridge#1234", { kind: "smoke", target, overrides: [], dryRun: false }],
    ["smoke NVIDIA-NeMo/Megatron-Bridge#1234 cp=8 sizes=4,2 gpus=8 --dry-run", { kind: "smoke", target, overrides: [], dryRun: true, cp: 8, sizes: [4, 2], gpus: 8 }],
    ["status NVIDIA-NeMo/Megatron-Bridge#1234", { kind: "status", target }],
    ["cancel NVIDIA-NeMo/Megatron-Bridge#1234", { kind: "cancel", target }],
    ["check model.context_parallel_size=2", { kind: "check", input: { form: "overrides", overrides: [{ key: "model.context_parallel_size", text: "2", value: 2 }] } }],
    [
      "check torchrun run_recipe.py model.cp_comm_type=a2a+p2p &amp;&amp; echo &gt; x",
      { kind: "check", input: { form: "launch", text: "torchrun run_recipe.py model.cp_comm_type=a2a+p2p && echo > x" } },
    ],
    ["check ```\ntorchrun run_recipe.py model.context_parallel_size=2\n```", { kind: "check", input: { form: "launch", text: "torchrun run_recipe.py model.context_parallel_size=2" } }],
  ];
  it.each(cases)("%s", (text, command) => {
    expect(accepted(parseSlackCommand(text))).toEqual(command);
  });

  const refusals: [string, RegExp][] = [
    ["smoke", /usage: \/hcp smoke OWNER\/REPO#PR \[recipe=NAME\]/],
    ["smoke cp=4", /the pull request must be written OWNER\/REPO#NUMBER, such as NVIDIA-NeMo\/Megatron-Bridge#1234/],
    ["smoke o/r#0", /OWNER\/REPO#NUMBER/],
    ["smoke o/..#3", /OWNER\/REPO#NUMBER/],
    ["smoke -o/r#3", /OWNER\/REPO#NUMBER/],
    ["status", /usage: \/hcp status OWNER\/REPO#PR/],
    ["status o/r#1 o/r#2", /usage: \/hcp status OWNER\/REPO#PR/],
    ["check", /give a launch line/],
    ["launch", /`launch` is not an \/hcp command. Commands: \/hcp smoke OWNER\/REPO#PR/],
    ["smoke o/r#1 model.cp_comm_type=a&amp;b", /the character `&` is not allowed/],
  ];
  it.each(refusals)("refuses %s", (text, re) => {
    expect(refused(parseSlackCommand(text))).toMatch(re);
  });
});
