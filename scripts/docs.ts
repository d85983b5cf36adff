// `npm run docs` writes the generated parts of README.md and docs/: the rule pages and tables
// (from each rule's `doc`), the `--help` transcripts and other command transcripts (the built
// CLI, run), the configuration tables (the settings schemas) and the folder tree.
// `npm run docs -- --check` writes nothing and exits 1 naming every stale file (test/docs runs it).
import { readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { envTable, repoTable } from "./docs/config.ts";
import { fillRegions, type Region } from "./docs/regions.ts";
import { documentedRules, ruleTable, rulePage, rulesIndexPage } from "./docs/rules.ts";
import { helpTranscripts, ROOT, transcript } from "./docs/transcripts.ts";
import { folderTree } from "./docs/tree.ts";

/** The Markdown pages that may hold generated regions. */
export function pages(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  return ["README.md", ...docs.sort()];
}

/** The rule table links from the page's folder to docs/rules/. */
function rulesLinkBase(page: string): string {
  return page.startsWith("docs/") ? "rules/" : "docs/rules/";
}

/** What `npm run docs` writes into one region of a page. */
export async function generateRegion(page: string, region: Region): Promise<string> {
  switch (region.name) {
    case "rules-table":
      return ruleTable(documentedRules().filter((r) => r.kind === "configuration"), rulesLinkBase(page));
    case "run":
      return transcript(region.args);
    case "help":
      return helpTranscripts();
    case "env-table":
      return envTable();
    case "repo-table":
      return repoTable();
    case "dev-tree":
      return folderTree();
    default:
      throw new Error(`${page}: unknown generated region "${region.name}" (rules-table, run, help, env-table, repo-table, dev-tree)`);
  }
}

/** Every generated file's expected text, by path from the root. */
export async function expectedFiles(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const page of pages()) {
    const text = readFileSync(join(ROOT, page), "utf8");
    out.set(page, await fillRegions(text, page, (r) => generateRegion(page, r)));
  }
  out.set("docs/rules/README.md", rulesIndexPage());
  for (const rule of documentedRules()) out.set(`docs/rules/${rule.id}.md`, rulePage(rule));
  return out;
}

/** Files that differ from what `npm run docs` writes, and rule pages no rule has any more. */
export async function staleFiles(): Promise<string[]> {
  const expected = await expectedFiles();
  const stale = [...expected].filter(([path, text]) => !existsSync(join(ROOT, path)) || readFileSync(join(ROOT, path), "utf8") !== text).map(([p]) => p);
  const orphans = existsSync(join(ROOT, "docs/rules")) ? readdirSync(join(ROOT, "docs/rules")).map((f) => `docs/rules/${f}`).filter((p) => !expected.has(p)) : [];
  return [...stale, ...orphans];
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes("--check")) {
    const stale = await staleFiles();
    if (stale.length === 0) return 0;
    process.stderr.write(`docs are stale (run npm run docs): ${stale.join(", ")}\n`);
    return 1;
  }
  const expected = await expectedFiles();
  mkdirSync(join(ROOT, "docs/rules"), { recursive: true });
  for (const f of readdirSync(join(ROOT, "docs/rules"))) if (!expected.has(`docs/rules/${f}`)) rmSync(join(ROOT, "docs/rules", f));
  for (const [path, text] of expected) writeFileSync(join(ROOT, path), text);
  process.stdout.write(`wrote ${expected.size} files\n`);
  return 0;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) process.exitCode = await main(process.argv.slice(2));
