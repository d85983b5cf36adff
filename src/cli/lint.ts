// `hcp-bot lint`: inputs collected and read, analyzed under each file's settings, reported.
import { classifyFile } from "../core/analyze/classify.ts";
import { ALL_RULES } from "../core/rules/index.ts";
import { formatReportText } from "../core/render/text.ts";
import { formatReportGithub } from "../core/render/github.ts";
import { toSarif } from "../core/render/sarif.ts";
import { isNotAnalyzed } from "../core/recipe/types.ts";
import { collectInputs, displayPath, InputError, readSources } from "../node/files.ts";
import { VERSION } from "../version.ts";
import type { Io, Output } from "../cli.ts";
import { UsageError } from "./args.ts";
import { readLintFlags } from "./lint-flags.ts";
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

  const { report } = await analyzeWithSettings(files, opts);
  if (opts.baselineWrite !== undefined) {
    const n = await writeBaseline(opts.baselineWrite, report.findings);
    io.err(`hcp-bot: wrote ${plural(n, "finding")} to the baseline ${opts.baselineWrite}\n`);
    return EXIT.ok;
  }
  if (opts.addNoqa) return await writeNoqa(report.findings, files, io);
  if (opts.baseline !== undefined) {
    const { findings, baselined } = await applyBaseline(opts.baseline, report.findings);
    report.findings = findings;
    report.baselined = baselined;
  }
  switch (opts.format) {
    case "text":
      io.out(styleReport(output.human(formatReportText({ files: report.files, units: report.units.length, findings: report.findings, diagnostics: report.diagnostics, suppressed: report.suppressed, baselined: report.baselined })), output.style));
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

/** `--add-noqa`: the comments written into the files; HCP100's own findings are fixed, never hidden. */
async function writeNoqa(findings: readonly Finding[], files: readonly SourceFile[], io: Io): Promise<number> {
  const { texts, added, skipped } = addNoqa(findings.filter((f) => f.ruleId !== UNUSED_SUPPRESSION_ID), files);
  for (const [path, text] of texts) await writeText(path, text);
  for (const { finding, reason } of skipped) io.err(`hcp-bot: no noqa added for ${finding.ruleId} at ${finding.location.file}:${finding.location.range.start.line}: ${reason}\n`);
  io.err(`hcp-bot: added ${plural(added, "noqa directive")} to ${plural(texts.size, "file")}\n`);
  return skipped.length > 0 ? EXIT.findings : EXIT.ok;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
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
