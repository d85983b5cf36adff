// hcp-bot's command line. Each command returns an exit code and writes through `io`, so
// tests run it in-process as well as through the real binary.
import { parseArgs } from "node:util";
import type { Rule } from "./core/model/finding.ts";
import { docUrlFor, type DocUrl } from "./core/rules/doc-url.ts";
import { ALL_RULES, ruleById } from "./core/rules/index.ts";
import { COMPARISON_CHECKS } from "./core/ab/checks/index.ts";
import { TE_PIN_NOTE } from "./core/review/te-pin.ts";
import { formatRuleDoc, formatRuleList } from "./core/render/text.ts";
import { InputError } from "./node/files.ts";
import { lint, LINT_OPTIONS } from "./cli/lint.ts";
import { VERSION } from "./version.ts";
import { closest, flagsOfParser, takeGlobalFlags, unknownFlagMessage, UsageError, type Flag } from "./cli/args.ts";
import { formatCommandHelp, formatMainHelp } from "./cli/help.ts";
import { COMMANDS, commandHelp, flagsFromUsage, flagsOf } from "./cli/spec.ts";
import { colorEnabled, defuseControls, makeStyle, styleVerdict, type ColorChoice, type Style } from "./cli/style.ts";

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Whether stdout and stderr are terminals (colour and control-character defusing); default: neither. */
  tty?: { out: boolean; err: boolean };
  /** For NO_COLOR, FORCE_COLOR and TERM; default: none set. */
  env?: Readonly<Record<string, string | undefined>>;
  /** All of stdin, for `lint -` (`--stdin-filename`); absent where there is none. */
  stdin?: () => Promise<string>;
}

/** How human-readable text reaches the user: styled for a terminal, as is otherwise. */
export interface Output {
  style: Style;
  errStyle: Style;
  /** Text that may hold file or log content: control characters defused on a terminal. */
  human(text: string): string;
}

function outputFor(io: Io, color: ColorChoice | undefined): Output {
  const env = io.env ?? {};
  const style = makeStyle(colorEnabled({ flag: color, env, isTTY: io.tty?.out ?? false }));
  const errStyle = makeStyle(colorEnabled({ flag: color, env, isTTY: io.tty?.err ?? false }));
  const defuse = (io.tty?.out ?? false) || style.color;
  return { style, errStyle, human: (text) => (defuse ? defuseControls(text) : text) };
}

export const EXIT = { ok: 0, findings: 1, usage: 2 } as const;

const DOC_OPTIONS = { format: { type: "string", short: "f" } } as const;


type Documented = Pick<Rule, "id" | "name" | "severity" | "doc"> & { summary?: string };

/** `--format text|json` of `rules` and `explain`; the rest of the arguments as positionals. */
function docFormat(argv: string[]): { json: boolean; rest: string[] } {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: DOC_OPTIONS });
  const format = values.format ?? "text";
  if (format !== "text" && format !== "json") throw new UsageError(`--format takes text or json (got ${JSON.stringify(format)})`);
  return { json: format === "json", rest: positionals };
}

/** A rule as `rules --format json` and `explain --format json` print it; `url` is its page (null when none is configured). */
function ruleJson(rule: Documented, docUrl: DocUrl) {
  return { id: rule.id, name: rule.name, severity: rule.severity, summary: rule.summary ?? rule.doc.checks.split("\n")[0], doc: rule.doc, url: docUrl(rule.id) ?? null };
}

function rules(argv: string[], io: Io): number {
  const { json, rest } = docFormat(argv);
  if (rest.length > 0) throw new UsageError(`rules takes no arguments, but got ${rest[0]} (see \`hcp-bot explain ID\` for one rule)`);
  const docUrl = docUrlFor(io.env);
  io.out(json ? JSON.stringify(ALL_RULES.map((r) => ruleJson(r, docUrl)), null, 2) + "\n" : formatRuleList(ALL_RULES));
  return EXIT.ok;
}

function explain(argv: string[], io: Io): number {
  const { json, rest } = docFormat(argv);
  const id = rest[0];
  if (!id) throw new UsageError("explain needs a rule id, e.g. `hcp-bot explain HCP001`");
  // The A/B smoke checks (AB001, AB002) explain themselves the same way.
  // HCP015 is a note on a PR's diff, not a configuration rule, and is documented beside its check.
  const rule: Documented | undefined =
    ruleById(id.toUpperCase()) ??
    ALL_RULES.find((r) => r.name === id) ??
    [TE_PIN_NOTE, ...COMPARISON_CHECKS].find((c) => c.id === id.toUpperCase() || c.name === id);
  if (!rule) throw new UsageError(`unknown rule ${id} (see \`hcp-bot rules\`; the A/B smoke checks are ${COMPARISON_CHECKS.map((c) => c.id).join(", ")})`);
  const url = docUrlFor(io.env)(rule.id);
  io.out(json ? JSON.stringify(ruleJson(rule, () => url), null, 2) + "\n" : formatRuleDoc(rule) + (url ? `Documentation: ${url}\n` : ""));
  return EXIT.ok;
}

/**
 * The flags of a command, for the unknown-flag check: each command's own parser options
 * (smoke-run's from its usage text), so the check can never refuse a flag the command takes.
 */
export async function commandFlags(command: string): Promise<Flag[]> {
  switch (command) {
    case "lint":
      return flagsOfParser(LINT_OPTIONS);
    case "rules":
    case "explain":
      return flagsOfParser(DOC_OPTIONS);
    case "verdict":
      return flagsOfParser((await import("./node/verdict-cli.ts")).VERDICT_OPTIONS);
    case "init-workflow":
      return flagsOfParser((await import("./gpu/init-workflow.ts")).INIT_WORKFLOW_OPTIONS);
    case "smoke-run":
      return flagsFromUsage((await import("./gpu/smoke-run.ts")).SMOKE_RUN_USAGE);
    default: {
      const help = commandHelp(command);
      return help ? flagsOf(help) : [];
    }
  }
}

async function helpText(command: string, style: Style): Promise<string> {
  if (command === "smoke-run") return (await import("./gpu/smoke-run.ts")).SMOKE_RUN_USAGE;
  return formatCommandHelp(commandHelp(command)!, style);
}

function unknownCommand(word: string): UsageError {
  const near = closest(word, COMMANDS.map((c) => c.name));
  return new UsageError(`unknown command ${word}${near ? `; did you mean ${near}?` : ""} (see \`hcp-bot --help\`)`);
}

async function run(command: string, rest: string[], io: Io, output: Output): Promise<number> {
  switch (command) {
    case "lint":
      return await lint(rest, io, output);
    case "advise": {
      const { adviseCommand } = await import("./cli/advise.ts");
      return await adviseCommand(rest, { out: io.out, style: output.style });
    }
    case "serve":
      // The server is the hcp-bot-server package's: `hcp-bot` runs it where it is installed (src/cli/serve-loader.ts).
      return await (await import("./cli/serve-loader.ts")).serve(io);
    case "server": {
      // Loaded on demand: the protocol library is for editors, not for lint's start-up.
      const { serverCommand } = await import("./cli/lsp/server.ts");
      return await serverCommand(rest);
    }
    case "rules":
      return rules(rest, io);
    case "verdict": {
      // Loaded on demand like serve; VerdictUsageError (bad args, unreadable log) exits 2.
      const { verdictCommand, VerdictUsageError } = await import("./node/verdict-cli.ts");
      const machine = rest.some((a, i) => (a === "--format" || a === "-f" ? rest[i + 1] !== "text" : a.startsWith("--format=") && a !== "--format=text"));
      const out = machine ? io.out : (t: string) => io.out(styleVerdict(output.human(t), output.style));
      return await verdictCommand(rest, { out, err: io.err }).catch((error: unknown) => {
        if (error instanceof VerdictUsageError) throw new UsageError(error.message);
        throw error;
      });
    }
    case "explain":
      return explain(rest, io);
    case "smoke-run": {
      // Loaded on demand: lint must not load execa.
      const { smokeRun } = await import("./gpu/smoke-run.ts");
      return await smokeRun(rest, { out: io.out, err: io.err, live: process.stdout, env: process.env, cwd: process.cwd() });
    }
    case "init-workflow": {
      const { initWorkflow } = await import("./gpu/init-workflow.ts");
      return await initWorkflow(rest, { out: io.out, err: io.err, env: process.env, cwd: process.cwd() });
    }
    default:
      throw unknownCommand(command);
  }
}

export async function main(argv: string[], io: Io): Promise<number> {
  let output = outputFor(io, undefined);
  try {
    const globals = takeGlobalFlags(argv);
    output = outputFor(io, globals.color);
    const [command, ...rest] = globals.rest;
    if (command === "--version" || command === "-V" || command === "version") {
      io.out(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (command === undefined) {
      (globals.help ? io.out : io.err)(formatMainHelp(globals.help ? output.style : output.errStyle));
      return globals.help ? EXIT.ok : EXIT.usage;
    }
    if (command === "help") {
      const topic = globals.help ? "help" : rest[0];
      if (topic === undefined) io.out(formatMainHelp(output.style));
      else if (commandHelp(topic)) io.out(await helpText(topic, output.style));
      else throw unknownCommand(topic);
      return EXIT.ok;
    }
    if (!commandHelp(command)) throw unknownCommand(command);
    if (globals.help) {
      io.out(await helpText(command, output.style));
      return EXIT.ok;
    }
    const unknown = unknownFlagMessage(command, rest, await commandFlags(command));
    if (unknown) throw new UsageError(unknown);
    return await run(command, rest, io, output);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))) {
      io.err(`${output.errStyle.paint("red", "hcp-bot:")} ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof InputError) {
      io.err(`${output.errStyle.paint("red", "hcp-bot:")} ${output.human(error.message)}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}
