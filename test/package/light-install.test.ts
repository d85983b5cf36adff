// The `hcp-bot` package as `npm install hcp-bot` gets it: `npm pack` (its prepack builds dist/),
// then `npm install --offline <tarball>` into an empty folder. The package has no dependency to
// fetch (every library is bundled, the two .wasm files ship in dist/vendor), so the install
// needs neither the registry nor npm's cache; the checks are the light install's promises (a
// few packages, a few megabytes, no install script, nothing native) and every command of the
// CLI run from the installed package. The server is the hcp-bot-server package (pack.test.ts).
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { beforeAll, describe, expect, it } from "vitest";
import { CONSUMER_TS } from "./consumer.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const work = mkdtempSync(join(tmpdir(), "hcp-light-"));
const app = join(work, "app");
const installed = join(app, "node_modules", "hcp-bot");
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

/** The budget for `npm install hcp-bot`. */
const MAX_PACKAGES = 10;
const MAX_BYTES = 15 * 1024 * 1024;

/** Every file the tarball may hold: the CLI's and the library's bundles, what they read, and what npm always adds. */
const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^bin\/(hcp-bot\.js|package\.json)$/,
  /^dist\/(main|index|node|extract-worker|artifact-worker)\.js$/,
  /^dist\/lint(-start)?\.cjs$/,
  /^dist\/chunks\/[A-Za-z0-9_-]+\.js$/,
  /^dist\/vendor\/(web-tree-sitter|tree-sitter-python)\.wasm$/,
  /^dist\/types\/.+\.d\.ts$/,
  /^templates\/hcp-smoke\.yml$/,
  /^data\/megatron-bridge-recipes\.json$/,
  /^src\/gpu\/probe\/(sitecustomize|launch)\.py$/,
];

interface PackedFile {
  path: string;
  size: number;
}
let files: PackedFile[] = [];

async function hcpBot(args: string[], cwd = app, extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  // --no-install: the command comes from the folder's node_modules/.bin, never from the registry.
  return run("npx", ["--no-install", "hcp-bot", ...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...extraEnv }, maxBuffer: 64 * 1024 * 1024 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** The package folders under a node_modules folder, nested ones included (scoped names count once each). */
function packageDirs(modules: string): string[] {
  if (!existsSync(modules)) return [];
  return readdirSync(modules, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .flatMap((e) => (e.name.startsWith("@") ? readdirSync(join(modules, e.name)).map((n) => join(modules, e.name, n)) : [join(modules, e.name)]))
    .flatMap((dir) => [dir, ...packageDirs(join(dir, "node_modules"))]);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

let installMs = 0;

beforeAll(async () => {
  const packed = await run(npm, ["pack", "--json", "--pack-destination", work], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: PackedFile[]; size: number; unpackedSize: number }];
  files = info.files;
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const started = performance.now();
  // What a user runs, offline: a package that needs anything from the registry fails here (ENOTCACHED).
  await run(npm, ["install", "--offline", "--no-audit", "--no-fund", join(work, info.filename)], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
  installMs = Math.round(performance.now() - started);
  console.info(`${info.filename}: ${files.length} files, ${info.size} bytes packed, ${info.unpackedSize} unpacked; installed offline in ${installMs} ms`);
});

describe("the hcp-bot tarball", () => {
  it("holds the CLI's and the library's bundles and what they read: no server, web pages, sources or tests", () => {
    const paths = files.map((f) => f.path);
    expect(paths.filter((p) => !ALLOWED.some((re) => re.test(p)))).toEqual([]);
    for (const p of ["bin/hcp-bot.js", "dist/main.js", "dist/lint.cjs", "dist/lint-start.cjs", "dist/index.js", "dist/node.js", "dist/extract-worker.js", "dist/vendor/web-tree-sitter.wasm", "dist/vendor/tree-sitter-python.wasm", "dist/types/index.d.ts", "templates/hcp-smoke.yml", "data/megatron-bridge-recipes.json", "src/gpu/probe/sitecustomize.py"]) expect(paths).toContain(p);
    expect(paths.filter((p) => p.startsWith("dist/server/") || p.startsWith("dist/web/") || p === "app.yml")).toEqual([]);
  });

  it("bundles no server code: no bundle imports Probot, Bolt, pino or the stores", () => {
    const bundles = filesUnder(join(installed, "dist")).filter((f) => /\.(c?js)$/.test(f));
    expect(bundles.length).toBeGreaterThan(5);
    const bare = /\b(?:from|import\(|require\()\s*"((?:@[a-z0-9-]+\/)?[a-z0-9][\w.-]*(?:\/[\w.-]+)*)"/g;
    const imported = new Set(bundles.flatMap((f) => [...readFileSync(f, "utf8").matchAll(bare)].map((m) => m[1]!)));
    // Node's own modules only (with or without node:); every library is inside the bundles.
    const builtins = new Set(["assert", "buffer", "child_process", "crypto", "events", "fs", "fs/promises", "module", "os", "path", "process", "stream", "string_decoder", "tty", "url", "util", "v8", "worker_threads", "readline", "net", "timers", "timers/promises", "zlib"]);
    expect([...imported].filter((s) => !s.startsWith("node:") && !builtins.has(s))).toEqual([]);
  });
});

describe("npm install hcp-bot (offline, from the tarball)", () => {
  it(`installs at most ${MAX_PACKAGES} packages in at most ${MAX_BYTES / 1024 / 1024} MB`, () => {
    const packages = packageDirs(join(app, "node_modules"));
    const bytes = filesUnder(join(app, "node_modules")).reduce((sum, f) => sum + statSync(f).size, 0);
    console.info(`installed: ${packages.length} package(s), ${(bytes / 1e6).toFixed(1)} MB, in ${installMs} ms`);
    expect(packages.map((p) => p.slice(join(app, "node_modules").length + 1))).toContain("hcp-bot");
    expect(packages.length).toBeLessThanOrEqual(MAX_PACKAGES);
    expect(bytes).toBeLessThanOrEqual(MAX_BYTES);
    // npm's own record of the install agrees with the folders.
    const record = JSON.parse(readFileSync(join(app, "node_modules", ".package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
    expect(Object.keys(record.packages)).toHaveLength(packages.length);
  });

  it("runs no install script and builds nothing native", () => {
    for (const dir of packageDirs(join(app, "node_modules"))) {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { scripts?: Record<string, string>; gypfile?: boolean };
      expect(Object.keys(pkg.scripts ?? {}).filter((s) => ["preinstall", "install", "postinstall"].includes(s)), dir).toEqual([]);
      expect(pkg.gypfile, dir).toBeUndefined();
      expect(existsSync(join(dir, "binding.gyp")), dir).toBe(false);
      expect(filesUnder(dir).filter((f) => f.endsWith(".node")), dir).toEqual([]);
    }
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    expect(manifest.dependencies ?? {}).toEqual({});
  });
});

describe("the installed hcp-bot command", () => {
  it("lint: prints the finding and exits 1; a clean recipe exits 0", async () => {
    writeFileSync(join(app, "recipe.py"), readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py")));
    const r = await hcpBot(["lint", "recipe.py"]);
    expect(r.stdout).toMatch(/^recipe\.py:\d+:\d+: error HCP001 \[\*\] .*needs hierarchical_context_parallel_sizes.*; set it to \[2, 2\]$/m);
    expect(r.code).toBe(1);
    writeFileSync(join(app, "clean.py"), readFileSync(join(root, "fixtures", "cli", "clean_recipe.py")));
    expect((await hcpBot(["lint", "clean.py"])).code).toBe(0);
  });

  it("lint: a script starting from an upstream recipe is judged on the shipped index", async () => {
    const script = ["from megatron.bridge.recipes.llama import llama3_8b_pretrain_config", "", 'if __name__ == "__main__":', "    cfg = llama3_8b_pretrain_config()", '    cfg.model.cp_comm_type = "a2a+p2p"', ""].join("\n");
    writeFileSync(join(app, "train.py"), script);
    const r = await hcpBot(["lint", "train.py"], app, { PYTHONPATH: "", VIRTUAL_ENV: "", MEGATRON_BRIDGE_DIR: "" });
    expect(r.stdout).toMatch(/info base-from-index: .*Megatron-Bridge 0\.7\.0 \(067f987\)/);
    expect(r.stdout).toMatch(/train\.py:5:\d+: error HCP001/);
    expect(r.code).toBe(1);
  });

  it("lint on a large input uses the compiled worker threads and finds the same", async () => {
    const big = join(app, "recipes");
    mkdirSync(big, { recursive: true });
    const template = readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py"), "utf8");
    // 80 modules of ~30 KB: over the 2 MB above which extraction runs on worker threads.
    for (let m = 0; m < 80; m++) {
      const body = Array.from({ length: 40 }, (_, k) => template.replace(/def (\w+)_config/g, `def $1_${m}_${k}_config`)).join("\n");
      writeFileSync(join(big, `recipe_${m}.py`), body);
    }
    const r = await hcpBot(["lint", "--all", "--format", "json", "recipes"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { files: number; findings: { ruleId: string }[] };
    expect(out.files).toBe(80);
    expect(out.findings.filter((f) => f.ruleId === "HCP001")).toHaveLength(80 * 40);
  });

  it("rules and explain HCP001", async () => {
    const rules = await hcpBot(["rules"]);
    expect(rules.code).toBe(0);
    expect(rules.stdout).toMatch(/^HCP001\b/m);
    const json = JSON.parse((await hcpBot(["rules", "--format", "json"])).stdout) as { id: string }[];
    expect(json.map((r) => r.id)).toContain("HCP001");
    const explain = await hcpBot(["explain", "HCP001"]);
    expect(explain.code).toBe(0);
    expect(explain.stdout).toMatch(/^HCP001 a2a-p2p-without-sizes \(error\)/);
  });

  it("advise, --help and --version", async () => {
    const advise = await hcpBot(["advise", "--cp", "16", "--heads", "32", "--kv-heads", "8"]);
    expect(advise.code).toBe(0);
    expect(advise.stdout).toMatch(/hierarchical_context_parallel_sizes=\[8, 2\]/);
    expect((await hcpBot(["lint", "--help"])).stdout).toMatch(/Exit status:/);
    expect((await hcpBot(["--version"])).stdout.trim()).toBe(version);
  });

  it("verdict: reads a real signed probe log (the probe ran, no training step: not a pass)", async () => {
    const log = join(root, "fixtures", "logs", "real-probe", "s1_gloo_cp4_hcp2x2.v2.log");
    const key = (JSON.parse(readFileSync(join(root, "fixtures", "logs", "real-probe", "keys.json"), "utf8")) as Record<string, string>)["s1_gloo_cp4_hcp2x2.v2.log"]!;
    const r = await hcpBot(["verdict", log, "--exit-code", "0", "--probe-key", key, "--world-size", "4", "--format", "json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "fail", hcp: { active: true, probeReports: 4 } });
  });

  it("init-workflow: writes the workflow from the shipped template", async () => {
    const repo = join(app, "repo");
    mkdirSync(repo);
    const r = await hcpBot(["init-workflow"], repo);
    expect(r.code).toBe(0);
    const workflow = readFileSync(join(repo, ".github", "workflows", "hcp-smoke.yml"), "utf8");
    expect(workflow).toContain(`hcp-bot@${version}`);
    expect(workflow).toContain("workflow_dispatch");
  });

  it("smoke-run --dry-run: the argv with the shipped probe's environment (execa is bundled)", async () => {
    const checkout = join(app, "bridge");
    mkdirSync(join(checkout, "scripts", "training"), { recursive: true });
    writeFileSync(join(checkout, "scripts", "training", "run_recipe.py"), "");
    const fakeUv = join(root, "test", "gpu", "fixtures", "bin");
    const r = await hcpBot(["smoke-run", "--recipe", "llama32_1b_pretrain_config", "--dry-run", "--", "model.context_parallel_size=4"], checkout, { PATH: `${fakeUv}:${process.env.PATH ?? ""}` });
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as { argv: string[]; env: Record<string, string> };
    expect(plan.argv.slice(0, 3)).toEqual(["uv", "run", "python"]);
    expect(plan.argv).toContain("model.context_parallel_size=4");
    expect(plan.env.TORCH_CPP_LOG_LEVEL).toBe("INFO");
  });

  it("server --stdio answers an LSP client's initialize with its capabilities", async () => {
    const child = spawn(process.execPath, [join(installed, "bin", "hcp-bot.js"), "server", "--stdio"], { cwd: app, stdio: ["pipe", "pipe", "inherit"] });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    connection.listen();
    try {
      const result = (await connection.sendRequest("initialize", { processId: null, rootUri: null, capabilities: {} })) as { capabilities: { textDocumentSync?: unknown; hoverProvider?: unknown } };
      expect(result.capabilities.textDocumentSync).toBeDefined();
      expect(result.capabilities.hoverProvider).toBeTruthy();
    } finally {
      connection.dispose();
      child.kill();
    }
  });

  it("serve: says the server is the hcp-bot-server package (exit 2) instead of failing on a missing module", async () => {
    const r = await hcpBot(["serve"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/hcp-bot-server package: `npm install hcp-bot-server`/);
    expect(r.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|at async/);
  });
});

describe("the installed library", () => {
  it("runs as plain ESM with nothing else installed, and type-checks once the optional type packages are there", async () => {
    writeFileSync(join(app, "r.py"), readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py")));
    // The JavaScript program first: the library needs no other package at run time.
    const js = CONSUMER_TS.replace(/, type Finding/, "").replace(/: \[number, number\] \| undefined|: number\[\]\[\]|: readonly Finding\[\]/g, "").replace(/!\./g, ".").replace(/\]!;/g, "];");
    writeFileSync(join(app, "consumer.mjs"), js);
    const out = JSON.parse((await run(process.execPath, ["consumer.mjs"], { cwd: app })).stdout) as { sizes: number[]; advised: number[]; rings: number; findings: string[] };
    expect(out).toMatchObject({ sizes: [8, 2], advised: [8, 2], rings: 8 });
    expect(out.findings).toContain("HCP001");
    // The declarations name zod, yaml, web-tree-sitter and sarif types: optional peers a
    // TypeScript user installs (here: the repository's copies), none of them needed to run.
    const peers = Object.keys((JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { peerDependencies: Record<string, string> }).peerDependencies);
    expect(peers.sort()).toEqual(["@types/sarif", "web-tree-sitter", "yaml", "zod"]);
    for (const peer of peers) {
      mkdirSync(join(app, "node_modules", peer, ".."), { recursive: true });
      symlinkSync(join(root, "node_modules", peer), join(app, "node_modules", peer));
    }
    writeFileSync(join(app, "consumer.ts"), CONSUMER_TS);
    const tsconfig = { compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: false, types: [], lib: ["es2023", "dom"] }, files: ["consumer.ts"] };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    const tsc = await run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: app }).then(
      () => "",
      (e: { stdout: string }) => e.stdout,
    );
    // web-tree-sitter's own declarations need @types/emscripten; every other error would be ours.
    const ours = tsc.split("\n").filter((l) => l.trim() && !/node_modules\/web-tree-sitter\//.test(l) && !/^\s/.test(l));
    expect(ours).toEqual([]);
  });
});
