// What a lint runs with: the repository's settings (the App's `.github/hcp-bot.yml` schema)
// under the command line's flags. The CLI, the Action (which runs the CLI) and the App's
// review read `rules` and `gpus_per_node` the same way through this.
import type { Severity } from "../model/finding.ts";
import type { RepoConfig } from "./repo-config.ts";

export interface LintFlagRules {
  select?: string[];
  ignore?: string[];
  gpusPerNode?: number;
}

export interface LintRunOptions {
  select?: string[];
  ignore?: string[];
  severity?: Record<string, Severity>;
  gpusPerNode?: number;
  gpusPerNodeSource?: string;
}

/**
 * A flag replaces the file's value (`--select`, `--gpus-per-node`), except `--ignore`, which adds
 * to the file's `rules.ignore` (ruff's `extend` reading): a flag can narrow a check, never
 * quietly re-enable what the repository turned off.
 */
export function lintRunOptions(config: RepoConfig | undefined, configName: string | undefined, flags: LintFlagRules): LintRunOptions {
  const out: LintRunOptions = {};
  const select = flags.select ?? config?.rules.select;
  if (select) out.select = select;
  const ignore = [...(config?.rules.ignore ?? []), ...(flags.ignore ?? [])];
  if (ignore.length > 0) out.ignore = [...new Set(ignore)];
  if (config && Object.keys(config.rules.severity).length > 0) out.severity = config.rules.severity;
  if (flags.gpusPerNode !== undefined) {
    out.gpusPerNode = flags.gpusPerNode;
    out.gpusPerNodeSource = "--gpus-per-node";
  } else if (config && configName) {
    out.gpusPerNode = config.gpus_per_node;
    out.gpusPerNodeSource = `gpus_per_node in ${configName} (8 unless set there)`;
  }
  return out;
}
