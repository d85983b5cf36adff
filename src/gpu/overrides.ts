// Hydra overrides for `scripts/training/run_recipe.py`: the user's (validated against a strict
// KEY=VALUE grammar) and the harness's (docs/domain.md 4.2: what makes a 2-iteration smoke run
// meaningful). Everything here ends up as separate argv entries, never in a shell string; the
// grammar is still strict because the same text reaches Hydra's own parser, logs and the PR.
import * as z from "zod";

export const MAX_OVERRIDES = 64;
export const MAX_KEY_LENGTH = 128;
export const MAX_VALUE_LENGTH = 256;

/** Hydra key: dotted identifiers, optionally prefixed with + (add), ++ (force add) or ~ (delete). */
const KEY_RE = /^(\+\+|\+|~)?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)$/;
/**
 * Value characters: enough for numbers, null/true, a2a+p2p, lists [2,2], dicts {a:1}, paths
 * and HF ids. No quotes, spaces, $, backticks, ; | & < >, backslashes, parentheses (Hydra
 * sweep functions) or newlines.
 */
const VALUE_RE = /^[A-Za-z0-9_.,:/+\-[\]{}@%=]*$/;
const VALUE_CHARS_HELP = "letters, digits and _ . , : / + - [ ] { } @ % = (no quotes, spaces, $, backticks, ; | & < >, parentheses or newlines)";

export interface ParsedOverride {
  /** The text as it goes to run_recipe.py. */
  text: string;
  prefix: "" | "+" | "++" | "~";
  /** The dotted key without its prefix. */
  key: string;
  /** null for a bare `~key` deletion. */
  value: string | null;
}

function splitOverride(text: string): { rawKey: string; value: string | null } {
  const eq = text.indexOf("=");
  return eq < 0 ? { rawKey: text, value: null } : { rawKey: text.slice(0, eq), value: text.slice(eq + 1) };
}

/** One override, checked and split; issues are phrased for the person who typed it. */
export const OverrideSchema = z
  .string()
  .max(MAX_KEY_LENGTH + 1 + MAX_VALUE_LENGTH, `an override is at most ${MAX_KEY_LENGTH + 1 + MAX_VALUE_LENGTH} characters`)
  .transform((text, ctx): ParsedOverride => {
    const { rawKey, value } = splitOverride(text);
    const key = KEY_RE.exec(rawKey);
    if (!key) {
      ctx.addIssue({
        code: "custom",
        message: rawKey.startsWith("-")
          ? `${JSON.stringify(text)} is a flag; only KEY=VALUE overrides are passed to run_recipe.py`
          : `${JSON.stringify(text)}: expected KEY=VALUE with a dotted Hydra key (optionally prefixed by +, ++ or ~), e.g. model.context_parallel_size=4`,
      });
      return z.NEVER;
    }
    const prefix = (key[1] ?? "") as ParsedOverride["prefix"];
    const dotted = key[2]!;
    if (dotted.length > MAX_KEY_LENGTH) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(rawKey)}: a key is at most ${MAX_KEY_LENGTH} characters` });
      return z.NEVER;
    }
    if (value === null && prefix !== "~") {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(text)}: expected KEY=VALUE (only ~KEY may omit the value)` });
      return z.NEVER;
    }
    if (value !== null && value.length > MAX_VALUE_LENGTH) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(rawKey)}: a value is at most ${MAX_VALUE_LENGTH} characters` });
      return z.NEVER;
    }
    if (value !== null && !VALUE_RE.test(value)) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(text)}: the value may contain only ${VALUE_CHARS_HELP}` });
      return z.NEVER;
    }
    return { text, prefix, key: dotted, value };
  });

export const OverrideListSchema = z.array(OverrideSchema).max(MAX_OVERRIDES, `at most ${MAX_OVERRIDES} overrides`);

/** What `--overrides-env VAR` must hold: a JSON array of strings. */
export const OverridesJsonSchema = z.array(z.string()).max(MAX_OVERRIDES, `at most ${MAX_OVERRIDES} overrides`);

export class OverrideError extends Error {}

export function parseOverrides(texts: readonly string[]): ParsedOverride[] {
  const parsed = OverrideListSchema.safeParse(texts);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  - ${i.path.length ? `override ${Number(i.path[0]) + 1}: ` : ""}${i.message}`);
    throw new OverrideError(`invalid override${lines.length > 1 ? "s" : ""}:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** Reads `--overrides-env VAR`: the workflow passes inputs.overrides through env, never through a script. */
export function overridesFromEnv(name: string, env: Readonly<Record<string, string | undefined>>): string[] {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new OverrideError(`--overrides-env: ${JSON.stringify(name)} is not an environment variable name`);
  const raw = env[name];
  if (raw === undefined) throw new OverrideError(`--overrides-env: ${name} is not set`);
  if (raw.trim() === "") return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new OverrideError(`--overrides-env: ${name} is not JSON (${(error as Error).message}); expected an array such as ["model.context_parallel_size=4"]`);
  }
  const list = OverridesJsonSchema.safeParse(value);
  if (!list.success) throw new OverrideError(`--overrides-env: ${name} must be a JSON array of strings (${z.prettifyError(list.error).replace(/\n/g, " ")})`);
  return list.data;
}

export interface HarnessSettings {
  iters: number;
  nproc: number;
}

type Setting = readonly [key: string, value: string];

/**
 * The settings that make a short smoke run say something (docs/domain.md 4.2, rule SMOKE1), always
 * set by the harness:
 * - log_interval=1: `_pretrain_common` logs every 10 steps, so 2 iterations print no step line;
 * - log_throughput=true: TFLOP/s/GPU for the "CP silently off" sanity check (Bridge #2667);
 * - no checkpoint save/load: a stale checkpoint resumes past train_iters and "passes" untrained;
 * - no evaluation: eval_iters=32 would run after the 2 steps.
 * They come last on the command line (run_recipe.py: the trailing KEY=VALUE wins).
 */
export function fixedHarness(settings: HarnessSettings): Setting[] {
  return [
    ["logger.log_interval", "1"],
    ["logger.log_throughput", "true"],
    ["train.train_iters", String(settings.iters)],
    ["checkpoint.save", "null"],
    ["checkpoint.load", "null"],
    ["validation.eval_iters", "0"],
    ["validation.eval_interval", "0"],
  ];
}

/**
 * Defaults the user may replace (as the bot's /hcp grammar allows): the recipe's global batch
 * (512 for llama32_1b) would be 512 micro-batches per step on DP=1. A global batch equal to the
 * GPU count with micro-batch 1 is divisible by every data-parallel size those GPUs allow.
 */
export function defaultHarness(settings: HarnessSettings): Setting[] {
  return [
    ["train.global_batch_size", String(settings.nproc)],
    ["train.micro_batch_size", "1"],
  ];
}

/** Keys the harness owns: set through smoke-run's flags (--iters) or not at all. */
export const HARNESS_KEYS: readonly string[] = fixedHarness({ iters: 1, nproc: 1 }).map(([k]) => k);
/** Whole sections the harness owns (a checkpoint path reads or writes the runner's disk). */
export const HARNESS_SECTIONS: readonly string[] = ["checkpoint"];

const HARNESS_FLAG: Readonly<Record<string, string>> = { "train.train_iters": " (use --iters)" };

/** The harness key or section a user override touches: the key itself, a parent (`checkpoint=…`) or a child. */
export function harnessKeyTouched(key: string): string | undefined {
  return (
    HARNESS_KEYS.find((h) => h === key || h.startsWith(`${key}.`) || key.startsWith(`${h}.`)) ??
    HARNESS_SECTIONS.find((section) => key === section || key.startsWith(`${section}.`))
  );
}

/** true/false/null as Hydra reads them: `checkpoint.save=NULL` is the same setting. */
function sameValue(a: string, b: string): boolean {
  return a === b || (/^(true|false|null)$/i.test(a) && a.toLowerCase() === b.toLowerCase());
}

export interface ComposedOverrides {
  /** The final list for run_recipe.py: each key once, harness keys last. */
  overrides: string[];
  /** User overrides equal to a harness setting, dropped as duplicates (the bot may send the full list). */
  duplicates: string[];
}

/**
 * User overrides, then the defaults the user did not set, then the fixed harness settings.
 * A user override that repeats a fixed setting exactly is dropped; any other override that
 * touches a harness key is refused (OverrideError).
 */
export function composeOverrides(user: readonly ParsedOverride[], settings: HarnessSettings): ComposedOverrides {
  const fixed = fixedHarness(settings);
  const fixedValue = new Map(fixed);
  const duplicates: string[] = [];
  const clashes: string[] = [];
  const kept: ParsedOverride[] = [];
  for (const o of user) {
    const harnessValue = fixedValue.get(o.key);
    if (o.prefix === "" && harnessValue !== undefined && o.value !== null && sameValue(o.value, harnessValue)) {
      duplicates.push(o.text);
      continue;
    }
    const touched = harnessKeyTouched(o.key);
    if (touched) {
      const set = fixedValue.has(touched) ? `sets ${touched}=${fixedValue.get(touched)} itself` : `owns ${touched}.*`;
      clashes.push(`  - ${JSON.stringify(o.text)} touches ${touched}; the smoke harness ${set}${HARNESS_FLAG[touched] ?? ""}`);
      continue;
    }
    kept.push(o);
  }
  if (clashes.length > 0) {
    throw new OverrideError(
      `override${clashes.length > 1 ? "s" : ""} refused:\n${clashes.join("\n")}\n` +
        `The harness settings (${HARNESS_KEYS.join(", ")}, ${HARNESS_SECTIONS.map((s) => `${s}.*`).join(", ")}) keep a short run meaningful (hcp-bot's docs/domain.md 4.2).`,
    );
  }
  const userKeys = new Set(kept.map((o) => o.key));
  return {
    overrides: [
      ...kept.map((o) => o.text),
      ...defaultHarness(settings).filter(([k]) => !userKeys.has(k)).map(([k, v]) => `${k}=${v}`),
      ...fixed.map(([k, v]) => `${k}=${v}`),
    ],
    duplicates,
  };
}
