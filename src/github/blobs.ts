// File texts at a commit through GraphQL (many per request), and the modules those files
// import from the same repository: a recipe whose builder lives in another module
// (`from megatron.bridge.recipes.llama.common import _llama3_common`) is judged with it.
import type { BotOctokit } from "./host.ts";
import type { SourceFile } from "../core/model/source.ts";
import { importCandidates } from "../core/recipe/python/imports.ts";

type Octokit = BotOctokit;

export interface CommitRef {
  owner: string;
  repo: string;
  sha: string;
}

// GitHub allows far more nodes per query; 250 keeps a 3000-file PR to 12 queries.
const BLOBS_PER_QUERY = 250;
/** Imports are followed this many modules deep (recipe → family common.py → recipes/common.py → utils). */
export const MAX_IMPORT_DEPTH = 4;
/** At most this many imported modules, and this many characters of them, are read for one analysis. */
export const MAX_IMPORTED_MODULES = 120;
export const MAX_IMPORTED_CHARS = 6_000_000;

const graphqlString = (s: string): string => JSON.stringify(s);

/** Texts at the commit; null for a path that is missing, binary or too large for the API. */
export async function readBlobs(octokit: Octokit, t: CommitRef, paths: readonly string[]): Promise<Map<string, string | null>> {
  const texts = new Map<string, string | null>();
  for (let i = 0; i < paths.length; i += BLOBS_PER_QUERY) {
    const chunk = paths.slice(i, i + BLOBS_PER_QUERY);
    const fields = chunk.map((p, j) => `f${j}: object(expression: ${graphqlString(`${t.sha}:${p}`)}) { ... on Blob { text isBinary } }`);
    const query = `query { repository(owner: ${graphqlString(t.owner)}, name: ${graphqlString(t.repo)}) { ${fields.join(" ")} } }`;
    const result = await octokit.graphql<{ repository: Record<string, { text: string | null; isBinary: boolean } | null> }>(query);
    chunk.forEach((p, j) => {
      const blob = result.repository[`f${j}`];
      texts.set(p, blob && !blob.isBinary ? blob.text : null);
    });
  }
  return texts;
}

/**
 * The Python modules `sources` import from their own repository, read at the same commit:
 * all the imports of one level in one GraphQL query, MAX_IMPORT_DEPTH levels, within
 * MAX_IMPORTED_MODULES and MAX_IMPORTED_CHARS. `exists`, when the tree is known, keeps
 * paths that are not there out of the queries.
 */
export async function readImportedModules(
  octokit: Octokit,
  t: CommitRef,
  sources: readonly SourceFile[],
  exists?: (path: string) => boolean,
): Promise<SourceFile[]> {
  const seen = new Set(sources.map((s) => s.path));
  const out: SourceFile[] = [];
  let chars = 0;
  let frontier = sources.filter((s) => s.path.endsWith(".py"));
  for (let depth = 0; depth < MAX_IMPORT_DEPTH && frontier.length > 0; depth++) {
    const wanted: string[] = [];
    for (const file of frontier) {
      for (const path of importCandidates(file.path, file.text)) {
        if (seen.has(path) || (exists && !exists(path))) continue;
        seen.add(path);
        wanted.push(path);
      }
    }
    const room = MAX_IMPORTED_MODULES - out.length;
    if (wanted.length === 0 || room <= 0) break;
    const texts = await readBlobs(octokit, t, wanted.slice(0, exists ? room : room * 4));
    frontier = [];
    for (const [path, text] of texts) {
      if (text === null || out.length >= MAX_IMPORTED_MODULES || chars + text.length > MAX_IMPORTED_CHARS) continue;
      chars += text.length;
      const file = { path, text };
      out.push(file);
      frontier.push(file);
    }
  }
  return out;
}
