// `hcp-bot lint`: inputs collected and read, analyzed under each file's settings, reported.
import { classifyFile } from "../core/analyze/classify.ts";
import { ALL_RULES } from "../core/rules/index.ts";
import { formatReportText, plural } from "../core/render/text.ts";
import { isFixable, uneditablePaths } from "../core/rules/apply-fixes.ts";
import type { AnalysisReport } from "../core/analyze/index.ts";
import { formatReportGithub } from "../core/render/github.ts";
import { toSarif } from "../core/render/sarif.ts";
import { isNotAnalyzed } from "../core/recipe/types.ts";
import { collectInputs, displayPath, InputError, readSources } from "../node/files.ts";
import { VERSION } from "../version.ts";
import type { Io, Output } from "../cli.ts";
import { UsageError } from "./args.ts";
import { readLintFlags, type LintFlags } from "./lint-flags.ts";
import { analyzeWithSettings } from "./lint-analyze.ts";
import { styleReport } from "./style.ts";
import { applyBaseline, writeBaseline } from "./lint-baseline.ts";
import { addNoqa } from "../core/rules/add-noqa.ts";
import { UNUSED_SUPPRESSION_ID } from "../core/rules/hcp100-unused-suppression.ts";
import type { Finding } from "../core/model/finding.ts";
import type { SourceFile } from "../core/model/source.ts";
import { statPath, writeText } from "../node/fs-callbacks.ts";

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

  let analysis = await analyzeWithSettings(files, opts);
  const { report } = analysis;
  if (opts.baselineWrite !== undefined) {
    const n = await writeBaseline(opts.baselineWrite, report.findings);
    io.err(`hcp-bot: wrote ${plural(n, "finding")} to the baseline ${opts.baselineWrite}\n`);
    return EXIT.ok;
  }
  if (opts.addNoqa) return await writeNoqa(report.findings, files, io);
  const unanalyzed = [...unread, ...report.diagnostics.filter(isNotAnalyzed).map((d) => ({ path: d.file, reason: d.message }))];
  let fixed = 0;
  let current: readonly SourceFile[] = files;
  if (opts.fix || opts.diff) {
    // Loaded only here: a plain lint does not parse the rounds or the diff (bench:cli).
    const { fixInRounds, fixesAsDiff, writeFixed } = await import("./lint-fix.ts");
    const rounds = await fixInRounds(files, analysis, (edited) => analyzeWithSettings(edited, opts));
    for (const path of rounds.refused) io.err(`hcp-bot: not fixed: ${path}: it has a parse error (or was not analyzed), and its findings were judged on what could be read\n`);
    if (rounds.unsettled) io.err("hcp-bot: the fixes still changed the files after 10 rounds (two fixes undo each other?); what is left is reported\n");
    if (opts.diff) {
      io.out(fixesAsDiff(rounds.changed));
      io.err(`hcp-bot: --fix would fix ${plural(rounds.fixed, "finding")} in ${plural(rounds.changed.size, "file")}\n`);
      reportUnanalyzed(unanalyzed, unmatched, opts.all, io);
      return unanalyzed.length > 0 || unmatched.length > 0 ? EXIT.usage : rounds.changed.size > 0 ? EXIT.findings : EXIT.ok;
    }
    await writeFixed(rounds.changed);
    [analysis, fixed, current] = [rounds.analysis, rounds.fixed, rounds.files];
  }
  await printReport(analysis.report, current, { ...opts, fixed }, io, output);
  // Input that was not analyzed (too large, binary) is never passed over quietly: one line each, exit 2.
  reportUnanalyzed(unanalyzed, unmatched, opts.all, io);
  if (unanalyzed.length > 0 || unmatched.length > 0) return EXIT.usage;
  const failed = analysis.report.findings.some((f) => f.severity === "error") || analysis.report.diagnostics.some((d) => d.severity === "error");
  return failed ? EXIT.findings : EXIT.ok;
}

function reportUnanalyzed(unanalyzed: ReadonlyArray<{ path: string; reason: string }>, unmatched: readonly string[], all: boolean | undefined, io: Io): void {
  for (const u of unanalyzed) io.err(`hcp-bot: not analyzed: ${u.path}: ${u.reason.replace(/^not analyzed: /, "")}\n`);
  if (unmatched.length > 0) io.err(`hcp-bot: ${noFilesMatched(unmatched, all)}\n`);
}

/** The report in the chosen format (the baseline, when given, taken out first). */
async function printReport(report: AnalysisReport, files: readonly SourceFile[], opts: LintFlags & { fixed: number }, io: Io, output: Output): Promise<void> {
  if (opts.baseline !== undefined) {
    const { findings, baselined } = await applyBaseline(opts.baseline, report.findings);
    report.findings = findings;
    report.baselined = baselined;
  }
  switch (opts.format) {
    case "text": {
      const editable = new Set(files.map((f) => f.path));
      for (const p of uneditablePaths(report.diagnostics, files)) editable.delete(p);
      const summary = { files: report.files, units: report.units.length, findings: report.findings, diagnostics: report.diagnostics, suppressed: report.suppressed, baselined: report.baselined, fixed: opts.fixed, fixable: (f: Finding) => isFixable(f, editable) };
      io.out(styleReport(output.human(formatReportText(summary)), output.style));
      break;
    }
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
}

/** `--add-noqa`: the comments written into the files; HCP100's own findings are fixed, never hidden. */
async function writeNoqa(findings: readonly Finding[], files: readonly SourceFile[], io: Io): Promise<number> {
  const { texts, added, skipped } = addNoqa(findings.filter((f) => f.ruleId !== UNUSED_SUPPRESSION_ID), files);
  for (const [path, text] of texts) await writeText(path, text);
  for (const { finding, reason } of skipped) io.err(`hcp-bot: no noqa added for ${finding.ruleId} at ${finding.location.file}:${finding.location.range.start.line}: ${reason}\n`);
  io.err(`hcp-bot: added ${plural(added, "noqa directive")} to ${plural(texts.size, "file")}\n`);
  return skipped.length > 0 ? EXIT.findings : EXIT.ok;
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
