// `hcp-bot lint`: inputs collected and read, analyzed under each file's settings, reported.
import { classifyFile } from "../core/analyze/classify.ts";
import { ALL_RULES } from "../core/rules/index.ts";
import { formatReportText } from "../core/render/text.ts";
import { formatReportGithub } from "../core/render/github.ts";
import { toSarif } from "../core/render/sarif.ts";
import { isNotAnalyzed } from "../core/recipe/types.ts";
import { collectInputs, displayPath, InputError, readSources } from "../node/files.ts";
import { statPath } from "../node/fs-callbacks.ts";
import { VERSION } from "../version.ts";
import type { Io, Output } from "../cli.ts";
import { UsageError } from "./args.ts";
import { readLintFlags } from "./lint-flags.ts";
import { analyzeWithSettings } from "./lint-analyze.ts";
import { styleReport } from "./style.ts";

export { LINT_OPTIONS } from "./lint-flags.ts";

const EXIT = { ok: 0, findings: 1, usage: 2 } as const;

export async function lint(argv: string[], io: Io, output: Output): Promise<number> {
  const opts = readLintFlags(argv);
  if (opts.inputs.length === 0) throw new UsageError("lint needs at least one file or folder");

  await rejectUnknownExplicitFiles(opts.inputs);
  const { paths, unmatched } = await collectInputs(opts.inputs, { all: opts.all });
  // No files is not a pass (ruff answers the same way): a folder that yields nothing is named, exit 2.
  if (paths.length === 0) throw new InputError(noFilesMatched(unmatched, opts.all));
  const { files, unread } = await readSources(paths);
  const given = new Set(opts.inputs.map((p) => displayPath(p)));
  const explicitBinary = files.find((f) => given.has(f.path) && f.text.includes("\u0000"));
  if (explicitBinary) throw new InputError(`cannot read ${explicitBinary.path}: it is a binary file, not a recipe or launch script`);

  const { report } = await analyzeWithSettings(files, opts);
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

function noFilesMatched(folders: readonly string[], all: boolean | undefined): string {
  const where = folders.join(", ");
  return all
    ? `no files matched in ${where}: no .py, .yaml/.yml, .sh, .md or pin file below it`
    : `no files matched in ${where}: no file below it is on the default globs (recipes, launch scripts, pins, taken from the project root); name the files, or pass --all to read every .py, .yaml, .sh and .md`;
}

async function rejectUnknownExplicitFiles(inputs: string[]): Promise<void> {
  for (const input of inputs) {
    const info = await statPath(input).catch(() => undefined);
    if (info?.isFile() && !classifyFile(input)) {
      throw new InputError(`cannot lint ${input}: hcp-bot reads .py, .yaml/.yml, .sh, .md, uv.lock, pyproject.toml, requirements*.txt and Dockerfiles`);
    }
  }
}
