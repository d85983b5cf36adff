// `/hcp smoke` + the repo's smoke defaults -> the exact run: the Hydra overrides for
// run_recipe.py, an argv for execa, and a launch line the analyzer reads for the
// pre-flight check (so the settings checked are the settings run).
import { referenceOverrides, type CompareMode, type ReferenceMode } from "../ab/mode.ts";
import type { SmokeConfig } from "../config/repo-config.ts";
import type { SourceFile } from "../model/source.ts";
import { checkOverride, LIMITS } from "./grammar.ts";
import type { CheckInput, Override, OverrideValue, SmokeCommand } from "./types.ts";

export interface SmokePlan {
  recipe: string;
  cp: number;
  /** `a2a+p2p` unless the user set model.cp_comm_type (a per-layer list stays a list). */
  cpCommType: OverrideValue;
  /** null: hierarchical sizes are set to None (only when cp_comm_type is not a2a+p2p). */
  sizes: [number, number] | null;
  gpus: number;
  iters: number;
  dryRun: boolean;
  /** The user's KEY=VALUE overrides other than the CP ones, in the order given. */
  userOverrides: Override[];
  /** The final Hydra override list for run_recipe.py, no key twice. */
  overrides: string[];
  /** The run must show hierarchical CP groups to pass (cp_comm_type includes a2a+p2p). */
  expectHcp: boolean;
  /** Arguments for execa (never a shell string). */
  argv: readonly string[];
  /** The same command as one shell-safe line, for logs, replies and the analyzer. */
  launchLine(): string;
  /** `compare=`: none, or the reference layout run after the HCP leg in the same job. */
  compare: CompareMode;
  /** The reference leg (null without compare): the same run with only cp_comm_type and the sizes changed. */
  reference: ReferenceLeg | null;
}

export interface ReferenceLeg {
  cpCommType: ReferenceMode;
  overrides: string[];
  argv: readonly string[];
  launchLine(): string;
}

export type ResolveResult = { ok: true; plan: SmokePlan } | { ok: false; error: string };

export const RUN_RECIPE = "scripts/training/run_recipe.py";
const HCP = "a2a+p2p";

/**
 * Settings the harness adds to every smoke run (docs/domain.md SMOKE1): one iteration line
 * per step, a small global batch, no checkpoint to resume from (a stale one makes a
 * false pass), no validation. The batch keys may be overridden by the user. The runner
 * (src/gpu/overrides.ts) sets the same fixed values again and drops exact repeats, so
 * this list can be passed to it whole.
 */
function harnessOverrides(iters: number, gpus: number): [string, string][] {
  return [
    ["train.train_iters", String(iters)],
    // gbs = world size with mbs 1 is divisible by every data-parallel size the GPU count allows.
    ["train.global_batch_size", String(gpus)],
    ["train.micro_batch_size", "1"],
    ["logger.log_interval", "1"],
    ["logger.log_throughput", "true"],
    ["checkpoint.save", "null"],
    ["checkpoint.load", "null"],
    ["validation.eval_iters", "0"],
    ["validation.eval_interval", "0"],
  ];
}

export function resolveSmokeRequest(cmd: SmokeCommand, config: SmokeConfig): ResolveResult {
  const recipe = cmd.recipe ?? config.recipe;
  const cp = cmd.cp ?? config.cp;
  const gpus = cmd.gpus ?? config.gpus;
  const iters = cmd.iters ?? config.iters;
  const range = checkRanges(cp, gpus, iters);
  if (range) return { ok: false, error: range };

  // The repo config may have narrowed allowed_keys since the command was parsed without it.
  for (const o of cmd.overrides) {
    const checked = checkOverride(o.key, o.value, config.allowed_keys);
    if (!checked.ok) return { ok: false, error: `${checked.error}; the repository's .github/hcp-bot.yml decides which extra keys are allowed` };
  }
  const typeOverride = cmd.overrides.find((o) => o.key === "model.cp_comm_type");
  const cpCommType: OverrideValue = typeOverride ? typeOverride.value : HCP;
  const expectHcp = cpCommType === HCP || (Array.isArray(cpCommType) && cpCommType.includes(HCP));
  const sizes = cmd.sizes !== undefined ? cmd.sizes : expectHcp ? pairOf(config.sizes) : null;
  const layout = checkLayout(cmd, cp, gpus, sizes, expectHcp);
  if (layout) return { ok: false, error: layout };

  const userOverrides = cmd.overrides.filter((o) => o.key !== "model.cp_comm_type");
  const overrides = overrideList(cp, typeOverride?.text ?? HCP, sizes, harnessOverrides(iters, gpus), userOverrides);
  const compare = cmd.compare ?? config.compare;
  const compareProblem = checkCompare(compare, expectHcp, cpCommType, iters);
  if (compareProblem) return { ok: false, error: compareProblem };
  const argv = launchArgv(gpus, recipe, overrides);
  return {
    ok: true,
    plan: {
      recipe, cp, cpCommType, sizes, gpus, iters, dryRun: cmd.dryRun, userOverrides, overrides, expectHcp, argv, launchLine: () => shellLine(argv),
      compare, reference: compare === "none" ? null : referenceLeg(compare, gpus, recipe, overrides),
    },
  };
}

function launchArgv(gpus: number, recipe: string, overrides: readonly string[]): string[] {
  return ["uv", "run", "python", "-m", "torch.distributed.run", `--nproc_per_node=${gpus}`, RUN_RECIPE, "--recipe", recipe, ...overrides];
}

function referenceLeg(mode: ReferenceMode, gpus: number, recipe: string, overrides: readonly string[]): ReferenceLeg {
  const refOverrides = referenceOverrides(overrides, mode);
  const argv = launchArgv(gpus, recipe, refOverrides);
  return { cpCommType: mode, overrides: refOverrides, argv, launchLine: () => shellLine(argv) };
}

/** An A/B run compares a2a+p2p with one flat layout, over at least two iterations (the first is warm-up). */
function checkCompare(compare: CompareMode, expectHcp: boolean, cpCommType: OverrideValue, iters: number): string | undefined {
  if (compare === "none") return undefined;
  if (!expectHcp || Array.isArray(cpCommType)) {
    return `compare=${compare} compares cp_comm_type a2a+p2p with ${compare}; this run's cp_comm_type is ${JSON.stringify(cpCommType)}: drop model.cp_comm_type or compare=`;
  }
  if (iters < 2) return `compare=${compare} needs iters of at least 2: the throughput is the median of the iterations after the first (got iters=${iters})`;
  return undefined;
}

/** The repo defaults are checked too: a config may say cp: 128. */
function checkRanges(cp: number, gpus: number, iters: number): string | undefined {
  if (cp < LIMITS.cp.min || cp > LIMITS.cp.max) return `cp must be from ${LIMITS.cp.min} to ${LIMITS.cp.max} (got ${cp})`;
  if (gpus < LIMITS.gpus.min || gpus > LIMITS.gpus.max) return `gpus must be from ${LIMITS.gpus.min} to ${LIMITS.gpus.max} (got ${gpus})`;
  if (iters < LIMITS.iters.min || iters > LIMITS.iters.max) return `iters must be from ${LIMITS.iters.min} to ${LIMITS.iters.max} (got ${iters})`;
  return undefined;
}

/** What can be decided without the recipe: sizes against cp, and the GPU count against cp x tp x pp. */
function checkLayout(cmd: SmokeCommand, cp: number, gpus: number, sizes: [number, number] | null, expectHcp: boolean): string | undefined {
  if (expectHcp) {
    if (cp < 2) return `cp_comm_type a2a+p2p needs cp of at least 2 (got cp=${cp}); give cp=4 sizes=2,2 for example`;
    if (sizes === null) return `cp_comm_type a2a+p2p needs hierarchical sizes: give sizes=A,B with A×B = cp (for cp=${cp}, e.g. ${examplePair(cp)})`;
    if (sizes[0] * sizes[1] !== cp) return `sizes=${sizes.join(",")} multiply to ${sizes[0] * sizes[1]}, but cp is ${cp}; the product must equal cp (e.g. ${examplePair(cp)})`;
  } else if (cmd.sizes) {
    return `sizes only apply with cp_comm_type a2a+p2p; drop sizes or give sizes=none`;
  }
  const tp = intOverride(cmd.overrides, "model.tensor_model_parallel_size") ?? 1;
  const pp = intOverride(cmd.overrides, "model.pipeline_model_parallel_size") ?? 1;
  if (gpus % (cp * tp * pp) !== 0) {
    return `gpus=${gpus} is not a multiple of cp×tp×pp = ${cp}×${tp}×${pp} = ${cp * tp * pp}; give gpus=${cp * tp * pp <= LIMITS.gpus.max ? cp * tp * pp : LIMITS.gpus.max} or smaller sizes`;
  }
  return undefined;
}

/** The config schema checks the length; the type system only knows number[]. */
function pairOf(sizes: readonly number[] | null): [number, number] | null {
  return sizes && sizes.length === 2 ? [sizes[0] ?? 1, sizes[1] ?? 1] : null;
}

function examplePair(cp: number): string {
  for (let a = Math.floor(Math.sqrt(cp)); a >= 2; a--) if (cp % a === 0) return `sizes=${cp / a},${a}`;
  return `sizes=${cp},1`;
}

function intOverride(overrides: readonly Override[], key: string): number | undefined {
  const v = overrides.find((o) => o.key === key)?.value;
  return typeof v === "number" && Number.isInteger(v) ? v : undefined;
}

function overrideList(cp: number, cpCommType: string, sizes: [number, number] | null, harness: [string, string][], user: readonly Override[]): string[] {
  const userKeys = new Set(user.map((o) => o.key));
  return [
    `model.context_parallel_size=${cp}`,
    `model.cp_comm_type=${cpCommType}`,
    `model.hierarchical_context_parallel_sizes=${sizes ? `[${sizes.join(",")}]` : "null"}`,
    ...harness.filter(([k]) => !userKeys.has(k)).map(([k, v]) => `${k}=${v}`),
    ...user.map((o) => `${o.key}=${o.text}`),
  ];
}

/**
 * Joins argv for a POSIX shell. Every word already matches the value grammar (letters,
 * digits, `_ . + - = / ,`), so only `[`/`]` (glob characters) need quoting; anything else
 * is single-quoted, which the analyzer's lexer also reads.
 */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(" ");
}

function shellWord(word: string): string {
  if (/^[A-Za-z0-9_.+\-=/,:]+$/.test(word)) return word;
  if (/^[A-Za-z0-9_.+\-=/,:[\]]+$/.test(word)) return `"${word}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The text `/hcp check` hands to the analyzer, as a shell file; undefined for "check this PR". */
export function checkSource(input: CheckInput): SourceFile | undefined {
  switch (input.form) {
    case "pr":
      return undefined;
    case "launch":
      return { path: "hcp-check.sh", text: `${input.text}\n` };
    case "overrides":
      return { path: "hcp-check.sh", text: `${shellLine(["python", RUN_RECIPE, ...input.overrides.map((o) => `${o.key}=${o.text}`)])}\n` };
  }
}
