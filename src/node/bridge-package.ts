// Where the recipes a user's script starts from live: the megatron.bridge package of the
// active Python environment, found the way type checkers find it (MEGATRON_BRIDGE_DIR, then
// PYTHONPATH, then VIRTUAL_ENV's site-packages, then `python3 -c 'import megatron.bridge'`).
// Only the modules the analyzed files import, and what those import, are read (bounded).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { UpstreamRecipes } from "../core/analyze/bridge-index.ts";
import type { SourceFile } from "../core/model/source.ts";
import { candidatePaths, scanImports } from "../core/recipe/python/imports.ts";
import { rememberedRoot, rememberRoot, type PythonAnswer } from "./python-probe-cache.ts";

const MAX_FILES = 400;
const MAX_DEPTH = 6;

/** The folder that holds `megatron/bridge/__init__.py`; undefined when none is found. */
export function bridgePackageRoot(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return fromEnvironment(env) ?? fromPython(env);
}

/** The same search without blocking the thread on `python3` (the editor server's thread answers the editor). */
export async function findBridgePackageRoot(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  return fromEnvironment(env) ?? (await fromPythonAsync(env));
}

function fromEnvironment(env: NodeJS.ProcessEnv): string | undefined {
  const candidates: string[] = [];
  if (env.MEGATRON_BRIDGE_DIR) candidates.push(join(env.MEGATRON_BRIDGE_DIR, "src"), env.MEGATRON_BRIDGE_DIR);
  for (const p of (env.PYTHONPATH ?? "").split(":")) if (p) candidates.push(p);
  if (env.VIRTUAL_ENV) candidates.push(...sitePackages(env.VIRTUAL_ENV));
  return candidates.find(holdsBridge);
}

function holdsBridge(dir: string): boolean {
  return existsSync(join(dir, "megatron", "bridge", "__init__.py"));
}

function sitePackages(venv: string): string[] {
  try {
    return readdirSync(join(venv, "lib"))
      .filter((d) => d.startsWith("python"))
      .map((d) => join(venv, "lib", d, "site-packages"));
  } catch {
    return [];
  }
}

// One line of JSON: the package's root (null when it is not importable) and sys.path, whose
// folders tell the cache (python-probe-cache.ts) when an install may have changed the answer.
const PYTHON_PROBE = [
  "-c",
  "import json, os, sys\ntry:\n import megatron.bridge as b; r = os.path.dirname(os.path.dirname(os.path.dirname(b.__file__)))\nexcept Exception:\n r = None\nprint(json.dumps({'root': r, 'path': sys.path}))",
];
const PROBE_TIMEOUT_MS = 10_000;

// Loaded when python3 is asked, not at the top: node:child_process costs ~7 ms to load, and a
// remembered answer (python-probe-cache.ts) asks nothing.
const childProcess = () => process.getBuiltinModule("node:child_process");

function fromPython(env: NodeJS.ProcessEnv): string | undefined {
  const known = rememberedRoot(env, process.cwd());
  if (known) return usableRoot(known.root);
  let out = "";
  try {
    out = childProcess().execFileSync("python3", PYTHON_PROBE, { env, encoding: "utf8", timeout: PROBE_TIMEOUT_MS, stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return undefined; // no python3, or it failed: asked again next time
  }
  return answered(env, out);
}

function fromPythonAsync(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const cwd = process.cwd();
  const known = rememberedRoot(env, cwd);
  if (known) return Promise.resolve(usableRoot(known.root));
  return new Promise((resolve) => {
    const child = childProcess().execFile("python3", PYTHON_PROBE, { env, encoding: "utf8", timeout: PROBE_TIMEOUT_MS }, (error, stdout) => {
      resolve(error ? undefined : answered(env, stdout, cwd));
    });
    child.stdin?.end();
  });
}

/** python3's answer read, remembered and checked; anything but the probe's own line is no answer. */
function answered(env: NodeJS.ProcessEnv, stdout: string, cwd = process.cwd()): string | undefined {
  const answer = parseAnswer(stdout.trim().split("\n").at(-1) ?? "");
  if (!answer) return undefined;
  rememberRoot(env, cwd, answer);
  return usableRoot(answer.root);
}

function parseAnswer(line: string): PythonAnswer | undefined {
  try {
    const data: unknown = JSON.parse(line);
    if (typeof data !== "object" || data === null) return undefined;
    const { root, path } = data as Record<string, unknown>;
    if (!(root === null || typeof root === "string") || !Array.isArray(path) || !path.every((p) => typeof p === "string")) return undefined;
    return { root, path };
  } catch {
    return undefined;
  }
}

function usableRoot(root: string | null): string | undefined {
  return root !== null && holdsBridge(root) ? root : undefined;
}

/** Whether a file imports from megatron.bridge (only then is the environment searched). */
export function importsBridge(files: readonly SourceFile[]): boolean {
  return files.some((f) => f.path.endsWith(".py") && /^\s*(?:from|import)\s+megatron\.bridge\b/m.test(f.text) && !f.path.includes("megatron/bridge/"));
}

/**
 * The installed Bridge as the upstream of `files` (lint's and the editor server's reading):
 * its modules they import, and no index over it: a base the user's own version does not
 * define stays unknown, with this reason.
 */
export function installedUpstream(files: readonly SourceFile[], root: string): { library: SourceFile[]; upstream: UpstreamRecipes } {
  return { library: bridgeModules(files, root), upstream: { unavailable: `the megatron.bridge found at ${root}, which is read before hcp-bot's index, did not define it` } };
}

/** The package's modules that `files` import, directly or through their own imports. */
export function bridgeModules(files: readonly SourceFile[], root: string): SourceFile[] {
  const out: SourceFile[] = [];
  const seen = new Set<string>();
  let frontier: SourceFile[] = files.filter((f) => f.path.endsWith(".py"));
  for (let depth = 0; depth <= MAX_DEPTH && frontier.length > 0 && out.length < MAX_FILES; depth++) {
    const next: SourceFile[] = [];
    for (const file of frontier) {
      for (const path of importedBridgePaths(file, root)) {
        if (seen.has(path) || out.length >= MAX_FILES) continue;
        seen.add(path);
        const text = readOrUndefined(path);
        if (text === undefined) continue;
        const f = { path, text };
        out.push(f);
        next.push(f);
      }
    }
    frontier = next;
  }
  return out;
}

function importedBridgePaths(file: SourceFile, root: string): string[] {
  const imports = scanImports(file.text);
  const inPackage = file.path.startsWith(root);
  const out: string[] = [];
  const add = (module: string, level: number) => {
    if (level === 0 && !module.startsWith("megatron.bridge")) return;
    if (level > 0 && !inPackage) return;
    const from = level > 0 ? file.path : join(root, "__importer__.py");
    for (const p of candidatePaths(from, module, level)) if (level > 0 || dirname(p).startsWith(root)) out.push(p);
  };
  for (const b of imports.names.values()) {
    add(b.module, b.level);
    if (b.name !== null) add(b.module ? `${b.module}.${b.name}` : b.name, b.level);
  }
  for (const s of imports.stars) add(s.module, s.level);
  return out;
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
