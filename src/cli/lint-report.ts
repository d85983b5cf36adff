// `hcp-bot lint`'s report in the chosen format: text (one line per finding, a code frame on a
// terminal, the summary line), --statistics, JSON, SARIF or GitHub annotations.
import { ALL_RULES } from "../core/rules/index.ts";
import { formatReportText, formatStatistics, type Summary } from "../core/render/text.ts";
import { formatReportGithub } from "../core/render/github.ts";
import { toSarif } from "../core/render/sarif.ts";
import { docUrlFor } from "../core/rules/doc-url.ts";
import { isFixable, uneditablePaths } from "../core/rules/apply-fixes.ts";
import type { AnalysisReport } from "../core/analyze/index.ts";
import type { Finding } from "../core/model/finding.ts";
import type { SourceFile } from "../core/model/source.ts";
import { VERSION } from "../version.ts";
import type { Io, Output } from "../cli.ts";
import type { LintFlags } from "./lint-flags.ts";
import { applyBaseline } from "./lint-baseline.ts";
import { styleReport } from "./style.ts";

/** The report in the chosen format (the baseline, when given, taken out first). */
export async function printReport(report: AnalysisReport, files: readonly SourceFile[], opts: LintFlags & { fixed: number }, io: Io, output: Output): Promise<void> {
  if (opts.baseline !== undefined) {
    const { findings, baselined } = await applyBaseline(opts.baseline, report.findings);
    report.findings = findings;
    report.baselined = baselined;
  }
  switch (opts.format) {
    case "text": {
      const editable = new Set(files.map((f) => f.path));
      for (const p of uneditablePaths(report.diagnostics, files)) editable.delete(p);
      // The source line under each finding on a terminal (or --color=always), as ruff shows it; loaded only then.
      const framed = !opts.statistics && (io.tty?.out === true || output.style.color);
      const frame = framed ? (await import("./code-frame.ts")).codeFrames(files) : undefined;
      const summary: Summary = {
        files: report.files,
        units: report.units.length,
        findings: report.findings,
        diagnostics: report.diagnostics,
        suppressed: report.suppressed,
        baselined: report.baselined,
        fixed: opts.fixed,
        fixable: (f: Finding) => isFixable(f, editable),
        frame,
        quiet: opts.quiet,
      };
      io.out(styleReport(output.human(opts.statistics ? formatStatistics(summary) : formatReportText(summary)), output.style));
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
      io.out(JSON.stringify(toSarif(report.findings, report.diagnostics, { toolVersion: VERSION, rules: ALL_RULES, docUrl: docUrlFor(io.env) }), null, 2) + "\n");
      break;
    case "github":
      io.out(formatReportGithub(report.findings, report.diagnostics));
      break;
  }
}
