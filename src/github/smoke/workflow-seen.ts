// The version of the smoke workflow each repository has installed, as this process last read
// it (workflow-file.ts records every reading), for /healthz. Apart from the reader so that
// /healthz loads neither it nor its YAML parser.
import { WORKFLOW_TEMPLATE_VERSION } from "../../core/smoke/template-version.ts";

/** The latest reading of each repository's smoke workflow. */
const lastSeen = new Map<string, { path: string; version: number | null; checkedAt: string }>();
const MAX_SEEN = 2000;

/** Sets `key` as the newest entry of `map`, dropping the oldest past `max`. */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

export function recordWorkflowVersion(r: { owner: string; repo: string }, path: string, version: number | null): void {
  remember(lastSeen, `${r.owner}/${r.repo}`, { path, version, checkedAt: new Date().toISOString() }, MAX_SEEN);
}

/**
 * For /healthz (operator only): the template version this hcp-bot renders, and the repositories
 * whose installed smoke workflow (as last read by this process) is older, missing or unusable.
 */
export function installedWorkflowReport(): { template: number; checked: number; outdated: Array<{ repo: string; path: string; version: number | null; checkedAt: string }> } {
  const outdated = [...lastSeen.entries()]
    .filter(([, w]) => w.version === null || w.version < WORKFLOW_TEMPLATE_VERSION)
    .map(([repo, w]) => ({ repo, ...w }));
  return { template: WORKFLOW_TEMPLATE_VERSION, checked: lastSeen.size, outdated };
}
