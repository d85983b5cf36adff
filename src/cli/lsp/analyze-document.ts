// The editor server's analysis of one open document: the same settings as `hcp-bot lint FILE`
// (the nearest `.github/hcp-bot.yml` or `[tool.hcp-bot]` above the file, or the one the editor
// names, or none), the same upstream recipes (the installed Bridge's modules the file imports,
// else hcp-bot's index) and the same analyzer (core/analyze), run on a worker thread
// (node/analysis-pool.ts) so the thread that answers the editor never waits behind tree-sitter.
// What lint finds out once per run is kept here for the life of the server: where the
// installed Bridge is (finding it may start `python3`) is asked once, not per keystroke.
import { lintRunOptions } from "../../core/config/lint-options.ts";
import type { AnalysisReport } from "../../core/analyze/index.ts";
import type { AnalyzerOptions } from "../../core/analyze/analyzer.ts";
import type { SourceFile } from "../../core/model/source.ts";
import { createAnalysisPool, type AnalysisPool } from "../../node/analysis-pool.ts";
import { findBridgePackageRoot, importsBridge, installedUpstream } from "../../node/bridge-package.ts";
import { ConfigFinder, type ConfigChoice, type FoundConfig } from "../../node/lint-config.ts";

export type DocumentAnalysis =
  | { ok: true; report: AnalysisReport; config: FoundConfig | undefined }
  /** The document could not be analyzed at all (a settings file that does not parse, a worker that died): why. */
  | { ok: false; reason: string };

export interface DocumentAnalyzer {
  analyze(file: SourceFile): Promise<DocumentAnalysis>;
  /** Starts the worker thread (it loads the grammar) before the first document arrives. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export function createDocumentAnalyzer(choice: ConfigChoice, pool: AnalysisPool = createAnalysisPool(1)): DocumentAnalyzer {
  let bridgeRoot: Promise<string | undefined> | undefined;
  // Asked once, and without blocking the thread that answers the editor (it may start python3).
  const bridge = () => (bridgeRoot ??= findBridgePackageRoot());
  return {
    async analyze(file) {
      try {
        // A fresh finder each time: a settings file saved since the last change is read again.
        const config = await new ConfigFinder(choice).forFile(file.path);
        const options: AnalyzerOptions = { ...lintRunOptions(config?.config, config?.path, {}), ...(await upstreamFor(file, bridge)) };
        return { ok: true, report: await pool.analyze([file], options), config };
      } catch (error) {
        return { ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
    },
    warm: () => {
      // Recipes import megatron.bridge as a rule: look for the installed one while the thread starts.
      void bridge();
      return pool.warm();
    },
    close: () => pool.close(),
  };
}

/**
 * lint's reading of where a script's upstream recipe comes from (cli/lint-analyze.ts): the
 * installed Bridge's modules when one is found, else the worker's copy of hcp-bot's index
 * (left out here, so the index is not copied to the thread on every change).
 */
async function upstreamFor(file: SourceFile, bridge: () => Promise<string | undefined>): Promise<Pick<AnalyzerOptions, "library" | "upstream">> {
  if (!importsBridge([file])) return {};
  const root = await bridge();
  if (!root) return {};
  return installedUpstream([file], root);
}
