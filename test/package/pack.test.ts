// The hcp-bot-server package as the Docker image installs it: `npm pack` of the repository (its
// prepack builds dist/ and copies the server's outputs into packages/server), `npm pack
// ./packages/server`, then the server tarball unpacked into an empty folder whose dependencies
// come offline from npm's cache, pinned by the repository's lock (scripts/install-lock.mjs),
// with the `hcp-bot` dependency from the first tarball. The `hcp-bot` package alone is
// light-install.test.ts's.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const work = mkdtempSync(join(tmpdir(), "hcp-pack-"));
// The image's /app: the unpacked server package with its production dependencies.
const app = join(work, "app");

interface PackedFile {
  path: string;
  size: number;
}

/** Every file the server tarball may hold: its bin, the server bundle, the web pages, app.yml, and what npm always adds. */
const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^bin\/hcp-bot-server\.js$/,
  /^dist\/server\/serve\.js$/,
  /^dist\/web\/(build\.json|playground\/(index\.html|page\.js|worker\.js|web-tree-sitter\.wasm|tree-sitter-python\.wasm)|web\/(style\.css|noscript\.css|icon\.svg)|docs\/rules\/([A-Z]+\d{3}|index)\.html)$/,
  /^app\.yml$/,
];
const REQUIRED = ["LICENSE", "bin/hcp-bot-server.js", "dist/server/serve.js", "dist/web/build.json", "dist/web/docs/rules/HCP001.html", "dist/web/docs/rules/index.html", "dist/web/playground/page.js", "dist/web/playground/tree-sitter-python.wasm", "app.yml"];

let files: PackedFile[] = [];
let manifest: { name: string; version: string; dependencies: Record<string, string>; bin: Record<string, string> };

async function pack(args: string[]): Promise<{ filename: string; files: PackedFile[]; size: number; unpackedSize: number }> {
  const packed = await run(npm, ["pack", "--json", "--pack-destination", work, ...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  return (JSON.parse(packed.stdout) as [{ filename: string; files: PackedFile[]; size: number; unpackedSize: number }])[0];
}

beforeAll(async () => {
  const cli = await pack([]);
  // The repository's prepack just built and copied everything: pack the server folder as it is.
  const server = await pack(["--ignore-scripts", "./packages/server"]);
  files = server.files;
  console.info(`${server.filename}: ${files.length} files, ${server.size} bytes packed, ${server.unpackedSize} unpacked\n${files.map((f) => `  ${String(f.size).padStart(8)}  ${f.path}`).join("\n")}`);
  mkdirSync(app);
  await run("tar", ["-xzf", join(work, server.filename), "-C", app, "--strip-components=1"]);
  manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as typeof manifest;
  await run(process.execPath, [join(root, "scripts", "install-lock.mjs"), app, join(work, cli.filename)]);
  await run(npm, ["ci", "--offline", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
});

describe("the hcp-bot-server tarball", () => {
  it("holds what the server runs and nothing else: no tests, fixtures, sources, source maps or the CLI's bundles", () => {
    const paths = files.map((f) => f.path);
    expect(paths.filter((p) => !ALLOWED.some((re) => re.test(p)))).toEqual([]);
    for (const p of REQUIRED) expect(paths).toContain(p);
  });

  it("depends on the hcp-bot package of the same version, and its bin runs the compiled server", () => {
    const cli = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; version: string };
    expect(manifest.name).toBe("hcp-bot-server");
    expect(manifest.version).toBe(cli.version);
    expect(manifest.dependencies[cli.name]).toBe(cli.version);
    expect(Object.keys(manifest.dependencies)).not.toContain("tsx");
    const binText = readFileSync(join(app, manifest.bin["hcp-bot-server"]!), "utf8");
    expect(binText).toContain("../dist/server/serve.js");
    expect(binText).not.toMatch(/tsx|\.ts"/);
  });

  it("its dependencies are pinned like the repository's: each version the repository's lock installs", () => {
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
    for (const name of Object.keys(manifest.dependencies).filter((n) => n !== "hcp-bot")) {
      const installed = JSON.parse(readFileSync(join(app, "node_modules", name, "package.json"), "utf8")) as { version: string };
      expect(installed.version, name).toBe(lock.packages[`node_modules/${name}`]?.version);
    }
  });

  it("takes the files it does not ship (workers, template, index, probe, grammar) from the hcp-bot package it depends on", async () => {
    const own = ["app.yml", "dist/web/build.json"];
    const fromCli = ["dist/extract-worker.js", "dist/artifact-worker.js", "templates/hcp-smoke.yml", "data/megatron-bridge-recipes.json", "src/gpu/probe/sitecustomize.py", "dist/vendor/tree-sitter-python.wasm"];
    const script = `const { packageFile } = await import("hcp-bot-server/serve"); console.log(JSON.stringify(${JSON.stringify([...own, ...fromCli])}.map(packageFile)));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: app });
    const paths = JSON.parse(stdout) as string[];
    expect(paths.slice(0, own.length)).toEqual(own.map((p) => join(app, p)));
    expect(paths.slice(own.length)).toEqual(fromCli.map((p) => join(app, "node_modules", "hcp-bot", p)));
    for (const path of paths) expect(existsSync(path), path).toBe(true);
  });

  it("`hcp-bot-server lint` is the hcp-bot CLI it depends on", async () => {
    writeFileSync(join(work, "recipe.py"), readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py")));
    const r = await run(process.execPath, ["bin/hcp-bot-server.js", "lint", join(work, "recipe.py")], { cwd: app, env: { ...process.env, NO_COLOR: "1" } }).then(
      () => ({ code: 0, stdout: "" }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/recipe\.py:\d+:\d+: error HCP001/);
  });
});

describe("the Docker image's layout", () => {
  it("the Dockerfile packs both packages and runs the unpacked server package, never the sources", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/RUN npm run build && mkdir \/pkg && npm pack --ignore-scripts --pack-destination \/pkg/);
    expect(dockerfile).toMatch(/npm pack \.\/packages\/server --ignore-scripts --pack-destination \/pkg/);
    expect(dockerfile).toMatch(/tar -xzf \/pkg\/hcp-bot-server-\[0-9\]\*\.tgz -C \/app --strip-components=1/);
    expect(dockerfile).toMatch(/node scripts\/install-lock\.mjs \/app \/pkg\/hcp-bot-\[0-9\]\*\.tgz/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const runtime = dockerfile.slice(dockerfile.indexOf("AS runtime"));
    expect(runtime).not.toMatch(/COPY (src|bin|templates|packages)\b/);
    expect(runtime).toContain('ENTRYPOINT ["node", "bin/hcp-bot-server.js"]');
  });

  it("serves from the installed package as the image's WORKDIR does, and answers the HEALTHCHECK", async () => {
    // The image's /app is the unpacked server tarball with its production dependencies: here, `app`.
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: "0", HOST: "127.0.0.1", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-img-")), LOG_FORMAT: "json" as const };
    const child = spawn(process.execPath, ["bin/hcp-bot-server.js", "serve"], { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
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
