// The word-level grammar of `/hcp`: option names and ranges, the override key allowlist,
// and the value grammar. Values end up as arguments of a GPU job, so the grammar is an
// allowlist of characters, not a blocklist: letters, digits, `_ . + -` and `[a,b]` lists.
import * as z from "zod";
import { SETTING_KEYS } from "../model/settings.ts";
import type { OverrideScalar, OverrideValue } from "./types.ts";

export const LIMITS = {
  cp: { min: 1, max: 64 },
  gpus: { min: 1, max: 8 },
  iters: { min: 1, max: 50 },
  /** Each of the two hierarchical sizes. */
  size: { min: 1, max: 64 },
  /** Commands read from one comment; the rest get one error reply (a comment is not a script). */
  commandsPerComment: 3,
  /** Characters in one command line (after `/hcp`); GitHub comments may hold 65,536. */
  lineChars: 1000,
  /** Words after the subcommand. */
  words: 40,
  keyChars: 80,
  valueChars: 200,
  listItems: 64,
  recipeChars: 100,
  /** `/hcp check` launch-line text (never executed, only analyzed). */
  checkChars: 4000,
} as const;

export const SUBCOMMANDS = ["smoke", "cancel", "check", "status", "advise", "help"] as const;

/** `/hcp advise NAME=N ...`: each option and its range (the layout advisor's numbers). */
export const ADVISE_OPTIONS = {
  cp: { min: 1, max: 1024 },
  tp: { min: 1, max: 64 },
  pp: { min: 1, max: 128 },
  heads: { min: 1, max: 1024 },
  kv_heads: { min: 1, max: 1024 },
  gpus_per_node: { min: 1, max: 1024 },
  nvlink_domain: { min: 1, max: 1024 },
  nodes: { min: 1, max: 4096 },
} as const;

/**
 * Built-in override allowlist: the settings that decide whether HCP is built and how
 * it is laid out, plus the few knobs needed to make a model fit a 1-8 GPU smoke run.
 * Each has a typed check so `cp_comm_type=a2a+p2q` is refused before GPU time is spent.
 */
interface KeySpec {
  /** For help and errors: "an integer from 1 to 8". */
  allowed: string;
  schema: z.ZodType<OverrideValue>;
}

const int = (min: number, max: number): KeySpec => ({
  allowed: `an integer from ${min} to ${max}`,
  schema: z.number().int().min(min).max(max),
});
const bool: KeySpec = { allowed: "true or false", schema: z.boolean() };
const CP_COMM_TYPES = ["p2p", "all_gather", "a2a", "a2a+p2p"] as const;

export const BUILTIN_KEYS: Readonly<Record<string, KeySpec>> = {
  "model.context_parallel_size": int(LIMITS.cp.min, LIMITS.cp.max),
  "model.cp_comm_type": {
    allowed: `one of ${CP_COMM_TYPES.join(", ")}, or a per-layer list of them`,
    schema: z.union([z.enum(CP_COMM_TYPES), z.array(z.enum(CP_COMM_TYPES)).min(1)]),
  },
  "model.hierarchical_context_parallel_sizes": {
    allowed: `a list of two integers from ${LIMITS.size.min} to ${LIMITS.size.max} such as [2,2], or null`,
    schema: z.union([z.tuple([z.number().int().min(LIMITS.size.min).max(LIMITS.size.max), z.number().int().min(LIMITS.size.min).max(LIMITS.size.max)]), z.null()]),
  },
  "model.tensor_model_parallel_size": int(1, 8),
  "model.pipeline_model_parallel_size": int(1, 8),
  "model.sequence_parallel": bool,
  "model.num_layers": int(1, 256),
  "model.seq_length": int(1, 1_048_576),
  "dataset.seq_length": int(1, 1_048_576),
  "model.transformer_impl": { allowed: "transformer_engine or local", schema: z.enum(["transformer_engine", "local"]) },
  "model.calculate_per_token_loss": bool,
  "ddp.average_in_collective": bool,
  "dist.use_decentralized_pg": bool,
  "train.micro_batch_size": int(1, 64),
  "train.global_batch_size": int(1, 4096),
};

/**
 * Keys the smoke harness sets itself (docs/domain.md SMOKE1): letting a user change them
 * brings back the false passes they prevent (a stale checkpoint resumed past the last
 * step, no iteration line). Refused even when the repo config allows them.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  "train.train_iters",
  "logger.log_interval",
  "logger.log_throughput",
  "validation.eval_iters",
  "validation.eval_interval",
]);
/** Whole sections the harness owns: checkpoints read or write the runner's disk. */
export const RESERVED_PREFIXES: readonly string[] = ["checkpoint."];

/** A reserved key, one of its parents (`logger.x` for a whole dict) or children, or a reserved section. */
export function isReserved(key: string): boolean {
  if (RESERVED_PREFIXES.some((p) => key.startsWith(p))) return true;
  for (const r of RESERVED_KEYS) if (r === key || r.startsWith(`${key}.`) || key.startsWith(`${r}.`)) return true;
  return false;
}

/** A dotted ConfigContainer path, as the repo config's `allowed_keys` spells them. */
export const KEY_GRAMMAR = /^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$/;

const SCALAR = String.raw`(?:-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|[A-Za-z_][A-Za-z0-9_.+-]*)`;
/** Every accepted value matches this (and is at most LIMITS.valueChars long). */
export const VALUE_GRAMMAR = new RegExp(String.raw`^(?:${SCALAR}|\[(?:${SCALAR}(?:,${SCALAR})*)?\])$`);

export const VALUE_HELP = "a number, true, false, null, a name such as a2a+p2p, or a list such as [2,2] (letters, digits, _ . + - only; no spaces or quotes)";

/** What a scalar means to Hydra: int, float, bool, null, else a string. */
function scalarValue(text: string): OverrideScalar {
  if (/^null$/i.test(text)) return null;
  if (/^true$/i.test(text)) return true;
  if (/^false$/i.test(text)) return false;
  if (/^-?[0-9]/.test(text)) return Number(text);
  return text;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Reads a value against VALUE_GRAMMAR; the error names the first offending character. */
export function readValue(text: string): Checked<OverrideValue> {
  if (text.length === 0) return { ok: false, error: `the value is empty; use ${VALUE_HELP}` };
  if (text.length > LIMITS.valueChars) return { ok: false, error: `the value is ${text.length} characters long; at most ${LIMITS.valueChars} are allowed` };
  if (!VALUE_GRAMMAR.test(text)) {
    const bad = firstForbidden(text, /[A-Za-z0-9_.+\-[\],]/);
    const why = bad ? `${describeChar(bad)} is not allowed` : `\`${show(text)}\` is not a value`;
    return { ok: false, error: `${why}; use ${VALUE_HELP}` };
  }
  if (text.startsWith("[")) {
    const inner = text.slice(1, -1);
    const items = inner === "" ? [] : inner.split(",");
    if (items.length > LIMITS.listItems) return { ok: false, error: `a list may hold at most ${LIMITS.listItems} items (got ${items.length})` };
    const values = items.map(scalarValue);
    return numbersAreFinite(values) ? { ok: true, value: values } : { ok: false, error: "a number in the list is too large" };
  }
  const value = scalarValue(text);
  return numbersAreFinite([value]) ? { ok: true, value } : { ok: false, error: `${show(text)} is too large` };
}

function numbersAreFinite(values: readonly OverrideScalar[]): boolean {
  return values.every((v) => typeof v !== "number" || (Number.isFinite(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER));
}

export type OverrideCheck = { ok: true; value: OverrideValue } | { ok: false; error: string; reason: "reserved" | "unknown-key" | "bad-value" };

/** Checks a key against the allowlist, then the value against the key's type. */
export function checkOverride(key: string, value: OverrideValue, allowedKeys: readonly string[]): OverrideCheck {
  if (isReserved(key)) {
    return { ok: false, reason: "reserved", error: `${key} is set by the smoke harness and cannot be overridden (${reservedHelp()})` };
  }
  const spec = BUILTIN_KEYS[key];
  if (!spec) {
    if (allowedKeys.includes(key)) return { ok: true, value };
    return { ok: false, reason: "unknown-key", error: `${key} is not an allowed override key` };
  }
  const parsed = spec.schema.safeParse(value);
  if (!parsed.success) return { ok: false, reason: "bad-value", error: `${key} must be ${spec.allowed} (got ${showValue(value)})` };
  return { ok: true, value: parsed.data };
}

/** Built-in keys first, then the repo's own, without duplicates or reserved keys. */
export function allowedKeyList(allowedKeys: readonly string[] = []): string[] {
  const extra = allowedKeys.filter((k) => !(k in BUILTIN_KEYS) && !isReserved(k));
  return [...Object.keys(BUILTIN_KEYS), ...new Set(extra)];
}

export function keySpecHelp(key: string): string | undefined {
  return BUILTIN_KEYS[key]?.allowed;
}

export function reservedHelp(): string {
  return `reserved: ${[...RESERVED_KEYS].join(", ")}, ${RESERVED_PREFIXES.map((p) => `${p}*`).join(", ")}`;
}

/** Keys `/hcp check KEY=VALUE` accepts: what the analyzer reads, plus the smoke allowlist. */
export function checkKeyList(allowedKeys: readonly string[] = []): string[] {
  return [...new Set([...SETTING_KEYS, ...allowedKeyList(allowedKeys)])];
}

/** A named integer option such as `cp=4`. */
export function readIntOption(name: string, text: string, min: number, max: number): Checked<number> {
  const schema = z
    .string()
    .regex(/^[0-9]{1,9}$/)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
  const parsed = schema.safeParse(text);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: `${name} must be an integer from ${min} to ${max} (got \`${show(text)}\`)` };
}

const SIZES_HELP = `sizes must be two integers from ${LIMITS.size.min} to ${LIMITS.size.max} such as sizes=2,2 (or sizes=none with a cp_comm_type other than a2a+p2p)`;

/** `sizes=2,2`, `sizes=[2,2]`, or `sizes=none` / `sizes=null`. */
export function readSizes(text: string): Checked<[number, number] | null> {
  if (/^(?:none|null)$/i.test(text)) return { ok: true, value: null };
  const m = /^\[?([0-9]{1,4}),([0-9]{1,4})\]?$/.exec(text);
  const bracketsMatch = text.startsWith("[") === text.endsWith("]");
  if (!m || !bracketsMatch) return { ok: false, error: `${SIZES_HELP} (got \`${show(text)}\`)` };
  const pair = z
    .tuple([z.number().int().min(LIMITS.size.min).max(LIMITS.size.max), z.number().int().min(LIMITS.size.min).max(LIMITS.size.max)])
    .safeParse([Number(m[1]), Number(m[2])]);
  return pair.success ? { ok: true, value: pair.data } : { ok: false, error: `${SIZES_HELP} (got \`${show(text)}\`)` };
}

export const RECIPE_GRAMMAR = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function readRecipe(text: string): Checked<string> {
  const parsed = z.string().max(LIMITS.recipeChars).regex(RECIPE_GRAMMAR).safeParse(text);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: `recipe must be a recipe function name (letters, digits and _, at most ${LIMITS.recipeChars} characters) such as llama32_1b_pretrain_config (got \`${show(text)}\`)` };
}

/** `OWNER/REPO#PR` with GitHub's own name rules. */
const TARGET = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})#([0-9]{1,9})$/;

export function readTarget(text: string): Checked<{ owner: string; repo: string; pr: number }> {
  const m = TARGET.exec(text);
  const repo = m?.[2] ?? "";
  const pr = Number(m?.[3] ?? 0);
  if (!m || repo === "." || repo === ".." || pr < 1) {
    return { ok: false, error: `the pull request must be written OWNER/REPO#NUMBER, such as NVIDIA-NeMo/Megatron-Bridge#1234 (got \`${show(text)}\`)` };
  }
  return { ok: true, value: { owner: m[1] ?? "", repo, pr } };
}

// ---------------------------------------------------------------------------------
// Showing user text back safely.

/** Printable ASCII only, at most 40 characters, no backticks: safe inside inline code. */
export function show(text: string, max = 40): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut.replace(/[^\x20-\x7e…]|`/g, "?");
}

function showValue(value: OverrideValue): string {
  return show(JSON.stringify(value) ?? "null");
}

/** Names a character so look-alikes are visible: "the character U+FF14". */
export function describeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp >= 0x21 && cp <= 0x7e) return `the character \`${ch === "`" ? "backtick" : ch}\``;
  if (cp === 0x20 || cp === 0x09) return "a space";
  return `the character U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

export function firstForbidden(text: string, allowed: RegExp): string | undefined {
  for (const ch of text) if (!allowed.test(ch)) return ch;
  return undefined;
}
