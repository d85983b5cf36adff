// `/hcp` words -> Command values. Both front doors (GitHub comments and Slack) go through
// parseWords, so a command means the same thing wherever it is typed.
import { mayHoldLaunchLine } from "../recipe/launch/index.ts";
import {
  ADVISE_OPTIONS,
  allowedKeyList,
  checkKeyList,
  checkOverride,
  describeChar,
  firstForbidden,
  KEY_GRAMMAR,
  LIMITS,
  readIntOption,
  readRecipe,
  readSizes,
  readTarget,
  readValue,
  show,
  SUBCOMMANDS,
  type Checked,
} from "./grammar.ts";
import { commandLines } from "./markdown.ts";
import type { AdviseCommand, CheckInput, Command, CommandKind, Override, ParsedCommand, ParseOptions, SmokeCommand } from "./types.ts";

type Surface = "github" | "slack";

/** What to append once to an error message, however many words needed it. */
type Hint = "options" | "keys" | "check-keys" | "commands";

interface Problem {
  message: string;
  hint?: Hint;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

const SMOKE_USAGE_GITHUB = "/hcp smoke [recipe=NAME] [cp=N] [sizes=A,B] [iters=N] [gpus=N] [sha=COMMIT] [compare=p2p|a2a|none] [KEY=VALUE ...] [--dry-run]";
const SMOKE_USAGE_SLACK = "/hcp smoke OWNER/REPO#PR [recipe=NAME] [cp=N] [sizes=A,B] [iters=N] [gpus=N] [sha=COMMIT] [compare=p2p|a2a|none] [KEY=VALUE ...] [--dry-run]";

/**
 * Every `/hcp` command of a pull-request comment, in order. At most
 * LIMITS.commandsPerComment are read; one more entry then says the rest were ignored.
 * A second command of the same kind in one comment is refused (one smoke per comment).
 */
export function parseCommentCommands(body: string, options: ParseOptions = {}): ParsedCommand[] {
  const cap = LIMITS.commandsPerComment;
  const lines = commandLines(body, cap + 1);
  const seen = new Set<CommandKind>();
  const out: ParsedCommand[] = lines.slice(0, cap).map((l) => {
    const parsed = parseWords(l.rest, "github", options, l.line);
    const kind = parsed.ok ? parsed.command.kind : undefined;
    if (kind && seen.has(kind)) {
      return { ok: false, kind, error: `\`/hcp ${kind}\` appears more than once in this comment; only the first one is read`, line: l.line, raw: parsed.raw };
    }
    if (kind) seen.add(kind);
    return parsed;
  });
  const extra = lines[cap];
  if (extra) {
    out.push({
      ok: false,
      error: `only the first ${cap} /hcp commands of a comment are read; post the others in a new comment`,
      line: extra.line,
      raw: rawOf(extra.rest),
    });
  }
  return out;
}

/**
 * The text of Slack's `/hcp` slash command (Slack strips the command itself):
 * `smoke OWNER/REPO#PR ...`, `status OWNER/REPO#PR`, `cancel OWNER/REPO#PR`, `check ...`, `help`.
 */
export function parseSlackCommand(text: string, options: ParseOptions = {}): ParsedCommand {
  return parseWords(text, "slack", options, 1);
}

function rawOf(rest: string): string {
  return `/hcp${rest.length > 200 ? `${rest.slice(0, 200)}…` : rest}`;
}

function parseWords(rest: string, surface: Surface, options: ParseOptions, line: number): ParsedCommand {
  const raw = rawOf(surface === "slack" ? ` ${rest.trim()}` : rest);
  const fail = (error: string, kind?: CommandKind): ParsedCommand => (kind ? { ok: false, kind, error, line, raw } : { ok: false, error, line, raw });
  if (rest.length > LIMITS.lineChars) {
    return fail(`the command is ${rest.length} characters long; at most ${LIMITS.lineChars} are read. ${hintText("commands", surface, options)}`);
  }
  // Slack sends multi-line text as is; a command is still one line of words.
  const text = surface === "slack" ? rest.replace(/\r\n|\r|\n/g, " ") : rest;
  const head = /^[ \t]*(\S*)/.exec(text);
  const word = head?.[1] ?? "";
  if (word === "") return { ok: true, command: { kind: "help" }, line, raw };
  const sub = word.toLowerCase();
  if (!isSubcommand(sub)) {
    return fail(`\`${show(word)}\` is not an /hcp command. ${hintText("commands", surface, options)}`);
  }
  const argText = text.slice((head?.[0] ?? "").length);
  const args = argText.split(/[ \t]+/).filter((w) => w !== "");
  if (sub !== "check" && args.length > LIMITS.words) {
    return fail(`\`/hcp ${sub}\` takes at most ${LIMITS.words} words (got ${args.length})`, sub);
  }
  const result = parseSubcommand(sub, args, argText, surface, options);
  if (result.ok) return { ok: true, command: result.value, line, raw };
  return fail(formatProblems(result.problems, surface, options), sub);
}

function isSubcommand(word: string): word is (typeof SUBCOMMANDS)[number] {
  return (SUBCOMMANDS as readonly string[]).includes(word);
}

function parseSubcommand(sub: (typeof SUBCOMMANDS)[number], args: string[], argText: string, surface: Surface, options: ParseOptions): Parsed<Command> {
  switch (sub) {
    case "help":
      return args.length === 0 ? ok({ kind: "help" }) : problem("`/hcp help` takes no arguments");
    case "status":
    case "cancel":
      return parseTargetOnly(sub, args, surface);
    case "smoke":
      return parseSmoke(args, surface, options);
    case "check":
      return parseCheck(argText, surface, options);
    case "advise":
      return parseAdvise(args);
  }
}

function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

function problem<T>(message: string, hint?: Hint): Parsed<T> {
  return { ok: false, problems: [hint ? { message, hint } : { message }] };
}

/** GitHub: no arguments (the comment's own PR). Slack: exactly OWNER/REPO#PR. */
function parseTargetOnly(sub: "status" | "cancel", args: string[], surface: Surface): Parsed<Command> {
  if (surface === "github") {
    if (args.length === 0) return ok({ kind: sub });
    return problem(`\`/hcp ${sub}\` takes no arguments on a pull request (it acts on this pull request)`);
  }
  if (args.length !== 1) return problem(`usage: /hcp ${sub} OWNER/REPO#PR`);
  const target = readTarget(args[0] ?? "");
  return target.ok ? ok({ kind: sub, target: target.value }) : problem(target.error);
}

// ---------------------------------------------------------------------------------
// /hcp smoke

/** Named options and the override key each one stands for (so both spellings cannot be mixed). */
const OPTION_KEYS = {
  recipe: "recipe",
  cp: "model.context_parallel_size",
  sizes: "model.hierarchical_context_parallel_sizes",
  iters: "iters",
  gpus: "gpus",
  sha: "sha",
  compare: "compare",
} as const;
type OptionName = keyof typeof OPTION_KEYS;

function isOptionName(name: string): name is OptionName {
  return Object.hasOwn(OPTION_KEYS, name);
}

function parseSmoke(args: string[], surface: Surface, options: ParseOptions): Parsed<Command> {
  const problems: Problem[] = [];
  const cmd: SmokeCommand = { kind: "smoke", overrides: [], dryRun: false };
  let words = args;
  if (surface === "slack") {
    const target = readTarget(args[0] ?? "");
    if (!target.ok) return problem(args.length === 0 ? `usage: ${SMOKE_USAGE_SLACK}` : target.error);
    cmd.target = target.value;
    words = args.slice(1);
  }
  // Which setting each word set, so `cp=4 model.context_parallel_size=2` is caught.
  const setBy = new Map<string, string>();
  for (const word of words) {
    const p = smokeWord(word, cmd, setBy, surface, options);
    if (p) problems.push(p);
  }
  return problems.length > 0 ? { ok: false, problems } : ok(cmd);
}

/** Applies one word to the command; returns the problem with it, if any. */
function smokeWord(word: string, cmd: SmokeCommand, setBy: Map<string, string>, surface: Surface, options: ParseOptions): Problem | undefined {
  const odd = firstForbidden(word, /[\x21-\x7e]/);
  if (odd) return { message: `\`${show(word)}\`: ${describeChar(odd)} is not allowed (plain ASCII only)`, hint: "options" };
  if (word === "--dry-run") {
    if (cmd.dryRun) return { message: "--dry-run is given twice" };
    cmd.dryRun = true;
    return undefined;
  }
  if (word.startsWith("-")) return { message: `\`${show(word)}\` is not a flag of /hcp smoke (the only flag is --dry-run)`, hint: "options" };
  if (surface === "github" && readTarget(word).ok) {
    return { message: "on a pull request, /hcp smoke runs on that pull request; leave out OWNER/REPO#PR" };
  }
  const eq = word.indexOf("=");
  if (eq <= 0) return { message: `\`${show(word)}\` is not NAME=VALUE`, hint: "options" };
  const name = word.slice(0, eq);
  const text = word.slice(eq + 1);
  if (name.length > LIMITS.keyChars) return { message: `the key \`${show(name)}\` is longer than ${LIMITS.keyChars} characters`, hint: "keys" };
  const setting = isOptionName(name) ? OPTION_KEYS[name] : KEY_GRAMMAR.test(name) ? name : undefined;
  if (!setting) {
    return { message: `\`${show(name)}\` is neither an option (recipe, cp, sizes, iters, gpus, sha, compare) nor an override key such as model.cp_comm_type`, hint: "options" };
  }
  const earlier = setBy.get(setting);
  if (earlier !== undefined) {
    return { message: earlier === name ? `${name} is given twice` : `${earlier}= and ${name}= set the same setting; give it once` };
  }
  setBy.set(setting, name);
  return isOptionName(name) ? applyOption(name, text, cmd) : applyOverride(name, text, cmd, options);
}

function applyOption(name: OptionName, text: string, cmd: SmokeCommand): Problem | undefined {
  switch (name) {
    case "recipe":
      return take(readRecipe(text), (v) => (cmd.recipe = v));
    case "cp":
      return take(readIntOption("cp", text, LIMITS.cp.min, LIMITS.cp.max), (v) => (cmd.cp = v));
    case "sizes":
      return take(readSizes(text), (v) => (cmd.sizes = v));
    case "iters":
      return take(readIntOption("iters", text, LIMITS.iters.min, LIMITS.iters.max), (v) => (cmd.iters = v));
    case "gpus":
      return take(readIntOption("gpus", text, LIMITS.gpus.min, LIMITS.gpus.max), (v) => (cmd.gpus = v));
    case "sha":
      if (!/^[0-9a-f]{7,40}$/.test(text)) return { message: `sha must be a commit, 7 to 40 lowercase hex digits (got \`${show(text)}\`)` };
      cmd.sha = text;
      return undefined;
    case "compare":
      if (text !== "none" && text !== "p2p" && text !== "a2a") return { message: `compare must be p2p, a2a or none (got \`${show(text)}\`)` };
      cmd.compare = text;
      return undefined;
  }
}

function take<T>(checked: Checked<T>, apply: (value: T) => unknown): Problem | undefined {
  if (!checked.ok) return { message: checked.error };
  apply(checked.value);
  return undefined;
}

function applyOverride(key: string, text: string, cmd: SmokeCommand, options: ParseOptions): Problem | undefined {
  const value = readValue(text);
  if (!value.ok) return { message: `${key}: ${value.error}` };
  const checked = checkOverride(key, value.value, options.allowedKeys ?? []);
  if (!checked.ok) return checked.reason === "unknown-key" ? { message: checked.error, hint: "keys" } : { message: checked.error };
  // The two CP settings with named options are folded in, so resolve sees one source each.
  const v = checked.value;
  if (key === "model.context_parallel_size" && typeof v === "number") cmd.cp = v;
  else if (key === "model.hierarchical_context_parallel_sizes" && (v === null || isPair(v))) cmd.sizes = v;
  else cmd.overrides.push({ key, text, value: v });
  return undefined;
}

function isPair(v: unknown): v is [number, number] {
  return Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === "number");
}

// ---------------------------------------------------------------------------------
// /hcp advise

export const ADVISE_USAGE = "/hcp advise cp=N [tp=N] [pp=N] [heads=H kv_heads=K] [gpus_per_node=G | nvlink_domain=G] [nodes=N]";

function parseAdvise(args: string[]): Parsed<Command> {
  const values: Partial<Record<keyof typeof ADVISE_OPTIONS, number>> = {};
  const problems: Problem[] = [];
  for (const word of args) {
    const eq = word.indexOf("=");
    const name = eq > 0 ? word.slice(0, eq) : "";
    if (!Object.hasOwn(ADVISE_OPTIONS, name)) {
      problems.push({ message: `\`${show(word)}\` is not one of ${Object.keys(ADVISE_OPTIONS).map((k) => `${k}=N`).join(", ")}` });
      continue;
    }
    const key = name as keyof typeof ADVISE_OPTIONS;
    if (values[key] !== undefined) {
      problems.push({ message: `${key} is given twice` });
      continue;
    }
    const read = readIntOption(key, word.slice(eq + 1), ADVISE_OPTIONS[key].min, ADVISE_OPTIONS[key].max);
    if (read.ok) values[key] = read.value;
    else problems.push({ message: read.error });
  }
  if (values.cp === undefined && problems.length === 0) problems.push({ message: "cp=N is required" });
  if (values.gpus_per_node !== undefined && values.nvlink_domain !== undefined) problems.push({ message: "give gpus_per_node or nvlink_domain, not both" });
  if (problems.length > 0) return { ok: false, problems: [...problems.slice(0, 4), { message: `usage: ${ADVISE_USAGE}` }] };
  const cmd: AdviseCommand = { kind: "advise", cp: values.cp! };
  if (values.tp !== undefined) cmd.tp = values.tp;
  if (values.pp !== undefined) cmd.pp = values.pp;
  if (values.heads !== undefined) cmd.heads = values.heads;
  // Megatron's num_query_groups defaults to the head count (no GQA).
  const kv = values.kv_heads ?? values.heads;
  if (kv !== undefined) cmd.kvHeads = kv;
  const domain = values.nvlink_domain ?? values.gpus_per_node;
  if (domain !== undefined) {
    cmd.domainGpus = domain;
    cmd.domain = values.nvlink_domain !== undefined ? "nvlink" : "node";
  }
  if (values.nodes !== undefined) cmd.nodes = values.nodes;
  return ok(cmd);
}

// ---------------------------------------------------------------------------------
// /hcp check

function parseCheck(argText: string, surface: Surface, options: ParseOptions): Parsed<Command> {
  const text = unwrapCode(surface === "slack" ? unescapeSlack(argText) : argText).trim();
  if (text === "") {
    if (surface === "github") return ok({ kind: "check", input: { form: "pr" } });
    return problem("give a launch line (… run_recipe.py --recipe NAME KEY=VALUE …) or KEY=VALUE overrides to check", "check-keys");
  }
  if (text.length > LIMITS.checkChars) return problem(`the text to check is ${text.length} characters long; at most ${LIMITS.checkChars} are read`);
  const words = text.split(/\s+/);
  if (words.every((w) => /^[a-z_][a-z0-9_]*\.[a-z0-9_.]*=/.test(w))) return checkOverrides(words, options);
  if (!mayHoldLaunchLine(text)) {
    return problem("this is neither a launch line (torchrun/python … run_recipe.py --recipe NAME …, or a Megatron-LM pretrain_*.py line) nor KEY=VALUE overrides", "check-keys");
  }
  const input: CheckInput = { form: "launch", text };
  return ok({ kind: "check", input });
}

/** KEY=VALUE for the analyzer: any key it reads, the same value grammar, no range checks (the rules judge values). */
function checkOverrides(words: string[], options: ParseOptions): Parsed<Command> {
  const keys = checkKeyList(options.allowedKeys);
  const problems: Problem[] = [];
  const overrides: Override[] = [];
  const seen = new Set<string>();
  for (const word of words) {
    const eq = word.indexOf("=");
    const key = word.slice(0, eq);
    const text = word.slice(eq + 1);
    if (!keys.includes(key)) {
      problems.push({ message: `${show(key)} is not a setting the check reads`, hint: "check-keys" });
      continue;
    }
    if (seen.has(key)) {
      problems.push({ message: `${key} is given twice` });
      continue;
    }
    seen.add(key);
    const value = readValue(text);
    if (value.ok) overrides.push({ key, text, value: value.value });
    else problems.push({ message: `${key}: ${value.error}` });
  }
  return problems.length > 0 ? { ok: false, problems } : ok({ kind: "check", input: { form: "overrides", overrides } });
}

/** Slack escapes &, < and > in command text. */
function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** People paste launch lines in `inline code` or ```fences```. */
function unwrapCode(text: string): string {
  const t = text.trim();
  const fenced = /^```[A-Za-z]*\s*([\s\S]*?)\s*```$/.exec(t);
  if (fenced) return fenced[1] ?? "";
  const inline = /^`([^`]*)`$/.exec(t);
  return inline ? (inline[1] ?? "") : t;
}

// ---------------------------------------------------------------------------------
// Error text

/** The problems (at most five), then each needed hint once. */
function formatProblems(problems: Problem[], surface: Surface, options: ParseOptions): string {
  const shown = problems.slice(0, 5).map((p) => p.message);
  if (problems.length > 5) shown.push(`and ${problems.length - 5} more`);
  const hints = new Set(problems.flatMap((p) => (p.hint ? [p.hint] : [])));
  const tail: string[] = [];
  if (hints.has("options") || hints.has("keys")) tail.push(hintText("options", surface, options));
  if (hints.has("keys")) tail.push(hintText("keys", surface, options));
  if (hints.has("check-keys")) tail.push(hintText("check-keys", surface, options));
  return [sentence(shown.join("; ")), ...tail].join(" ");
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function hintText(hint: Hint, surface: Surface, options: ParseOptions): string {
  switch (hint) {
    case "commands":
      return surface === "slack"
        ? "Commands: /hcp smoke OWNER/REPO#PR, /hcp status OWNER/REPO#PR, /hcp cancel OWNER/REPO#PR, /hcp check ..., /hcp help, /hcp advise cp=N ...."
        : "Commands: /hcp smoke, /hcp cancel, /hcp check, /hcp status, /hcp help, /hcp advise cp=N ....";
    case "options":
      return `Usage: ${surface === "slack" ? SMOKE_USAGE_SLACK : SMOKE_USAGE_GITHUB}.`;
    case "keys":
      return `Allowed override keys: ${allowedKeyList(options.allowedKeys).join(", ")}.`;
    case "check-keys":
      return `Keys the check reads: ${checkKeyList(options.allowedKeys).join(", ")}.`;
  }
}

