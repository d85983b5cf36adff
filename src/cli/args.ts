// Argument handling shared by every command: the global flags (--help, --color), and an
// unknown flag answered with the closest valid one.
import { parseArgs } from "node:util";
import type { ColorChoice } from "./style.ts";

export class UsageError extends Error {}

export interface Flag {
  /** "--format" */
  name: string;
  /** "-f" */
  short?: string;
  takesValue: boolean;
}

/** The flags of a node:util parseArgs options object. */
export function flagsOfParser(options: Readonly<Record<string, { type: "string" | "boolean"; short?: string }>>): Flag[] {
  return Object.entries(options).map(([name, o]) => ({ name: `--${name}`, ...(o.short ? { short: `-${o.short}` } : {}), takesValue: o.type === "string" }));
}

export interface GlobalFlags {
  /** The arguments without the global flags. */
  rest: string[];
  help: boolean;
  color?: ColorChoice;
}

const COLOR_CHOICES: readonly ColorChoice[] = ["always", "never", "auto"];

/**
 * Takes `--help`/`-h`, `--color[=WHEN]` and `--no-color` out of the arguments (only before
 * `--`: what follows belongs to the command, e.g. smoke-run's overrides).
 */
export function takeGlobalFlags(argv: readonly string[]): GlobalFlags {
  const rest: string[] = [];
  let help = false;
  let color: ColorChoice | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === "--help" || arg === "-h") help = true;
    else if (arg === "--no-color") color = "never";
    else if (arg === "--color") color = "always";
    else if (arg.startsWith("--color=")) {
      const value = arg.slice("--color=".length);
      if (!(COLOR_CHOICES as readonly string[]).includes(value)) throw new UsageError(`--color takes always, never or auto (got ${JSON.stringify(value)})`);
      color = value as ColorChoice;
    } else rest.push(arg);
  }
  return { rest, help, color };
}

/** Optimal string alignment distance (Levenshtein plus adjacent swaps: --fromat → --format is 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidates near `word`: a unique prefix match first (--form → --format), else those at the
 * smallest edit distance (ties all named, at most three), and none when even the nearest is
 * too far to be a typo of it (--fix is no typo of --all: two of three letters differ).
 */
export function nearest(word: string, candidates: readonly string[]): string[] {
  const prefixed = candidates.filter((c) => c.startsWith(word) && word.length >= 3);
  if (prefixed.length === 1) return prefixed;
  const bare = (s: string) => s.replace(/^-+/, "");
  const scored = candidates.map((c) => ({ c, d: editDistance(bare(word), bare(c)) }));
  const best = Math.min(...scored.map((s) => s.d));
  // A typo changes a few letters: up to one in three of the word, and at least one.
  if (!Number.isFinite(best) || best > Math.max(1, Math.floor(bare(word).length / 3))) return [];
  return scored.filter((s) => s.d === best).map((s) => s.c).slice(0, 3);
}

/** The one candidate nearest to `word`, or undefined when none is near (see nearest). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  return nearest(word, candidates)[0];
}

function orList(words: readonly string[]): string {
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words.at(-1)}` : (words[0] ?? "");
}

/**
 * Checks the flags of `argv` against `flags` the way the command's own parser will read
 * them, and returns the message for the first unknown one ("unknown option --fromat; did
 * you mean --format?"), or undefined when every flag is known. Other mistakes (a missing
 * value) are left to the command, which says them in its own words.
 */
export function unknownFlagMessage(command: string, argv: readonly string[], flags: readonly Flag[]): string | undefined {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const f of flags) {
    const option: { type: "string" | "boolean"; short?: string } = { type: f.takesValue ? "string" : "boolean" };
    if (f.short) option.short = f.short.replace(/^-/, "");
    options[f.name.replace(/^--/, "")] = option;
  }
  try {
    parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
    return undefined;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return undefined;
    const bad = /'([^']+)'/.exec((error as Error).message)?.[1] ?? "";
    const name = bad.split("=")[0]!;
    const see = `see \`hcp-bot ${command} --help\``;
    if (flags.length === 0) return `${command} takes no options, but got ${name} (${see})`;
    if (!name.startsWith("--")) {
      const shorts = flags.filter((f) => f.short).map((f) => `${f.short} (${f.name})`);
      return `unknown option ${name} for ${command}${shorts.length ? `; its short options are ${shorts.join(", ")}` : ""} (${see})`;
    }
    const near = nearest(name, flags.map((f) => f.name));
    return `unknown option ${name} for ${command}${near.length ? `; did you mean ${orList(near)}?` : ""} (${see})`;
  }
}
