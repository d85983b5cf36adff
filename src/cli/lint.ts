// `hcp-bot lint`: inputs collected and read (stdin too, as a named file), analyzed under each
// file's settings, fixed when asked, reported (src/cli/lint-report.ts) to stdout or a file.
import { classifyFile } from "../core/analyze/classify.ts";
import { isNotAnalyzed } from "../core/recipe/types.ts";
import { plural } from "../core/render/text.ts";
import { collectInputs, displayPath, InputError, readSources } from "../node/files.ts";
import type { Io, Output } from "../cli.ts";
import { UsageError } from "./args.ts";
import { readLintFlags, type LintFlags } from "./lint-flags.ts";
import { analyzeWithSettings } from "./lint-analyze.ts";
import { printReport } from "./lint-report.ts";
import { writeBaseline } from "./lint-baseline.ts";
import { PLAIN } from "./style.ts";
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
  // Loaded only for --watch: a plain lint never parses the watcher (bench:cli).
  if (opts.watch) return await (await import("./lint-watch.ts")).watchLint(opts, io, (runIo) => lintOnce(opts, runIo, output));
  if (opts.outputFile === undefined) return await lintOnce(opts, io, output);
  // --output-file: the report, uncoloured and without code frames, into the file; notes stay on stderr.
  let text = "";
  const code = await lintOnce(opts, { ...io, out: (t) => void (text += t), tty: { out: false, err: io.tty?.err ?? false } }, { ...output, style: PLAIN, human: (t) => t });
  try {
    await writeText(opts.outputFile, text);
  } catch (error) {
    throw new InputError(`cannot write the report to ${opts.outputFile}: ${(error as Error).message}`);
  }
  return code;
}

/** One lint of the inputs: what `hcp-bot lint` does, and what --watch repeats. */
export async function lintOnce(opts: LintFlags, io: Io, output: Output): Promise<number> {
  const { files, unread, unmatched } = await readInputs(opts, io);
  const note = (text: string) => void (opts.quiet ? undefined : io.err(text));
  let analysis = await analyzeWithSettings(files, opts);
  const { report } = analysis;
  if (opts.baselineWrite !== undefined) {
    const n = await writeBaseline(opts.baselineWrite, report.findings);
    note(`hcp-bot: wrote ${plural(n, "finding")} to the baseline ${opts.baselineWrite}\n`);
    return EXIT.ok;
  }
  if (opts.addNoqa) return await writeNoqa(report.findings, files, io);
  const unanalyzed = [...unread, ...report.diagnostics.filter(isNotAnalyzed).map((d) => ({ path: d.file, reason: d.message }))];
  const findingsExit = (failed: boolean) => (unanalyzed.length > 0 || unmatched.length > 0 ? EXIT.usage : failed && !opts.exitZero ? EXIT.findings : EXIT.ok);
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
      note(`hcp-bot: --fix would fix ${plural(rounds.fixed, "finding")} in ${plural(rounds.changed.size, "file")}\n`);
      reportUnanalyzed(unanalyzed, unmatched, opts.all, io);
      return findingsExit(rounds.changed.size > 0);
    }
    [analysis, fixed, current] = [rounds.analysis, rounds.fixed, rounds.files];
    const fromStdin = opts.stdinFilename !== undefined ? displayPath(opts.stdinFilename) : undefined;
    if (fromStdin !== undefined) {
      // Stdin fixed: the fixed text is the output (an editor replaces its buffer with it), the report goes to stderr.
      io.out(current.find((f) => f.path === fromStdin)?.text ?? "");
      rounds.changed.delete(fromStdin);
      await printReport(analysis.report, current, { ...opts, fixed }, { ...io, out: io.err, tty: { out: io.tty?.err ?? false, err: io.tty?.err ?? false } }, { ...output, style: output.errStyle });
      await writeFixed(rounds.changed);
      reportUnanalyzed(unanalyzed, unmatched, opts.all, io);
      return findingsExit(failedIn(analysis.report));
    }
    await writeFixed(rounds.changed);
  }
  await printReport(analysis.report, current, { ...opts, fixed }, io, output);
  // Input that was not analyzed (too large, binary) is never passed over quietly: one line each, exit 2.
  reportUnanalyzed(unanalyzed, unmatched, opts.all, io);
  return findingsExit(failedIn(analysis.report));
}

function failedIn(report: { findings: readonly Finding[]; diagnostics: ReadonlyArray<{ severity: string }> }): boolean {
  return report.findings.some((f) => f.severity === "error") || report.diagnostics.some((d) => d.severity === "error");
}

interface Inputs {
  files: SourceFile[];
  unread: Array<{ path: string; reason: string }>;
  unmatched: string[];
}

/** The files on disk the inputs name, and stdin (`-`) as the file --stdin-filename names. */
async function readInputs(opts: LintFlags, io: Io): Promise<Inputs> {
  const onDisk = opts.inputs.filter((i) => i !== "-");
  const stdin = opts.stdinFilename !== undefined ? await readStdin(opts.stdinFilename, io) : undefined;
  if (onDisk.length === 0) return { files: [stdin!], unread: [], unmatched: [] };
  await rejectUnknownExplicitFiles(onDisk);
  const { paths, unmatched } = await collectInputs(onDisk, { all: opts.all });
  // No files is not a pass (ruff answers the same way): a folder that yields nothing is named, exit 2.
  if (paths.length === 0 && !stdin) throw new InputError(noFilesMatched(unmatched, opts.all));
  const { files, unread } = await readSources(paths);
  const given = new Set(onDisk.map((p) => displayPath(p)));
  const explicitBinary = files.find((f) => given.has(f.path) && f.text.includes("\u0000"));
  if (explicitBinary) throw new InputError(`cannot read ${explicitBinary.path}: it is a binary file, not a recipe or launch script`);
  // Stdin stands for the file at its name: the copy on disk (an editor's unsaved buffer) is not read twice.
  return { files: stdin ? [...files.filter((f) => f.path !== stdin.path), stdin] : files, unread, unmatched };
}

async function readStdin(name: string, io: Io): Promise<SourceFile> {
  if (!classifyFile(name)) throw new InputError(`cannot lint stdin as ${name}: hcp-bot reads .py, .yaml/.yml, .sh, .md, uv.lock, pyproject.toml, requirements*.txt and Dockerfiles (the name says which)`);
  if (!io.stdin) throw new InputError("stdin cannot be read here");
  const text = await io.stdin();
  if (text.includes("\u0000")) throw new InputError(`cannot read stdin as ${name}: it is binary, not a recipe or launch script`);
  return { path: displayPath(name), text };
}

function reportUnanalyzed(unanalyzed: ReadonlyArray<{ path: string; reason: string }>, unmatched: readonly string[], all: boolean | undefined, io: Io): void {
  for (const u of unanalyzed) io.err(`hcp-bot: not analyzed: ${u.path}: ${u.reason.replace(/^not analyzed: /, "")}\n`);
  if (unmatched.length > 0) io.err(`hcp-bot: ${noFilesMatched(unmatched, all)}\n`);
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
