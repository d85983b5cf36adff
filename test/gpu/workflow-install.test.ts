// The rendered "Install hcp-bot" step under bash, with the real npm against a registry on
// loopback: with HCP_BOT_INTEGRITY the job installs only a tarball that hashes to the pin, also
// when the registry itself is compromised (it serves another tarball and a packument whose
// integrity matches that one, so npm's own check passes). Without the pin the registry is trusted.
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseEnv, hcpBot, tempDir } from "./helpers.ts";

interface Step { name?: string; run?: string }
interface Workflow { jobs: Record<string, { env: Record<string, string>; steps: Step[] }> }

const VERSION = "9.9.9";
const SPEC = `hcp-bot@${VERSION}`;

/** A tiny package named hcp-bot whose command prints `says`, packed by the real npm. */
function packPackage(says: string): Buffer {
  const dir = tempDir("hcp-pkg-");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "hcp-bot", version: VERSION, bin: { "hcp-bot": "cli.js" } }));
  writeFileSync(join(dir, "cli.js"), `#!/usr/bin/env node\nconsole.log(${JSON.stringify(says)});\n`);
  const out = join(dir, "out");
  mkdirSync(out);
  const r = spawnSync("npm", ["pack", "--silent", "--pack-destination", out], { cwd: dir, encoding: "utf8", env: npmEnv(dir) });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  return readFileSync(join(out, readdirSync(out)[0]!));
}

const integrityOf = (b: Buffer) => `sha512-${createHash("sha512").update(b).digest("base64")}`;

/** npm with no user config, no cache outside `home`, no audit or update check. */
function npmEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  writeFileSync(join(home, ".npmrc"), "");
  return { ...baseEnv(), HOME: home, npm_config_userconfig: join(home, ".npmrc"), npm_config_cache: join(home, ".npm-cache"), npm_config_update_notifier: "false", npm_config_audit: "false", npm_config_fund: "false", ...extra };
}

let genuine: Buffer;
let tampered: Buffer;
/** What the registry serves: the genuine tarball, or (compromised) another one with its own integrity. */
let served: Buffer;
let server: Server;
let registry: string;

beforeAll(async () => {
  genuine = packPackage("genuine");
  tampered = packPackage("tampered");
  served = genuine;
  server = createServer((req, res) => {
    const url = req.url ?? "";
    if (url === "/hcp-bot") {
      const dist = { tarball: `${registry}/hcp-bot/-/hcp-bot-${VERSION}.tgz`, integrity: integrityOf(served), shasum: createHash("sha1").update(served).digest("hex") };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ name: "hcp-bot", "dist-tags": { latest: VERSION }, versions: { [VERSION]: { name: "hcp-bot", version: VERSION, bin: { "hcp-bot": "cli.js" }, dist } } }));
    } else if (url === `/hcp-bot/-/hcp-bot-${VERSION}.tgz`) {
      res.setHeader("content-type", "application/octet-stream");
      res.end(served);
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** `hcp-bot init-workflow` with `env`; the parsed workflow, or the failed run. */
async function render(env: Record<string, string> = {}) {
  const cwd = tempDir("hcp-init-");
  const r = await hcpBot(["init-workflow"], { cwd, env: baseEnv(env) });
  const path = join(cwd, ".github", "workflows", "hcp-smoke.yml");
  return { r, wf: r.code === 0 ? (parseYaml(readFileSync(path, "utf8")) as Workflow) : null };
}

const INPUTS: Record<string, string> = { sha: "0".repeat(40), pr: "7", recipe: "llama32_1b_pretrain_config", request_id: "req-1", nproc: "4", iters: "2" };

/** One step's script run as GitHub would: the job's env with valid inputs, repository variables at their rendered defaults unless `vars` sets them. */
async function runStep(wf: Workflow, name: string, vars: Record<string, string> = {}) {
  const job = Object.values(wf.jobs)[0]!;
  const dir = tempDir("hcp-install-");
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(job.env)) {
    const input = /^\$\{\{ inputs\.([a-z_]+) \}\}$/.exec(value);
    const variable = /^\$\{\{ vars\.([A-Z_]+)(?: \|\| '([^']*)')? \}\}$/.exec(value);
    if (input) env[key] = INPUTS[input[1]!] ?? "";
    else if (variable) env[key] = vars[variable[1]!] ?? variable[2] ?? "";
  }
  // Asynchronously: the registry answers from this process.
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    execFile("/bin/bash", ["-e", "-c", job.steps.find((s) => s.name === name)!.run!], { cwd: dir, encoding: "utf8", env: npmEnv(dir, { RUNNER_TEMP: dir, npm_config_registry: registry, ...env }) }, (error, stdout, stderr) =>
      done({ status: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
  });
  const installed = join(dir, "hcp-bot", "node_modules", ".bin", "hcp-bot");
  const says = existsSync(installed) ? spawnSync(installed, [], { encoding: "utf8" }).stdout.trim() : null;
  return { status: r.status, output: r.stdout + r.stderr, says };
}

describe("installing hcp-bot on the runner, pinned by integrity", () => {
  it("init-workflow renders the pin from HCP_BOT_INTEGRITY and refuses one that is not a sha512 integrity", async () => {
    const pinned = await render({ HCP_BOT_SPEC: SPEC, HCP_BOT_INTEGRITY: integrityOf(genuine) });
    expect(pinned.r.code, pinned.r.stderr).toBe(0);
    expect(Object.values(pinned.wf!.jobs)[0]!.env.HCP_BOT_INTEGRITY).toBe(`\${{ vars.HCP_BOT_INTEGRITY || '${integrityOf(genuine)}' }}`);
    expect(pinned.r.stdout).toContain(`${SPEC} pinned to sha512-`);
    for (const bad of ["sha1-abc", `sha256-${createHash("sha256").update(genuine).digest("base64")}`, "sha512-' }}\n  x: y"]) {
      const r = await render({ HCP_BOT_SPEC: SPEC, HCP_BOT_INTEGRITY: bad });
      expect(r.r.code).toBe(2);
      expect(r.r.stderr).toContain("HCP_BOT_INTEGRITY must be a sha512 integrity");
    }
  });

  it("installs the pinned tarball when the registry serves it", async () => {
    served = genuine;
    const { wf } = await render({ HCP_BOT_SPEC: SPEC, HCP_BOT_INTEGRITY: integrityOf(genuine) });
    const r = await runStep(wf!, "Install hcp-bot");
    expect(r.status, r.output).toBe(0);
    expect(r.says).toBe("genuine");
  });

  it("a compromised registry (another tarball, a packument that matches it) installs nothing and says why", async () => {
    served = tampered;
    const { wf } = await render({ HCP_BOT_SPEC: SPEC, HCP_BOT_INTEGRITY: integrityOf(genuine) });
    const r = await runStep(wf!, "Install hcp-bot");
    expect(r.status).toBe(1);
    expect(r.output).toContain(`::error::${SPEC} from the registry is ${integrityOf(tampered)}, not the pinned HCP_BOT_INTEGRITY ${integrityOf(genuine)}: nothing was installed`);
    expect(r.says).toBeNull();
    // Without the pin the same registry is trusted: what the pin is for.
    const { wf: unpinned } = await render({ HCP_BOT_SPEC: SPEC });
    expect((await runStep(unpinned!, "Install hcp-bot")).says).toBe("tampered");
  });

  it("the repository variable overrides the rendered pin at run time, and Check inputs refuses a malformed one", async () => {
    served = genuine;
    const { wf } = await render({ HCP_BOT_SPEC: SPEC, HCP_BOT_INTEGRITY: integrityOf(tampered) });
    expect((await runStep(wf!, "Install hcp-bot")).status).toBe(1);
    expect((await runStep(wf!, "Install hcp-bot", { HCP_BOT_INTEGRITY: integrityOf(genuine) })).says).toBe("genuine");
    expect((await runStep(wf!, "Check inputs")).status).toBe(0);
    const check = await runStep(wf!, "Check inputs", { HCP_BOT_INTEGRITY: "sha512-short" });
    expect(check.status).toBe(1);
    expect(check.output).toContain("::error::HCP_BOT_INTEGRITY must be a sha512 integrity");
  });
});
