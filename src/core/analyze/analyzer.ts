// How a host runs the analysis for the GitHub and Slack apps: in the calling thread (edge
// hosts, which have one) or elsewhere (the Node server's worker thread, src/node/analysis-pool.ts,
// so the thread that answers webhooks and Slack never waits behind a review's parsing and rules).
import type { Language } from "web-tree-sitter";
import type { SourceFile } from "../model/source.ts";
import { analyze, type AnalysisReport, type AnalyzeOptions } from "./index.ts";

/** `analyze` without the grammar: whoever runs it holds its own. */
export type AnalyzerOptions = Omit<AnalyzeOptions, "python">;
export type Analyzer = (files: readonly SourceFile[], options?: AnalyzerOptions) => Promise<AnalysisReport>;

/** The analysis in this thread, with the grammar loaded on first use. */
export function inThreadAnalyzer(python: () => Promise<Language>): Analyzer {
  return async (files, options = {}) => analyze(files, { ...options, python: await python() });
}
