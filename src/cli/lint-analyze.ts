// The analysis of a lint: files grouped by the settings that govern them (each file's nearest
// `.github/hcp-bot.yml` or `[tool.hcp-bot]`), each group analyzed with its settings under the
// flags, the reports joined. One group (the usual case) is one analysis, as before.
import type { AnalysisReport } from "../core/analyze/index.ts";
import { compareFindings } from "../core/rules/engine.ts";
import { lintRunOptions } from "../core/config/lint-options.ts";
import type { SourceFile } from "../core/model/source.ts";
import { ConfigFinder, type FoundConfig } from "../node/lint-config.ts";
import { bridgePackageRoot, importsBridge, installedUpstream } from "../node/bridge-package.ts";
import { InputError } from "../node/files.ts";
import { loadUpstreamIndex } from "../node/upstream-index.ts";
import type { UpstreamRecipes } from "../core/analyze/bridge-index.ts";
import { loadPythonLanguage, preferQuickExit } from "../node/treesitter.ts";
import { PARALLEL_MIN_CHARS, ParallelAnalyzer } from "../node/parallel.ts";
import type { LintFlags } from "./lint-flags.ts";

export interface LintAnalysis {
  report: AnalysisReport;
  /** Each file's settings (path shown as given), for the suppressions' and fixes' file reads. */
  configs: Map<string, FoundConfig | undefined>;
}

export async function analyzeWithSettings(files: readonly SourceFile[], flags: LintFlags): Promise<LintAnalysis> {
  const finder = new ConfigFinder(flags.isolated ? { mode: "isolated" } : flags.config !== undefined ? { mode: "file", path: flags.config } : { mode: "discover" });
  const configs = new Map<string, FoundConfig | undefined>();
  const groups = new Map<string, { config: FoundConfig | undefined; files: SourceFile[] }>();
  for (const file of files) {
    const config = await finder.forFile(file.path);
    configs.set(file.path, config);
    const key = config?.path ?? "";
    const group = groups.get(key) ?? { config, files: [] };
    group.files.push(file);
    groups.set(key, group);
  }
  if (groups.size === 0) groups.set("", { config: undefined, files: [] });
  preferQuickExit(files.reduce((n, f) => n + f.text.length, 0) < PARALLEL_MIN_CHARS);
  const { library, upstream } = upstreamRecipes(files);
  const python = await loadPythonLanguage();
  const analyzer = new ParallelAnalyzer();
  try {
    const reports: AnalysisReport[] = [];
    for (const { config, files: groupFiles } of groups.values()) {
      const options = lintRunOptions(config?.config, config?.path, { select: flags.select, ignore: flags.ignore, gpusPerNode: flags.gpusPerNode });
      // Files of other groups stay importable: a recipe's builder may live under another settings file.
      const others = groups.size > 1 ? files.filter((f) => !groupFiles.includes(f)) : [];
      reports.push(await analyzer.analyze(groupFiles, { python, ...options, library: [...library, ...others], upstream }));
    }
    return { report: joinReports(reports), configs };
  } finally {
    await analyzer.close();
  }
}

function joinReports(reports: readonly AnalysisReport[]): AnalysisReport {
  if (reports.length === 1) return reports[0]!;
  const first = reports[0]!;
  return {
    files: reports.reduce((n, r) => n + r.files, 0),
    units: reports.flatMap((r) => r.units),
    findings: reports.flatMap((r) => r.findings).sort(compareFindings),
    diagnostics: reports.flatMap((r) => r.diagnostics),
    suppressed: reports.reduce((n, r) => n + (r.suppressed ?? 0), 0),
    project: { ...first.project, transformerEngine: reports.find((r) => r.project.transformerEngine)?.project.transformerEngine },
  };
}

/**
 * Where a user's script finds the upstream recipe it starts from: the installed Bridge's
 * modules it imports (the version the user runs), else hcp-bot's index of upstream recipes.
 * An index that cannot be used is an error (exit 2), not a silent unknown.
 */
function upstreamRecipes(files: readonly SourceFile[]): { library: SourceFile[]; upstream?: UpstreamRecipes | (() => UpstreamRecipes) } {
  if (!importsBridge(files)) return { library: [] };
  const root = bridgePackageRoot();
  if (root) return installedUpstream(files, root);
  // Read when the analysis first needs it (a script calls an upstream recipe), once for all groups.
  let loaded: UpstreamRecipes | undefined;
  return { library: [], upstream: () => (loaded ??= indexOrError()) };
}

function indexOrError(): UpstreamRecipes {
  const loaded = loadUpstreamIndex();
  if ("error" in loaded) throw new InputError(`${loaded.error}; regenerate it with npm run index:bridge, or unset HCP_BRIDGE_INDEX to use the package's own`);
  return loaded;
}
