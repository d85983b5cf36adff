// How a host runs the analysis for the GitHub and Slack apps: in the calling thread (edge
// hosts, which have one) or elsewhere (the Node server's worker thread, src/server/analysis-pool.ts,
// so the thread that answers webhooks and Slack never waits behind a review's parsing and rules).
import type { Language } from "web-tree-sitter";
import type { SourceFile } from "../model/source.ts";
import type { UpstreamRecipes } from "./bridge-index.ts";
import { analyze, type AnalysisReport, type AnalyzeOptions } from "./index.ts";

/** `analyze` without the grammar: whoever runs it holds its own. */
export type AnalyzerOptions = Omit<AnalyzeOptions, "python">;
export type Analyzer = (files: readonly SourceFile[], options?: AnalyzerOptions) => Promise<AnalysisReport>;

/**
 * The analysis in this thread, with the grammar loaded on first use. `upstream` is the host's
 * index of upstream recipes (or why it has none), asked for on each analysis that gives none.
 */
export function inThreadAnalyzer(python: () => Promise<Language>, upstream?: () => UpstreamRecipes): Analyzer {
  return async (files, options = {}) => analyze(files, { ...options, python: await python(), upstream: options.upstream ?? upstream?.() });
}
