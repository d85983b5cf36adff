// `hcp-bot lint`'s flags: the parser's options (which the unknown-flag check also compares
// with) and their values checked by hand: a zod schema built for a handful of flags cost every
// lint's start-up more than the lint (bench:cli).
import { parseArgs } from "node:util";
import { ruleById } from "../core/rules/index.ts";
import { UsageError } from "./args.ts";

export const LINT_FORMATS = ["text", "json", "sarif", "github"] as const;

/** The flags `lint` takes (its parser's, and what the unknown-flag check compares with). */
export const LINT_OPTIONS = {
  format: { type: "string", short: "f" },
  select: { type: "string" },
  ignore: { type: "string" },
  "gpus-per-node": { type: "string" },
  all: { type: "boolean" },
  config: { type: "string" },
  isolated: { type: "boolean" },
  "add-noqa": { type: "boolean" },
  baseline: { type: "string" },
  "baseline-write": { type: "string" },
  fix: { type: "boolean" },
  diff: { type: "boolean" },
  "exit-zero": { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
  statistics: { type: "boolean" },
  "output-file": { type: "string", short: "o" },
  "stdin-filename": { type: "string" },
  watch: { type: "boolean", short: "w" },
} as const;

export interface LintFlags {
  format: (typeof LINT_FORMATS)[number];
  select?: string[];
  ignore?: string[];
  gpusPerNode?: number;
  all?: boolean;
  config?: string;
  isolated?: boolean;
  addNoqa?: boolean;
  baseline?: string;
  baselineWrite?: string;
  /** `--fix`: write the findings' edits; `--diff`: print them as a unified diff instead. */
  fix?: boolean;
  diff?: boolean;
  /** Exit 0 even when findings are reported (bad usage and unanalyzed input are still 2). */
  exitZero?: boolean;
  /** The findings only: no summary line, no progress notes. */
  quiet?: boolean;
  /** A count per rule instead of the findings. */
  statistics?: boolean;
  outputFile?: string;
  /** The path `-` (stdin) is linted as. */
  stdinFilename?: string;
  watch?: boolean;
  inputs: string[];
}

type Values = ReturnType<typeof parseLintArgs>["values"];

function parseLintArgs(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, options: LINT_OPTIONS });
}

export function readLintFlags(argv: string[]): LintFlags {
  const { values, positionals } = parseLintArgs(argv);
  const flags: LintFlags = {
    format: formatOf(values),
    select: ruleIdList(values.select),
    ignore: ruleIdList(values.ignore),
    all: values.all,
    config: values.config,
    isolated: values.isolated,
    addNoqa: values["add-noqa"],
    baseline: values.baseline,
    baselineWrite: values["baseline-write"],
    fix: values.fix,
    diff: values.diff,
    exitZero: values["exit-zero"],
    quiet: values.quiet,
    statistics: values.statistics,
    outputFile: values["output-file"],
    stdinFilename: values["stdin-filename"],
    watch: values.watch,
    inputs: positionals,
  };
  checkCombinations(flags);
  const writers = (["add-noqa", "baseline-write"] as const).filter((k) => values[k] !== undefined);
  if (writers.length > 1) throw new UsageError("--add-noqa and --baseline-write are two ways to accept today's findings: use one");
  const fixers = (["fix", "diff"] as const).filter((k) => values[k]);
  if (writers.length > 0 && fixers.length > 0) throw new UsageError(`--${fixers[0]} and --${writers[0]} do opposite things (fix the findings, or accept them): use one`);
  if (values.config !== undefined && values.isolated) throw new UsageError("--config and --isolated contradict each other: name one settings file, or use none");
  const gpus = values["gpus-per-node"];
  if (gpus !== undefined) flags.gpusPerNode = wholeNumber("--gpus-per-node", gpus, 1);
  return flags;
}

/** Flags that cannot go together, each refused with why. */
function checkCombinations(flags: LintFlags): void {
  const stdin = flags.inputs.includes("-");
  if (stdin && flags.stdinFilename === undefined) throw new UsageError("reading stdin (-) needs --stdin-filename NAME: the kind of file, its settings and its findings' paths come from that name");
  if (!stdin && flags.stdinFilename !== undefined) throw new UsageError("--stdin-filename names what stdin is linted as: give - among the inputs");
  if (flags.inputs.filter((i) => i === "-").length > 1) throw new UsageError("stdin (-) can be read once");
  if (stdin && (flags.diff || flags.addNoqa || flags.watch)) throw new UsageError(`--${flags.diff ? "diff" : flags.addNoqa ? "add-noqa" : "watch"} needs files on disk, not stdin`);
  if (flags.watch && (flags.fix || flags.baselineWrite !== undefined || flags.outputFile !== undefined)) throw new UsageError("--watch reports on the terminal as files change: it does not take --fix, --baseline-write or --output-file");
  if (flags.statistics && flags.format !== "text") throw new UsageError("--statistics is a text report: leave out --format, or count the findings in the JSON");
}

function formatOf(values: Values): LintFlags["format"] {
  const format = values.format ?? "text";
  if (!(LINT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format takes ${LINT_FORMATS.join(", ")} (got ${JSON.stringify(format)})`);
  return format as LintFlags["format"];
}

function wholeNumber(flag: string, text: string, min: number): number {
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} takes a whole number of GPUs, ${min} or more (got ${JSON.stringify(text)})`);
  return n;
}

function ruleIdList(value: string | undefined): string[] | undefined {
  if (!value) return undefined;
  const ids = value.split(",").map((s) => s.trim().toUpperCase()).filter(Boolean);
  for (const id of ids) if (!ruleById(id)) throw new UsageError(`unknown rule id ${id} (see \`hcp-bot rules\`)`);
  return ids;
}
