// hcp-bot's command line. Each command returns an exit code and writes through `io`, so
// tests run it in-process as well as through the real binary.
import { parseArgs } from "node:util";
import { existsSync } from "node:fs";
import { classifyFile } from "./core/analyze/classify.ts";
import { ALL_RULES, ruleById } from "./core/rules/index.ts";
import { COMPARISON_CHECKS } from "./core/compare/checks/index.ts";
import { TE_PIN_NOTE } from "./core/review/te-pin.ts";
import { formatReportText, formatRuleDoc, formatRuleList } from "./core/render/text.ts";
import { formatReportGithub } from "./core/render/github.ts";
import { toSarif } from "./core/render/sarif.ts";
import type { SourceFile } from "./core/model/source.ts";
import { isNotAnalyzed } from "./core/recipe/types.ts";
import { collectInputs, displayPath, InputError, readSources } from "./node/files.ts";
import { bridgeModules, bridgePackageRoot, importsBridge } from "./node/bridge-package.ts";
import { loadUpstreamIndex } from "./node/upstream-index.ts";
import type { UpstreamRecipes } from "./core/analyze/bridge-index.ts";
import { statPath } from "./node/fs-callbacks.ts";
import { loadPythonLanguage, preferQuickExit } from "./node/treesitter.ts";
import { PARALLEL_MIN_CHARS, ParallelAnalyzer } from "./node/parallel.ts";
import { VERSION } from "./version.ts";
import { closest, flagsOfParser, takeGlobalFlags, unknownFlagMessage, UsageError, type Flag } from "./cli/args.ts";
import { formatCommandHelp, formatMainHelp } from "./cli/help.ts";
import { COMMANDS, commandHelp, flagsFromUsage, flagsOf } from "./cli/spec.ts";
import { colorEnabled, defuseControls, makeStyle, styleReport, styleVerdict, type ColorChoice, type Style } from "./cli/style.ts";

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Whether stdout and stderr are terminals (colour and control-character defusing); default: neither. */
  tty?: { out: boolean; err: boolean };
  /** For NO_COLOR, FORCE_COLOR and TERM; default: none set. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** How human-readable text reaches the user: styled for a terminal, as is otherwise. */
interface Output {
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


const LINT_FORMATS = ["text", "json", "sarif", "github"] as const;

interface LintFlags {
  format: (typeof LINT_FORMATS)[number];
  select?: string;
  ignore?: string;
  "gpus-per-node"?: number;
  all?: boolean;
}

/**
 * lint's flag values (from parseArgs, so already strings and booleans) checked by hand: a zod
 * schema built for five flags cost every lint's start-up more than the lint (bench:cli).
 */
function lintFlags(values: { format?: string; select?: string; ignore?: string; "gpus-per-node"?: string; all?: boolean }): LintFlags {
  const format = values.format ?? "text";
  if (!(LINT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format takes ${LINT_FORMATS.join(", ")} (got ${JSON.stringify(format)})`);
  const flags: LintFlags = { format: format as LintFlags["format"], select: values.select, ignore: values.ignore, all: values.all };
  const gpus = values["gpus-per-node"];
  if (gpus !== undefined) {
    const n = Number(gpus);
    if (!/^\s*\d+\s*$/.test(gpus) || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`--gpus-per-node takes a whole number of GPUs, 1 or more (got ${JSON.stringify(gpus)})`);
    flags["gpus-per-node"] = n;
  }
  return flags;
}

function ruleIdList(value: string | undefined): string[] | undefined {
  if (!value) return undefined;
  const ids = value.split(",").map((s) => s.trim().toUpperCase()).filter(Boolean);
  for (const id of ids) if (!ruleById(id)) throw new UsageError(`unknown rule id ${id} (see \`hcp-bot rules\`)`);
  return ids;
}

/** The flags `lint` takes (its parser's, and what the unknown-flag check compares with). */
export const LINT_OPTIONS = {
  format: { type: "string", short: "f" },
  select: { type: "string" },
  ignore: { type: "string" },
  "gpus-per-node": { type: "string" },
  all: { type: "boolean" },
} as const;

async function lint(argv: string[], io: Io, output: Output): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: LINT_OPTIONS,
  });
  const opts = lintFlags(values);
  if (positionals.length === 0) throw new UsageError("lint needs at least one file or folder");

  await rejectUnknownExplicitFiles(positionals);
  const { paths, unmatched } = await collectInputs(positionals, { all: opts.all });
  // No files is not a pass (ruff answers the same way): a folder that yields nothing is named, exit 2.
  if (paths.length === 0) throw new InputError(noFilesMatched(unmatched, opts.all));
  const { files, unread } = await readSources(paths);
  const given = new Set(positionals.map((p) => displayPath(p)));
  const explicitBinary = files.find((f) => given.has(f.path) && f.text.includes("\u0000"));
  if (explicitBinary) throw new InputError(`cannot read ${explicitBinary.path}: it is a binary file, not a recipe or launch script`);

  quickExitFor(files);
  const { library, upstream } = upstreamRecipes(files);
  const analyzer = new ParallelAnalyzer();
  const report = await analyzer
    .analyze(files, {
      python: await loadPythonLanguage(),
      gpusPerNode: opts["gpus-per-node"],
      gpusPerNodeSource: "--gpus-per-node",
      select: ruleIdList(opts.select),
      ignore: ruleIdList(opts.ignore),
      library,
      upstream,
    })
    .finally(() => analyzer.close());
  switch (opts.format) {
    case "text":
      io.out(styleReport(output.human(formatReportText({ files: report.files, units: report.units.length, findings: report.findings, diagnostics: report.diagnostics })), output.style));
      break;
    case "json":
      io.out(
        JSON.stringify(
          {
            version: VERSION,
            files: report.files,
            configurations: report.units.length,
            findings: report.findings,
            diagnostics: report.diagnostics,
            transformerEngine: report.project.transformerEngine ?? null,
          },
          null,
          2,
        ) + "\n",
      );
      break;
    case "sarif":
      io.out(JSON.stringify(toSarif(report.findings, report.diagnostics, { toolVersion: VERSION, rules: ALL_RULES }), null, 2) + "\n");
      break;
    case "github":
      io.out(formatReportGithub(report.findings, report.diagnostics));
      break;
  }
  // Input that was not analyzed (too large, binary) is never passed over quietly: one line each, exit 2.
  const unanalyzed = [...unread, ...report.diagnostics.filter(isNotAnalyzed).map((d) => ({ path: d.file, reason: d.message }))];
  for (const u of unanalyzed) io.err(`hcp-bot: not analyzed: ${u.path}: ${u.reason.replace(/^not analyzed: /, "")}\n`);
  if (unmatched.length > 0) io.err(`hcp-bot: ${noFilesMatched(unmatched, opts.all)}\n`);
  if (unanalyzed.length > 0 || unmatched.length > 0) return EXIT.usage;
  const failed = report.findings.some((f) => f.severity === "error") || report.diagnostics.some((d) => d.severity === "error");
  return failed ? EXIT.findings : EXIT.ok;
}

/**
 * Where a user's script finds the upstream recipe it starts from: the installed Bridge's
 * modules it imports (the version the user runs), else hcp-bot's index of upstream recipes.
 * An index that cannot be used is an error (exit 2), not a silent unknown.
 */
function upstreamRecipes(files: readonly SourceFile[]): { library: SourceFile[]; upstream?: UpstreamRecipes } {
  if (!importsBridge(files)) return { library: [] };
  const root = bridgePackageRoot();
  if (root) return { library: bridgeModules(files, root), upstream: { unavailable: `the megatron.bridge found at ${root}, which is read before hcp-bot's index, did not define it` } };
  const loaded = loadUpstreamIndex();
  if ("error" in loaded) throw new InputError(`${loaded.error}; regenerate it with npm run index:bridge, or unset HCP_BRIDGE_INDEX to use the package's own`);
  return { library: [], upstream: loaded };
}

function noFilesMatched(folders: readonly string[], all: boolean | undefined): string {
  const where = folders.join(", ");
  return all
    ? `no files matched in ${where}: no .py, .yaml/.yml, .sh, .md or pin file below it`
    : `no files matched in ${where}: no file below it is on the default globs (recipes, launch scripts, pins, taken from the project root); name the files, or pass --all to read every .py, .yaml, .sh and .md`;
}

/** A lint small enough to run on this thread is over before the grammar's optimizing compiles would be. */
function quickExitFor(files: readonly { text: string }[]): void {
  preferQuickExit(files.reduce((n, f) => n + f.text.length, 0) < PARALLEL_MIN_CHARS);
}

async function rejectUnknownExplicitFiles(inputs: string[]): Promise<void> {
  for (const input of inputs) {
    const info = await statPath(input).catch(() => undefined);
    if (info?.isFile() && !classifyFile(input)) {
      throw new InputError(`cannot lint ${input}: hcp-bot reads .py, .yaml/.yml, .sh, .md, uv.lock, pyproject.toml, requirements*.txt and Dockerfiles`);
    }
  }
}

function explain(argv: string[], io: Io): number {
  const id = argv[0];
  if (!id) throw new UsageError("explain needs a rule id, e.g. `hcp-bot explain HCP001`");
  // The A/B smoke checks (AB001, AB002) explain themselves the same way.
  // HCP015 is a note on a PR's diff, not a configuration rule, and is documented beside its check.
  const rule =
    ruleById(id.toUpperCase()) ??
    ALL_RULES.find((r) => r.name === id) ??
    [TE_PIN_NOTE, ...COMPARISON_CHECKS].find((c) => c.id === id.toUpperCase() || c.name === id);
  if (!rule) throw new UsageError(`unknown rule ${id} (see \`hcp-bot rules\`; the A/B smoke checks are ${COMPARISON_CHECKS.map((c) => c.id).join(", ")})`);
  io.out(formatRuleDoc(rule));
  return EXIT.ok;
}

async function serve(io: Io): Promise<number> {
  // The setup flow writes the new app's credentials to .env; read them like Probot does.
  if (existsSync(".env")) process.loadEnvFile(".env");
  // Loaded on demand: its zod schema would cost lint's start-up for nothing.
  const { readServerSettings, SettingsError } = await import("./node/env.ts");
  let settings;
  try {
    settings = readServerSettings(process.env);
    // A damaged App key parses; only a test signature shows it (src/edge/key.ts, as on the edge hosts).
    if (settings.mode === "app") await (await import("./edge/key.ts")).checkPrivateKey(settings.privateKey!);
  } catch (error) {
    if (error instanceof SettingsError) {
      io.err(`hcp-bot: configuration error: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  // Loaded on demand: linting should not pay for Probot's start-up.
  const { startServer } = await import("./node/server.ts");
  // Readable lines for a person at a terminal, JSON for a log collector, unless LOG_FORMAT says.
  const server = await startServer({ ...settings, logFormat: settings.logFormat ?? (process.stdout.isTTY ? "pretty" : "json") });
  // The playground's files are built now, so the first visitor does not wait for esbuild.
  void server.web.files.prepare().catch((error: Error) => io.err(`hcp-bot: the playground could not be built: ${error.message}\n`));
  io.err(
    settings.mode === "app"
      ? `hcp-bot ${VERSION}: GitHub App listening on port ${server.port} (webhooks at ${settings.webhookPath}, health at /healthz)\n`
      : `hcp-bot ${VERSION}: no GitHub App credentials yet; open http://localhost:${server.port}/ to register the app from app.yml (or http://localhost:${server.port}/playground to try the rules first)\n`,
  );
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  // SIGTERM (a rolling deploy, Kubernetes): refuse new work, let running jobs finish for up to
  // HCP_DRAIN_SECONDS, hand the rest back to the store, exit.
  const drain = async () => {
    const { handedBack } = await server.drain();
    if (handedBack > 0) io.err(`hcp-bot: handed ${handedBack} unfinished job(s) back to the store for another replica\n`);
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", drain);
  return await new Promise<number>(() => {});
}

/**
 * The flags of a command, for the unknown-flag check: each command's own parser options
 * (smoke-run's from its usage text), so the check can never refuse a flag the command takes.
 */
export async function commandFlags(command: string): Promise<Flag[]> {
  switch (command) {
    case "lint":
      return flagsOfParser(LINT_OPTIONS);
    case "verdict":
      return flagsOfParser((await import("./node/verdict-cli.ts")).VERDICT_OPTIONS);
    case "init-workflow":
      return flagsOfParser((await import("./runner/init-workflow.ts")).INIT_WORKFLOW_OPTIONS);
    case "smoke-run":
      return flagsFromUsage((await import("./runner/smoke-run.ts")).SMOKE_RUN_USAGE);
    default: {
      const help = commandHelp(command);
      return help ? flagsOf(help) : [];
    }
  }
}

async function helpText(command: string, style: Style): Promise<string> {
  if (command === "smoke-run") return (await import("./runner/smoke-run.ts")).SMOKE_RUN_USAGE;
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
      return await serve(io);
    case "rules":
      io.out(formatRuleList(ALL_RULES));
      return EXIT.ok;
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
      const { smokeRun } = await import("./runner/smoke-run.ts");
      return await smokeRun(rest, { out: io.out, err: io.err, live: process.stdout, env: process.env, cwd: process.cwd() });
    }
    case "init-workflow": {
      const { initWorkflow } = await import("./runner/init-workflow.ts");
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
