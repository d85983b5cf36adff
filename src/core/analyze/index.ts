// The analyzer: source files in, effective settings and findings out. Pure: the caller
// reads the files and loads the Python grammar; this runs the same on Node, Deno and
// Cloudflare Workers.
import { Parser, type Language } from "web-tree-sitter";
import type { Finding, ProjectFacts, Severity } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import type { SourceFile } from "../model/source.ts";
import { extractPython, ModuleLibrary, parseModule, parserFailed } from "../recipe/python/index.ts";
import { extractYaml } from "../recipe/yaml.ts";
import { extractMarkdown, extractShell } from "../recipe/launch/index.ts";
import { extractTePins } from "../recipe/pins.ts";
import type { Diagnostic, ExtractResult, TePin } from "../recipe/types.ts";
import { activeRules, compareFindings, parseRunOptions, runRules, type RunOptions } from "../rules/engine.ts";
import { ALL_RULES } from "../rules/index.ts";
import { UNUSED_SUPPRESSION_ID } from "../rules/hcp100-unused-suppression.ts";
import { applySuppressions, type Suppressed } from "../rules/suppress.ts";
import { classifyFile, type FileKind } from "./classify.ts";
import { composeUnits } from "./compose.ts";
import { indexedBase, type UpstreamRecipes } from "./bridge-index.ts";
import { upstreamBaseLines } from "./upstream-lines.ts";
import { nvlinkDomainOf, nvlinkDomainOfName } from "./hardware.ts";

export interface AnalyzeOptions {
  /** The tree-sitter Python grammar, loaded by the runtime adapter. */
  python: Language;
  /** GPUs in one NVLink domain where a unit's hardware folder does not say (HCP018, sizes fixes). Default 8 (H100/H200 nodes). */
  gpusPerNode?: number;
  /** Where gpusPerNode came from, for messages ("--gpus-per-node", ".github/hcp-bot.yml gpus_per_node"). */
  gpusPerNodeSource?: string;
  select?: string[];
  ignore?: string[];
  severity?: Record<string, Severity>;
  /** Files larger than this are reported, not parsed. Default 16 MiB. */
  maxFileBytes?: number;
  /**
   * Python modules that are not analyzed themselves but whose builders and constants the
   * analyzed files may import (a worker's shard gets the modules its files import).
   */
  library?: readonly SourceFile[];
  /**
   * An index of upstream recipes' effective settings (bridge-index.ts) for scripts that start
   * from an upstream recipe no analyzed file defines, or why the host has none. A function is
   * called only when some script starts from such a recipe: a lint of other files (most of
   * them) never reads or checks the index, which costs more than the rest of a one-file lint.
   */
  upstream?: UpstreamRecipes | (() => UpstreamRecipes);
}

export interface AnalysisReport {
  files: number;
  units: ConfigUnit[];
  findings: Finding[];
  diagnostics: Diagnostic[];
  project: ProjectFacts;
  /** Findings a suppression comment hid. */
  suppressed?: number;
  /** Findings a baseline held (the CLI's --baseline). */
  baselined?: number;
}

const KNOWN_IDS: ReadonlySet<string> = new Set(ALL_RULES.map((r) => r.id));

const DEFAULT_MAX_FILE_CHARS = 16 * 1024 * 1024;

// uv.lock is what actually gets installed; the others are requests.
const PIN_PRIORITY = ["uv.lock", "pyproject", "requirements", "dockerfile"];

export function analyze(files: readonly SourceFile[], options: AnalyzeOptions): AnalysisReport {
  return judge(files, extractFiles(files, options), options);
}

/**
 * The per-file half of the analysis: each file's units, diagnostics and pins, independent
 * of the other files (so a runtime with threads may extract shards in parallel).
 */
export function extractFiles(files: readonly SourceFile[], options: Pick<AnalyzeOptions, "python" | "maxFileBytes" | "library">): ExtractResult[] {
  const fresh = (): Parser => {
    const p = new Parser();
    p.setLanguage(options.python);
    return p;
  };
  let parser = fresh();
  const library = new ModuleLibrary([...files, ...(options.library ?? [])], (f) => parseModule(f, parser));
  try {
    return files.map((f) => {
      const result = extractFile(f, parser, library, options.maxFileBytes ?? DEFAULT_MAX_FILE_CHARS);
      // A parser that failed inside its WebAssembly runtime is not trusted with the next file.
      if (parserFailed(parser)) {
        try {
          parser.delete();
        } catch {
          // its memory may be what failed; the new parser does not depend on it
        }
        parser = fresh();
      }
      return result;
    });
  } finally {
    parser.delete();
  }
}

/** The whole-project half: launch lines over their recipes, pins, and the rules. */
export function judge(files: readonly SourceFile[], results: readonly ExtractResult[], options: Omit<AnalyzeOptions, "python" | "maxFileBytes" | "library">): AnalysisReport {
  const units = results.flatMap((r) => r.units);
  const diagnostics = results.flatMap((r) => r.diagnostics);
  const project: ProjectFacts = {
    gpusPerNode: options.gpusPerNode ?? 8,
    gpusPerNodeSource: options.gpusPerNode !== undefined ? (options.gpusPerNodeSource ?? "as configured") : "the default for 8-GPU H100/H200 nodes",
    transformerEngine: choosePin(results.flatMap((r) => r.tePins)),
  };
  // The hardware folder of a unit's file says how large its NVLink domain is; a launch line gets its recipe's.
  for (const u of units) {
    // What the unit itself states (env_vars["NVLINK_DOMAIN_SIZE"], an exported NVLINK_DOMAIN_SIZE), then the
    // recipe's own name (upstream's naming scheme), then what a base stated, then the folder: a b300 recipe may
    // live beside h100 code, and a gb200 recipe may start from an h100 one whose env_vars say 8.
    const stated = u.nvlinkDomain && !u.nvlinkDomain.inherited ? u.nvlinkDomain : undefined;
    const named = nvlinkDomainOfName(u.kind === "recipe" ? u.name : (u.baseRecipe ?? ""));
    const domain = stated ?? named ?? u.nvlinkDomain ?? nvlinkDomainOf(u.location.file);
    if (domain) u.nvlinkDomain = domain;
  }
  const upstream = units.some((u) => u.upstreamBase) ? upstreamOf(options.upstream) : undefined;
  const fromIndex = new Set<ConfigUnit>();
  const judged = composeUnits(units, files, (u) => {
    const base = upstream && "index" in upstream ? indexedBase(upstream.index, u) : undefined;
    if (base) fromIndex.add(u);
    return base;
  });
  diagnostics.push(...upstreamBaseLines(judged, units, fromIndex, upstream));
  const ruleOptions = { select: options.select, ignore: options.ignore, severity: options.severity };
  const { findings, suppressed } = suppressFindings(runRules(judged, project, ruleOptions), files, ruleOptions);
  return { files: files.length, units: judged, findings, diagnostics, project, suppressed: suppressed.length };
}

function upstreamOf(upstream: AnalyzeOptions["upstream"]): UpstreamRecipes | undefined {
  return typeof upstream === "function" ? upstream() : upstream;
}

/** The findings a `# noqa` or `# hcp-bot: ignore[...]` hides are taken out; unused directives are HCP100's. */
function suppressFindings(findings: Finding[], files: readonly SourceFile[], ruleOptions: RunOptions): Suppressed {
  const parsed = parseRunOptions(ruleOptions);
  const hcp100 = activeRules(ALL_RULES, parsed).some((r) => r.id === UNUSED_SUPPRESSION_ID);
  const result = applySuppressions(findings, files, { knownIds: KNOWN_IDS, hcp100 });
  const regrade = parsed.severity?.[UNUSED_SUPPRESSION_ID];
  if (regrade) for (const f of result.findings) if (f.ruleId === UNUSED_SUPPRESSION_ID) f.severity = regrade;
  result.findings.sort(compareFindings);
  return result;
}

function extractFile(file: SourceFile, parser: Parser, library: ModuleLibrary, maxChars: number): ExtractResult {
  const kind = classifyFile(file.path);
  const empty: ExtractResult = { units: [], diagnostics: [], tePins: [] };
  if (!kind) return empty;
  if (file.text.length > maxChars) {
    return {
      ...empty,
      diagnostics: [
        {
          file: file.path,
          severity: "warning",
          code: "too-large",
          message: `not analyzed: ${file.text.length} characters is over the ${maxChars}-character limit`,
        },
      ],
    };
  }
  if (looksBinary(file.text)) {
    return {
      ...empty,
      diagnostics: [{ file: file.path, severity: "warning", code: "unreadable", message: "not analyzed: the file is binary (it contains NUL bytes)" }],
    };
  }
  try {
    return runExtractor(kind, file, parser, library);
  } catch (error) {
    // Extractors are written not to throw; if one does, the file is reported and the rest goes on.
    const message = error instanceof Error ? error.message : String(error);
    return {
      ...empty,
      diagnostics: [{ file: file.path, severity: "error", code: "parse-error", message: `internal error while reading this file: ${message}` }],
    };
  }
}

function runExtractor(kind: FileKind, file: SourceFile, parser: Parser, library: ModuleLibrary): ExtractResult {
  switch (kind) {
    case "python":
      return extractPython(file, parser, library);
    case "yaml":
      return extractYaml(file);
    case "shell":
      return extractShell(file);
    case "markdown":
      return extractMarkdown(file);
    case "pins":
      return extractTePins(file);
  }
}

function looksBinary(text: string): boolean {
  const head = text.length > 8192 ? text.slice(0, 8192) : text;
  return head.includes("\u0000");
}

function choosePin(pins: TePin[]): ProjectFacts["transformerEngine"] {
  const rank = (p: TePin) => {
    const i = PIN_PRIORITY.findIndex((s) => p.source.toLowerCase().includes(s));
    return i < 0 ? PIN_PRIORITY.length : i;
  };
  const best = [...pins].sort((a, b) => rank(a) - rank(b))[0];
  return best ? { version: best.version, location: best.location, source: best.source } : undefined;
}
