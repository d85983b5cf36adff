// hcp-bot's command line. Each command returns an exit code and writes through `io`, so
// tests run it in-process as well as through the real binary.
import { parseArgs } from "node:util";
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import * as z from "zod";
import { classifyFile } from "./core/analyze/classify.ts";
import { ALL_RULES, ruleById } from "./core/rules/index.ts";
import { formatReportText, formatRuleDoc, formatRuleList } from "./core/render/text.ts";
import { formatReportGithub } from "./core/render/github.ts";
import { toSarif } from "./core/render/sarif.ts";
import { collectPaths, displayPath, InputError, readSources } from "./node/files.ts";
import { loadPythonLanguage } from "./node/treesitter.ts";
import { ParallelAnalyzer } from "./node/parallel.ts";
import { VERSION } from "./version.ts";
import { readServerSettings, SettingsError } from "./node/env.ts";

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const EXIT = { ok: 0, findings: 1, usage: 2 } as const;

const USAGE = `hcp-bot ${VERSION}: checks Hierarchical Context Parallel settings in Megatron-Bridge configs

Usage:
  hcp-bot lint PATH... [--format text|json|sarif|github] [--select IDS] [--ignore IDS]
                       [--gpus-per-node N] [--all]
  hcp-bot serve                 run the GitHub App server (settings from the environment / .env)
  hcp-bot rules                 list the rules
  hcp-bot explain RULE_ID       print a rule's documentation
  hcp-bot verdict LOG [--exit-code N] [--expect-hcp|--no-expect-hcp] [--gpu H100] [--format text|json|markdown]
                                did a torchrun smoke-run log really pass with HCP on? (exit 0 = pass)
  hcp-bot smoke-run --recipe NAME [...] [-- OVERRIDES...]
                                run the HCP smoke test on this GPU machine (the workflow's step)
  hcp-bot init-workflow [--labels L1,L2] [--timeout-minutes N] [--out FILE] [--force]
                                write the GitHub Actions smoke workflow
  hcp-bot --version

lint reads files as given, and folders through the default globs (recipes, perf
recipes, providers, examples, launch scripts, uv.lock/pyproject); --all reads every
.py/.yaml/.sh/.md below a folder. Exit status: 1 when an error is found, 2 on bad
usage or unreadable input, 0 otherwise.
`;

class UsageError extends Error {}

const LintOptions = z.object({
  format: z.enum(["text", "json", "sarif", "github"]).default("text"),
  select: z.string().optional(),
  ignore: z.string().optional(),
  "gpus-per-node": z.coerce.number().int().positive().optional(),
  all: z.boolean().optional(),
});

function ruleIdList(value: string | undefined): string[] | undefined {
  if (!value) return undefined;
  const ids = value.split(",").map((s) => s.trim().toUpperCase()).filter(Boolean);
  for (const id of ids) if (!ruleById(id)) throw new UsageError(`unknown rule id ${id} (see \`hcp-bot rules\`)`);
  return ids;
}

async function lint(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      format: { type: "string", short: "f" },
      select: { type: "string" },
      ignore: { type: "string" },
      "gpus-per-node": { type: "string" },
      all: { type: "boolean" },
    },
  });
  const parsed = LintOptions.safeParse(values);
  if (!parsed.success) throw new UsageError(z.prettifyError(parsed.error));
  const opts = parsed.data;
  if (positionals.length === 0) throw new UsageError("lint needs at least one file or folder");

  await rejectUnknownExplicitFiles(positionals);
  const paths = await collectPaths(positionals, { all: opts.all });
  const { files, unread } = await readSources(paths);
  const given = new Set(positionals.map((p) => displayPath(p)));
  const explicitBinary = files.find((f) => given.has(f.path) && f.text.includes("\u0000"));
  if (explicitBinary) throw new InputError(`cannot read ${explicitBinary.path}: it is a binary file, not a recipe or launch script`);

  const analyzer = new ParallelAnalyzer();
  const report = await analyzer
    .analyze(files, {
      python: await loadPythonLanguage(),
      gpusPerNode: opts["gpus-per-node"],
      gpusPerNodeSource: "--gpus-per-node",
      select: ruleIdList(opts.select),
      ignore: ruleIdList(opts.ignore),
    })
    .finally(() => analyzer.close());
  switch (opts.format) {
    case "text":
      io.out(formatReportText({ files: report.files, units: report.units.length, findings: report.findings, diagnostics: report.diagnostics }));
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
  const unanalyzed = [...unread, ...report.diagnostics.filter((d) => d.code === "too-large" || d.code === "unreadable").map((d) => ({ path: d.file, reason: d.message }))];
  for (const u of unanalyzed) io.err(`hcp-bot: not analyzed: ${u.path}: ${u.reason.replace(/^not analyzed: /, "")}\n`);
  if (unanalyzed.length > 0) return EXIT.usage;
  const failed = report.findings.some((f) => f.severity === "error") || report.diagnostics.some((d) => d.severity === "error");
  return failed ? EXIT.findings : EXIT.ok;
}

async function rejectUnknownExplicitFiles(inputs: string[]): Promise<void> {
  for (const input of inputs) {
    const info = await stat(input).catch(() => undefined);
    if (info?.isFile() && !classifyFile(input)) {
      throw new InputError(`cannot lint ${input}: hcp-bot reads .py, .yaml/.yml, .sh, .md, uv.lock, pyproject.toml, requirements*.txt and Dockerfiles`);
    }
  }
}

function explain(argv: string[], io: Io): number {
  const id = argv[0];
  if (!id) throw new UsageError("explain needs a rule id, e.g. `hcp-bot explain HCP001`");
  const rule = ruleById(id.toUpperCase()) ?? ALL_RULES.find((r) => r.name === id);
  if (!rule) throw new UsageError(`unknown rule ${id} (see \`hcp-bot rules\`)`);
  io.out(formatRuleDoc(rule));
  return EXIT.ok;
}

async function serve(io: Io): Promise<number> {
  // The setup flow writes the new app's credentials to .env; read them like Probot does.
  if (existsSync(".env")) process.loadEnvFile(".env");
  let settings;
  try {
    settings = readServerSettings(process.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      io.err(`hcp-bot: configuration error: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  // Loaded on demand: linting should not pay for Probot's start-up.
  const { startServer } = await import("./node/server.ts");
  const server = await startServer(settings);
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
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return await new Promise<number>(() => {});
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "lint":
        return await lint(rest, io);
      case "serve":
        return await serve(io);
      case "rules":
        io.out(formatRuleList(ALL_RULES));
        return EXIT.ok;
      case "verdict": {
        // Loaded on demand like serve; VerdictUsageError (bad args, unreadable log) exits 2.
        const { verdictCommand, VerdictUsageError } = await import("./node/verdict-cli.ts");
        return await verdictCommand(rest, io).catch((error: unknown) => {
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
      case "--version":
      case "version":
        io.out(`${VERSION}\n`);
        return EXIT.ok;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))) {
      io.err(`hcp-bot: ${error.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    if (error instanceof InputError) {
      io.err(`hcp-bot: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}
