// `npm run index:bridge`: the index of upstream recipes' effective settings
// (core/analyze/bridge-index.ts), read by this project's own extractor and evaluator from a
// Megatron-Bridge checkout (or an installed package), as `hcp-bot lint` reads that tree.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { buildBridgeIndex, type BridgeIndex } from "../core/analyze/bridge-index.ts";
import { recipeAliases } from "../core/analyze/compose.ts";
import { collectInputs, InputError, readSources } from "./files.ts";
import { ParallelAnalyzer } from "./parallel.ts";

/** The folder holding `megatron/bridge/__init__.py` in a checkout (`src/`) or a site-packages folder. */
export function bridgeSourceRoot(dir: string): string {
  for (const candidate of [join(dir, "src"), dir]) if (existsSync(join(candidate, "megatron", "bridge", "__init__.py"))) return resolve(candidate);
  throw new InputError(`${dir} holds no Megatron-Bridge (no src/megatron/bridge/__init__.py nor megatron/bridge/__init__.py)`);
}

/** "0.7.0" from megatron/bridge/package_info.py (MAJOR, MINOR, PATCH, PRE_RELEASE). */
export function bridgeVersion(root: string): string {
  const path = join(root, "megatron", "bridge", "package_info.py");
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  const part = (name: string): string | undefined => new RegExp(`^${name}\\s*=\\s*["']?([\\w.]*)["']?\\s*$`, "m").exec(text)?.[1];
  const [major, minor, patch] = [part("MAJOR"), part("MINOR"), part("PATCH")];
  if (major === undefined || minor === undefined || patch === undefined) throw new InputError(`cannot read the Bridge version from ${path} (MAJOR, MINOR, PATCH)`);
  return `${major}.${minor}.${patch}${part("PRE_RELEASE") ?? ""}`;
}

/** The commit of a git checkout; null for an exported tree or an installed package. */
function gitCommit(dir: string): string | null {
  try {
    const out = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000 }).trim();
    return /^[0-9a-f]{40}$/.test(out) ? out : null;
  } catch {
    return null;
  }
}

export async function indexBridge(dir: string, commit?: string | null): Promise<BridgeIndex> {
  const root = bridgeSourceRoot(dir);
  // The library's recipes and the performance recipes (perf_recipes/, run by scripts/performance).
  const folders = ["recipes", "perf_recipes"].map((f) => join(root, "megatron", "bridge", f)).filter((f) => existsSync(f));
  const { paths } = await collectInputs(folders, { all: true });
  const { files } = await readSources(paths);
  const analyzer = new ParallelAnalyzer();
  const report = await analyzer.analyze(files, { python: await (await import("./treesitter.ts")).loadPythonLanguage() }).finally(() => analyzer.close());
  const fileOf = (path: string): string | undefined => {
    const rel = relative(root, resolve(path)).split(sep).join("/");
    return rel.startsWith("megatron/bridge/") ? rel : undefined;
  };
  return buildBridgeIndex(report.units, recipeAliases(files), { version: bridgeVersion(root), commit: commit ?? gitCommit(dir) }, fileOf);
}

/** The index as the package ships it: one recipe a line, so a regenerated index diffs by recipe. */
export function formatBridgeIndex(index: BridgeIndex): string {
  const { recipes, aliases, ...head } = index;
  const lines = Object.entries(recipes).map(([name, r]) => `    ${JSON.stringify(name)}: ${JSON.stringify(r)}`);
  const headText = JSON.stringify(head, null, 2).replace(/\n\}$/, "");
  return `${headText},\n  "recipes": {\n${lines.join(",\n")}\n  },\n  "aliases": ${JSON.stringify(aliases, null, 4).replace(/\n\}$/, "\n  }")}\n}\n`;
}
