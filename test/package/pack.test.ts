// The package as users get it: `npm pack` (its prepack builds dist/), the tarball's file
// list, and an install into an empty folder (offline, see consumer.ts) where the commands
// run from the compiled code and a TypeScript program compiles against the published types.
import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { CONSUMER_TS, writeConsumer } from "./consumer.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const work = mkdtempSync(join(tmpdir(), "hcp-pack-"));
const app = join(work, "app");

interface PackedFile {
  path: string;
  size: number;
}

/** Every file the tarball may hold: what runs, and what npm always adds. */
const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^bin\/(hcp-bot\.js|package\.json)$/,
  /^dist\/(main|index|node|extract-worker|artifact-worker)\.js$/,
  /^dist\/lint(-start)?\.cjs$/,
  /^dist\/chunks\/[A-Za-z0-9_-]+\.js$/,
  /^dist\/types\/.+\.d\.ts$/,
  /^dist\/web\/(build\.json|playground\/(index\.html|page\.js|worker\.js|web-tree-sitter\.wasm|tree-sitter-python\.wasm)|web\/(style\.css|noscript\.css|icon\.svg)|docs\/rules\/([A-Z]+\d{3}|index)\.html)$/,
  /^templates\/hcp-smoke\.yml$/,
  /^app\.yml$/,
  /^data\/megatron-bridge-recipes\.json$/,
  /^src\/gpu\/probe\/(sitecustomize|launch)\.py$/,
];
const REQUIRED = ["dist/web/build.json", "dist/web/docs/rules/HCP001.html", "dist/web/docs/rules/index.html", "dist/web/playground/page.js", "dist/web/playground/tree-sitter-python.wasm", "bin/hcp-bot.js", "bin/package.json", "dist/main.js", "dist/lint.cjs", "dist/lint-start.cjs", "dist/index.js", "dist/node.js", "dist/extract-worker.js", "dist/artifact-worker.js", "dist/types/index.d.ts", "dist/types/node/index.d.ts", "templates/hcp-smoke.yml", "app.yml", "data/megatron-bridge-recipes.json", "src/gpu/probe/sitecustomize.py", "src/gpu/probe/launch.py"];

let files: PackedFile[] = [];
let tarball = "";

async function hcpBot(args: string[], cwd = app, extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  // --no-install: the command comes from the folder's node_modules/.bin, never from the registry.
  return run("npx", ["--no-install", "hcp-bot", ...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...extraEnv }, maxBuffer: 64 * 1024 * 1024 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

beforeAll(async () => {
  const packed = await run(npm, ["pack", "--json", "--pack-destination", work], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: PackedFile[]; size: number; unpackedSize: number }];
  files = info.files;
  tarball = join(work, info.filename);
  // The list, for the record (the checks below are what fail).
  console.info(`${info.filename}: ${files.length} files, ${info.size} bytes packed, ${info.unpackedSize} unpacked\n${files.map((f) => `  ${String(f.size).padStart(8)}  ${f.path}`).join("\n")}`);
  mkdirSync(app);
  writeConsumer(app, tarball, join(root, "package-lock.json"));
  await run(npm, ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
});

describe("the tarball", () => {
  it("holds what runs and nothing else: no tests, fixtures, sources, source maps or build scripts", () => {
    const paths = files.map((f) => f.path);
    expect(paths.filter((p) => !ALLOWED.some((re) => re.test(p)))).toEqual([]);
    for (const p of REQUIRED) expect(paths).toContain(p);
    expect(paths.filter((p) => /\.map$|^test\/|^fixtures\/|^bench\/|^scripts\/|\.tsbuildinfo$/.test(p))).toEqual([]);
    expect(paths.filter((p) => p.endsWith(".ts") && !p.endsWith(".d.ts"))).toEqual([]);
  });

  it("declares tsx a development dependency only, and bin runs the compiled JavaScript", () => {
    const pkg = JSON.parse(readFileSync(join(app, "node_modules", "hcp-bot", "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies?: Record<string, string>; bin: Record<string, string> };
    expect(Object.keys(pkg.dependencies)).not.toContain("tsx");
    const binText = readFileSync(join(app, "node_modules", "hcp-bot", pkg.bin["hcp-bot"]!), "utf8");
    expect(binText).toContain("../dist/main.js");
    expect(binText).not.toMatch(/tsx|\.ts"/);
  });
});

describe("installed into an empty folder", () => {
  it("lint: finds the missing sizes in a recipe (exit 1), from the compiled code", async () => {
    writeFileSync(join(app, "recipe.py"), readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py")));
    // A cache folder of its own: the code cache written there shows the lint ran from dist/lint.cjs
    // (only dist/lint-start.cjs turns it on; bin/hcp-bot.js falls back to dist/main.js when it is missing).
    const cacheDir = join(work, "code-cache");
    const r = await hcpBot(["lint", "recipe.py"], app, { HCP_BOT_CACHE_DIR: cacheDir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/recipe\.py:\d+:\d+: error HCP001/);
    expect(r.stdout).toMatch(/error HCP001 \[\*\] .*: set it to \[2, 2\]$/m);
    // Node's compile cache: one folder per Node version and V8 flags, holding the entries.
    const versions = readdirSync(cacheDir).filter((name) => name.startsWith(process.version));
    expect(versions).toHaveLength(1);
    expect(readdirSync(join(cacheDir, versions[0]!)).length).toBeGreaterThan(0);
  });

  it("lint: a script starting from an upstream recipe is judged on the shipped index when no Bridge is installed", async () => {
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

  it("verdict: reads a real signed probe log (the probe ran, no training step: not a pass)", async () => {
    const log = join(root, "fixtures", "logs", "real-probe", "s1_gloo_cp4_hcp2x2.v2.log");
    const key = (JSON.parse(readFileSync(join(root, "fixtures", "logs", "real-probe", "keys.json"), "utf8")) as Record<string, string>)["s1_gloo_cp4_hcp2x2.v2.log"]!;
    const r = await hcpBot(["verdict", log, "--exit-code", "0", "--probe-key", key, "--world-size", "4", "--format", "json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "fail", hcp: { active: true, probeReports: 4 } });
  });

  it("smoke-run --dry-run: the argv with the shipped probe's environment", async () => {
    // A Megatron-Bridge checkout (run_recipe.py) inside the consumer folder, with a uv on PATH (smoke-run looks for both).
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

  it("init-workflow: writes the workflow from the shipped template", async () => {
    // A checkout inside the consumer folder, so npx finds the installed command.
    const repo = join(app, "repo");
    mkdirSync(repo);
    const r = await hcpBot(["init-workflow"], repo);
    expect(r.code).toBe(0);
    const workflow = readFileSync(join(repo, ".github", "workflows", "hcp-smoke.yml"), "utf8");
    expect(workflow).toContain(`hcp-bot@${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version}`);
    expect(workflow).toContain("workflow_dispatch");
  });

  it("advise, --help and --version", async () => {
    const advise = await hcpBot(["advise", "--cp", "16", "--heads", "32", "--kv-heads", "8"]);
    expect(advise.stdout).toMatch(/hierarchical_context_parallel_sizes=\[8, 2\]/);
    expect((await hcpBot(["lint", "--help"])).stdout).toMatch(/Exit status:/);
    const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version as string;
    expect((await hcpBot(["--version"])).stdout.trim()).toBe(version);
  });

  it("the library and its types: a TypeScript program compiles against dist/types and runs", async () => {
    writeFileSync(join(app, "r.py"), readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py")));
    writeFileSync(join(app, "consumer.ts"), CONSUMER_TS);
    const tsconfig = { compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: false, types: [], lib: ["es2023", "dom"] }, files: ["consumer.ts"] };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    const tsc = await run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: app }).then(
      () => "",
      (e: { stdout: string }) => e.stdout,
    );
    // web-tree-sitter's own declarations need @types/emscripten; every other error would be ours.
    const ours = tsc.split("\n").filter((l) => l.trim() && !l.startsWith("node_modules/web-tree-sitter/") && !/^\s/.test(l));
    expect(ours).toEqual([]);
    // Node 20 runs the same program once the types are erased: the library is plain ESM.
    const js = CONSUMER_TS.replace(/, type Finding/, "").replace(/: \[number, number\] \| undefined|: number\[\]\[\]|: readonly Finding\[\]/g, "").replace(/!\./g, ".").replace(/\]!;/g, "];");
    writeFileSync(join(app, "consumer.mjs"), js);
    const out = JSON.parse((await run(process.execPath, ["consumer.mjs"], { cwd: app })).stdout) as { sizes: number[]; advised: number[]; rings: number; findings: string[] };
    expect(out).toMatchObject({ sizes: [8, 2], advised: [8, 2], rings: 8 });
    expect(out.findings).toContain("HCP001");
  });
});

describe("the Docker image's layout", () => {
  it("the Dockerfile packs the build and runs the unpacked package, never the sources", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/RUN npm run build && mkdir \/pkg && npm pack --ignore-scripts --pack-destination \/pkg/);
    expect(dockerfile).toMatch(/tar -xzf \/pkg\/hcp-bot-\*\.tgz --strip-components=1/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const runtime = dockerfile.slice(dockerfile.indexOf("AS runtime"));
    expect(runtime).not.toMatch(/COPY (src|bin|templates)\b/);
    expect(runtime).toContain('ENTRYPOINT ["node", "bin/hcp-bot.js"]');
  });

  it("serves from the installed package as the image's WORKDIR does, and answers the HEALTHCHECK", async () => {
    // The image's /app is the unpacked tarball with its production dependencies: here, the installed package folder.
    const pkgDir = join(app, "node_modules", "hcp-bot");
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: "0", HOST: "127.0.0.1", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-img-")), LOG_FORMAT: "json" as const };
    const child = spawn(process.execPath, ["bin/hcp-bot.js", "serve"], { cwd: pkgDir, env, stdio: ["ignore", "pipe", "pipe"] });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let err = "";
        child.stderr!.on("data", (d: Buffer) => {
          err += d.toString();
          const m = /localhost:(\d+)\//.exec(err);
          if (m) resolve(Number(m[1]));
        });
        child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
      });
      const page = await (await fetch(`http://127.0.0.1:${port}/probot`)).text();
      expect(page).toContain("hcp-bot"); // Probot read the shipped app.yml and package.json from the working folder
      // The playground comes prebuilt in the package (dist/web): served, not rebuilt.
      expect((await fetch(`http://127.0.0.1:${port}/playground`)).status).toBe(200);
      const script = await fetch(`http://127.0.0.1:${port}/playground/page.js`);
      expect(script.status).toBe(200);
      expect(script.headers.get("content-type")).toMatch(/javascript/);
      // So do the rule pages, rendered at build time: the package ships no docs/ to read.
      expect((await fetch(`http://127.0.0.1:${port}/docs/rules/HCP001`)).status).toBe(200);
      const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
      const argv = JSON.parse(/HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])/.exec(dockerfile)![1]!) as string[];
      const health = await run(process.execPath, argv.slice(1), { env: { ...env, PORT: String(port) } }).then(() => 0, (e: { code: number }) => e.code);
      expect(health).toBe(0);
    } finally {
      child.kill("SIGTERM");
    }
  });
});
