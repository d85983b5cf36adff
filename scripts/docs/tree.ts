// docs/development.md's folder tree: every tracked folder under src/ and src/core/ (and the
// top-level folders named here), each with one line. A folder without a line, or a line for a
// folder that is gone, stops the generator, so the tree follows the code.
import { spawnSync } from "node:child_process";
import { ROOT } from "./transcripts.ts";

const TOP: Record<string, string> = {
  "src/": "the TypeScript sources (below)",
  "templates/": "hcp-smoke.yml, the GitHub Actions workflow init-workflow renders",
  "test/": "vitest; test/support/fake-github is a loopback GitHub validated by @octokit/openapi",
  "bench/": "npm run bench (cli, lint, review, verdict, slack), bench:edge, bench:load, bench:memory",
  "scripts/": "build.mjs (npm run build), build-edge.ts, build-wasm.ts, docs.ts (npm run docs), index-bridge.ts",
  "fixtures/": "recipes, logs (real GPU runs among them), Megatron-Core's rank groups, playground examples",
  "data/": "megatron-bridge-recipes.json, the shipped index of upstream recipes",
  "deploy/": "kubernetes.yaml: two replicas on Redis",
  "docs/": "these pages; docs/rules/ is generated",
  "bin/": "hcp-bot.js, the CLI's entry (answers --version before any bundle loads)",
};

const SRC: Record<string, string> = {
  "src/core/": "runtime-neutral (no node: imports, no I/O): runs on Node, Deno, Workers and in the browser",
  "src/core/model/": "settings with provenance, findings, text edits",
  "src/core/recipe/": "extractors: python/ (tree-sitter), yaml, launch/ (shell, Markdown), pins",
  "src/core/analyze/": "file classification, launch-over-recipe composition, the analyze() entry",
  "src/core/rules/": "one module per rule (hcpNNN-*.ts), the engine, suppressions, baselines",
  "src/core/advise/": "the layout advisor: recommendation, rejected choices, Megatron's rank groups",
  "src/core/review/": "PR review planning: diff hunks, suggestions, fingerprints, HCP015",
  "src/core/render/": "text, annotations, SARIF, Markdown, Slack blocks; layout/ draws rank layouts",
  "src/core/config/": ".github/hcp-bot.yml schema (and pyproject's [tool.hcp-bot])",
  "src/core/commands/": "the /hcp grammar shared by PR comments and Slack",
  "src/core/smoke/": "who may start a smoke run, the runner report and artifact facts, the workflow template version",
  "src/core/ab/": "the A/B smoke comparison and its checks (AB001, AB002)",
  "src/core/verdict/": "the streaming log verdict: detectors/ feed decide(); probe.ts; scan/ (WebAssembly)",
  "src/core/crypto/": "HMAC-SHA256 of webhook bodies (GitHub, Slack) on WebCrypto",
  "src/core/zip/": "reads the log out of an Actions artifact, streaming, with caps",
  "src/cli/": "argument handling, help text and exit codes per command, terminal colour",
  "src/github/": "the GitHub App: events, review, Octokit retries; smoke/ is the smoke service (dispatch, following, verdict)",
  "src/slack/": "the Slack app: request verification, /hcp, Block Kit messages, Web API client",
  "src/store/": "claims, runs, audit log, durable jobs: one folder per store (memory/, sqlite/, redis/, kv/) and sql/ (SQLite, Durable Object)",
  "src/shared/": "what every layer above the core shares: the Log port, limits, log redaction, the capped body read",
  "src/jobs/": "durable jobs: lease, renew, complete, retry with delay or give up",
  "src/node/": "Node helpers the CLI and the server share: tree-sitter, worker threads, files, the package's own files",
  "src/server/": "the Node server host: Probot, Bolt, durable jobs, metrics, the webhook guard, the web mount",
  "src/edge/": "the edge host: one fetch handler, the @octokit/app adapter, Workers and Deno entries",
  "src/web/": "the web pages: playground/, markdown/, server/ (static files, CSP, /runs, sign-in)",
  "src/gpu/": "on the GPU runner: smoke-run, the probe and launcher (probe/), init-workflow",
};

function trackedFolders(): string[] {
  const git = spawnSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" });
  if (git.status !== 0) throw new Error(`git ls-files failed: ${git.stderr}`);
  const folders = new Set<string>();
  for (const path of git.stdout.split("\n").filter(Boolean)) {
    const parts = path.split("/");
    for (let depth = 1; depth < parts.length; depth++) folders.add(`${parts.slice(0, depth).join("/")}/`);
  }
  return [...folders];
}

export function treeProblems(folders: readonly string[] = trackedFolders()): string[] {
  const mustDescribe = folders.filter((f) => /^src\/[^/]+\/$/.test(f) || /^src\/core\/[^/]+\/$/.test(f));
  return [
    ...mustDescribe.filter((f) => !(f in SRC)).map((f) => `${f} has no line in scripts/docs/tree.ts`),
    ...[...Object.keys(TOP), ...Object.keys(SRC)].filter((f) => !folders.includes(f)).map((f) => `scripts/docs/tree.ts describes ${f}, which git does not track`),
  ];
}

export function folderTree(): string {
  const problems = treeProblems();
  if (problems.length > 0) throw new Error(`the folder tree is out of step with the repository:\n  ${problems.join("\n  ")}`);
  const line = (name: string, text: string, width: number) => `${name.padEnd(width)} ${text}`;
  const core = Object.keys(SRC).filter((f) => f.startsWith("src/core/") && f !== "src/core/").sort();
  const rest = Object.keys(SRC).filter((f) => !f.startsWith("src/core/")).sort();
  const lines = [
    line("src/core/", SRC["src/core/"]!, 14),
    ...core.map((f) => line(`  ${f.slice("src/core/".length)}`, SRC[f]!, 14)),
    ...rest.map((f) => line(f, SRC[f]!, 14)),
    ...Object.keys(TOP).filter((f) => f !== "src/").sort().map((f) => line(f, TOP[f]!, 14)),
  ];
  return ["```text", ...lines, "```", ""].join("\n");
}
