// /hcp smoke + repo defaults -> the run, and the pre-flight: the launch line read back by
// the analyzer must carry exactly the requested settings.
import type { Language } from "web-tree-sitter";
import { beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { checkSource, helpText, parseCommentCommands, parseSlackCommand, resolveSmokeRequest, type SmokeCommand, type SmokePlan } from "../../src/core/commands/index.ts";
import { SmokeConfigSchema, type SmokeConfig } from "../../src/core/config/repo-config.ts";
import type { Known } from "../../src/core/model/settings.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";

let python: Language;
beforeAll(async () => {
  python = await loadPythonLanguage();
});

const DEFAULTS = SmokeConfigSchema.parse({});

function smoke(body: string, config: SmokeConfig = DEFAULTS): SmokeCommand {
  const [p] = parseCommentCommands(body, { allowedKeys: config.allowed_keys });
  if (!p?.ok || p.command.kind !== "smoke") throw new Error(`not a smoke command: ${JSON.stringify(p)}`);
  return p.command;
}

function plan(body: string, config: SmokeConfig = DEFAULTS): SmokePlan {
  const r = resolveSmokeRequest(smoke(body, config), config);
  if (!r.ok) throw new Error(r.error);
  return r.plan;
}

function refusal(body: string, config: SmokeConfig = DEFAULTS): string {
  const r = resolveSmokeRequest(smoke(body, config), config);
  if (r.ok) throw new Error(`expected a refusal, got ${r.plan.launchLine()}`);
  return r.error;
}

const HARNESS = [
  "train.train_iters=2",
  "train.global_batch_size=4",
  "train.micro_batch_size=1",
  "logger.log_interval=1",
  "logger.log_throughput=true",
  "checkpoint.save=null",
  "checkpoint.load=null",
  "validation.eval_iters=0",
  "validation.eval_interval=0",
];

describe("resolveSmokeRequest", () => {
  it("fills every default from the repo config", () => {
    const p = plan("/hcp smoke");
    expect(p).toMatchObject({ recipe: "llama32_1b_pretrain_config", cp: 4, cpCommType: "a2a+p2p", sizes: [2, 2], gpus: 4, iters: 2, expectHcp: true, dryRun: false, userOverrides: [] });
    expect(p.overrides).toEqual(["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]", ...HARNESS]);
    expect(p.launchLine()).toBe(
      'uv run python -m torch.distributed.run --nproc_per_node=4 scripts/training/run_recipe.py --recipe llama32_1b_pretrain_config model.context_parallel_size=4 model.cp_comm_type=a2a+p2p "model.hierarchical_context_parallel_sizes=[2,2]" ' +
        HARNESS.join(" "),
    );
    expect(p.argv.slice(0, 9)).toEqual(["uv", "run", "python", "-m", "torch.distributed.run", "--nproc_per_node=4", "scripts/training/run_recipe.py", "--recipe", "llama32_1b_pretrain_config"]);
    expect(p.argv.slice(9)).toEqual(p.overrides);
  });

  it("uses the repo's own defaults", () => {
    const config = SmokeConfigSchema.parse({ recipe: "qwen3_8b_pretrain_config", cp: 8, sizes: [4, 2], gpus: 8, iters: 5 });
    expect(plan("/hcp smoke", config)).toMatchObject({ recipe: "qwen3_8b_pretrain_config", cp: 8, sizes: [4, 2], gpus: 8, iters: 5 });
    expect(plan("/hcp smoke", config).overrides).toContain("train.global_batch_size=8");
  });

  it("puts the user's overrides last, replacing a harness default instead of repeating the key", () => {
    const p = plan("/hcp smoke model.tensor_model_parallel_size=1 train.global_batch_size=16 model.seq_length=4096 dataset.seq_length=4096");
    expect(p.overrides.slice(-4)).toEqual(["model.tensor_model_parallel_size=1", "train.global_batch_size=16", "model.seq_length=4096", "dataset.seq_length=4096"]);
    const keys = p.overrides.map((o) => o.slice(0, o.indexOf("=")));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("allows no sizes when cp_comm_type is not a2a+p2p, and sets them to null explicitly", () => {
    const p = plan("/hcp smoke cp=4 model.cp_comm_type=a2a");
    expect(p).toMatchObject({ sizes: null, expectHcp: false, cpCommType: "a2a" });
    expect(p.overrides.slice(0, 3)).toEqual(["model.context_parallel_size=4", "model.cp_comm_type=a2a", "model.hierarchical_context_parallel_sizes=null"]);
    expect(plan("/hcp smoke model.cp_comm_type=p2p sizes=none").sizes).toBeNull();
  });

  it("keeps a per-layer cp_comm_type list, quoted, and expects HCP when it holds a2a+p2p", () => {
    const p = plan("/hcp smoke model.cp_comm_type=[a2a+p2p,p2p] model.num_layers=2");
    expect(p.expectHcp).toBe(true);
    expect(p.launchLine()).toContain('"model.cp_comm_type=[a2a+p2p,p2p]"');
  });

  it("lets the repo's extra keys through and re-checks them against the repo config", () => {
    const config = SmokeConfigSchema.parse({ allowed_keys: ["model.recompute_granularity"] });
    expect(plan("/hcp smoke model.recompute_granularity=selective", config).overrides.at(-1)).toBe("model.recompute_granularity=selective");
    // Parsed under a config that allowed the key, resolved under one that no longer does.
    const cmd = smoke("/hcp smoke model.recompute_granularity=selective", config);
    const r = resolveSmokeRequest(cmd, DEFAULTS);
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/model.recompute_granularity is not an allowed override key; the repository's .github\/hcp-bot.yml decides/) });
  });

  const refusals: [string, RegExp][] = [
    ["/hcp smoke cp=8", /sizes=2,2 multiply to 4, but cp is 8; the product must equal cp \(e.g. sizes=4,2\)/],
    ["/hcp smoke cp=6 gpus=6", /multiply to 4, but cp is 6.*sizes=3,2/],
    ["/hcp smoke cp=1 sizes=1,1", /a2a\+p2p needs cp of at least 2/],
    ["/hcp smoke sizes=none", /a2a\+p2p needs hierarchical sizes: give sizes=A,B with A×B = cp \(for cp=4, e.g. sizes=2,2\)/],
    ["/hcp smoke model.cp_comm_type=p2p sizes=2,2", /sizes only apply with cp_comm_type a2a\+p2p; drop sizes or give sizes=none/],
    ["/hcp smoke cp=8 sizes=4,2", /gpus=4 is not a multiple of cp×tp×pp = 8×1×1 = 8; give gpus=8/],
    ["/hcp smoke model.tensor_model_parallel_size=2", /gpus=4 is not a multiple of cp×tp×pp = 4×2×1 = 8/],
    ["/hcp smoke cp=16 sizes=4,4 gpus=8", /not a multiple of cp×tp×pp = 16×1×1 = 16; give gpus=8 or smaller sizes/],
  ];
  it.each(refusals)("refuses %s", (body, re) => {
    expect(refusal(body)).toMatch(re);
  });

  it("refuses repo defaults outside the limits", () => {
    const config = SmokeConfigSchema.parse({ cp: 128 });
    expect(resolveSmokeRequest(smoke("/hcp smoke"), config)).toEqual({ ok: false, error: "cp must be from 1 to 64 (got 128)" });
  });

  it("resolves a Slack command the same way", () => {
    const p = parseSlackCommand("smoke o/r#7 cp=2 sizes=2,1 gpus=2 --dry-run");
    if (!p.ok || p.command.kind !== "smoke") throw new Error("not parsed");
    const r = resolveSmokeRequest(p.command, DEFAULTS);
    expect(r).toMatchObject({ ok: true, plan: { cp: 2, sizes: [2, 1], gpus: 2, dryRun: true } });
  });
});

/** The launch unit the analyzer reads from the plan's launch line, as plain values. */
function preflight(p: SmokePlan) {
  const report = analyze([{ path: "hcp-smoke.sh", text: `#!/bin/bash\n${p.launchLine()}\n` }], { python });
  expect(report.diagnostics).toEqual([]);
  expect(report.units).toHaveLength(1);
  const unit = report.units[0]!;
  const values: Record<string, Known> = {};
  for (const [key, s] of Object.entries(unit.settings)) {
    if (!s?.value.known) throw new Error(`${key} is unknown to the analyzer: ${JSON.stringify(s)}`);
    values[key] = s.value.value;
  }
  return { unit, values, findings: report.findings };
}

describe("the launch line round-trips through analyze()", () => {
  it("shows the pre-flight exactly the default request", () => {
    const { unit, values, findings } = preflight(plan("/hcp smoke"));
    expect(unit).toMatchObject({ kind: "launch", baseRecipe: "llama32_1b_pretrain_config", gpus: 4, mode: "pretrain" });
    expect(values).toEqual({ "model.context_parallel_size": 4, "model.cp_comm_type": "a2a+p2p", "model.hierarchical_context_parallel_sizes": [2, 2] });
    expect(findings.filter((f) => f.severity === "error")).toEqual([]);
  });

  const requests: [string, Record<string, Known>][] = [
    [
      "/hcp smoke cp=8 sizes=4,2 gpus=8 model.tensor_model_parallel_size=1 model.sequence_parallel=false",
      { "model.context_parallel_size": 8, "model.cp_comm_type": "a2a+p2p", "model.hierarchical_context_parallel_sizes": [4, 2], "model.tensor_model_parallel_size": 1, "model.sequence_parallel": false },
    ],
    [
      "/hcp smoke cp=2 model.cp_comm_type=p2p",
      { "model.context_parallel_size": 2, "model.cp_comm_type": "p2p", "model.hierarchical_context_parallel_sizes": null },
    ],
    [
      "/hcp smoke model.seq_length=16384 dataset.seq_length=16384 dist.use_decentralized_pg=false model.num_layers=4",
      {
        "model.context_parallel_size": 4,
        "model.cp_comm_type": "a2a+p2p",
        "model.hierarchical_context_parallel_sizes": [2, 2],
        "model.seq_length": 16384,
        "dataset.seq_length": 16384,
        "dist.use_decentralized_pg": false,
        "model.num_layers": 4,
      },
    ],
    [
      "/hcp smoke model.cp_comm_type=[a2a+p2p,a2a+p2p] model.num_layers=2",
      { "model.context_parallel_size": 4, "model.cp_comm_type": ["a2a+p2p", "a2a+p2p"], "model.hierarchical_context_parallel_sizes": [2, 2], "model.num_layers": 2 },
    ],
  ];
  it.each(requests)("%s", (body, expected) => {
    const p = plan(body);
    const { unit, values } = preflight(p);
    expect(values).toEqual(expected);
    expect(unit.gpus).toBe(p.gpus);
  });

  it("lets the pre-flight catch what the grammar leaves to the rules (decentralized PG rejects HCP)", () => {
    const { findings } = preflight(plan("/hcp smoke dist.use_decentralized_pg=true"));
    expect(findings.filter((f) => f.severity === "error").length).toBeGreaterThan(0);
  });
});

describe("/hcp check input for the analyzer", () => {
  it("turns overrides into a run_recipe line the analyzer reads", () => {
    const [p] = parseCommentCommands("/hcp check model.context_parallel_size=4 model.cp_comm_type=a2a+p2p");
    if (!p?.ok || p.command.kind !== "check") throw new Error("not parsed");
    const file = checkSource(p.command.input)!;
    const report = analyze([file], { python });
    expect(report.findings.map((f) => f.ruleId)).toContain("HCP001");
  });

  it("passes a launch line through, and has nothing for 'check this PR'", () => {
    expect(checkSource({ form: "launch", text: "torchrun run_recipe.py model.context_parallel_size=2" })).toEqual({ path: "hcp-check.sh", text: "torchrun run_recipe.py model.context_parallel_size=2\n" });
    expect(checkSource({ form: "pr" })).toBeUndefined();
  });
});

describe("helpText", () => {
  it("lists the commands, keys, defaults and limits", () => {
    const text = helpText();
    for (const s of ["/hcp smoke [recipe=NAME]", "/hcp cancel", "/hcp status", "/hcp check", "/hcp help", "model.hierarchical_context_parallel_sizes", "recipe=llama32_1b_pretrain_config cp=4 sizes=2,2 iters=2 gpus=4", "cp 1-64, gpus 1-8", "iters 1-50", "`checkpoint.*`", "10 smoke runs per person per day"]) {
      expect(text).toContain(s);
    }
  });

  it("shows the Slack forms and the repo's extra keys", () => {
    const text = helpText({ surface: "slack", smoke: SmokeConfigSchema.parse({ allowed_keys: ["model.recompute_granularity"], sizes: null, cp: 2 }) });
    expect(text).toContain("/hcp smoke OWNER/REPO#PR");
    expect(text).toContain("/hcp status OWNER/REPO#PR");
    expect(text).toContain("`model.recompute_granularity` (allowed by this repository)");
    expect(text).toContain("sizes=none");
    expect(text).not.toMatch(/^#|\*\*/m);
  });
});
