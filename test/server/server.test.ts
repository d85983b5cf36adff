// `npm start` as a user runs it: the real binary in a child process, in setup mode
// (no credentials) and with a malformed setting; the Dockerfile's HEALTHCHECK command
// against the running server.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appKeys } from "../support/bot-harness.ts";
import { setupConsole } from "../support/setup-mode.ts";

const root = join(import.meta.dirname, "..", "..");
const bin = join(root, "bin", "hcp-bot.js");

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_SMEE_SETUP: "true", LOG_LEVEL: "warn" };
  return { ...env, ...extra };
}

const setupPort = async (child: ChildProcess) => (await setupConsole(child)).port;

describe("hcp-bot serve without credentials", () => {
  let child: ChildProcess;
  let port = 0;
  const cwd = mkdtempSync(join(tmpdir(), "hcp-setup-"));

  beforeAll(async () => {
    // Probot reads app.yml and package.json from the working folder, as in a checkout.
    child = spawn(process.execPath, [bin, "serve"], { cwd: root, env: cleanEnv({ PORT: "0", HOST: "127.0.0.1", HCP_DATA_DIR: cwd }) });
    port = await setupPort(child);
  });

  afterAll(() => {
    child?.kill("SIGTERM");
  });

  it("serves the bot's setup page built from app.yml", async () => {
    const home = await fetch(`http://127.0.0.1:${port}/`, { redirect: "manual" });
    expect(home.status).toBe(302);
    expect(home.headers.get("location")).toBe("/probot");
    const page = await (await fetch(`http://127.0.0.1:${port}/probot`)).text();
    expect(page).toContain("hcp-bot");
    // The manifest posted to GitHub carries app.yml's events and permissions.
    expect(page).toContain("workflow_run");
    expect(page).toMatch(/checks.{0,20}write/);
  });

  it("answers /healthz with its status", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" }); // details only with HCP_HEALTH_TOKEN
  });

  it("answers HEAD /healthz as GET, without the body", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe("");
  });

  it("keeps an idle keep-alive connection past Node's 5 s default, so a proxy's next request on it is answered", async () => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    let closed = false;
    socket.setEncoding("utf8").on("data", (d: string) => (text += d));
    socket.on("close", () => (closed = true));
    const ask = async () => {
      const before = (text.match(/HTTP\/1\.1 200/g) ?? []).length;
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n");
      for (let i = 0; i < 100 && (text.match(/HTTP\/1\.1 200/g) ?? []).length === before && !closed; i++) await new Promise((r) => setTimeout(r, 50));
      return (text.match(/HTTP\/1\.1 200/g) ?? []).length - before;
    };
    try {
      expect(await ask()).toBe(1);
      expect(text).toMatch(/keep-alive: timeout=65/i);
      await new Promise((r) => setTimeout(r, 6500));
      expect(closed).toBe(false);
      expect(await ask()).toBe(1);
    } finally {
      socket.destroy();
    }
  });

  it("passes the Dockerfile's HEALTHCHECK command", async () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    const m = /HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])/.exec(dockerfile);
    expect(m, "HEALTHCHECK CMD in exec form").not.toBeNull();
    const argv = JSON.parse(m![1]!) as string[];
    expect(argv[0]).toBe("node");
    const ok = await promisify(execFile)(process.execPath, argv.slice(1), { env: cleanEnv({ PORT: String(port) }) }).then(
      () => 0,
      (e: { code: number }) => e.code,
    );
    expect(ok).toBe(0);
    const down = await promisify(execFile)(process.execPath, argv.slice(1), { env: cleanEnv({ PORT: "1" }) }).then(
      () => 0,
      (e: { code: number }) => e.code,
    );
    expect(down).toBe(1);
  });
});

/** The test App key with one base64 character of its modulus changed: it still parses, but signs nothing GitHub would accept. */
const FLIPPED_KEY = (() => {
  const lines = appKeys.privateKey.split("\n");
  const line = lines[2]!;
  lines[2] = `${line.slice(0, 30)}${line[30] === "A" ? "B" : "A"}${line.slice(31)}`;
  return lines.join("\n");
})();

describe("hcp-bot serve in setup mode, as a first `npm start` runs it", () => {
  it("answers this machine only unless HOST says otherwise, and writes imported credentials (given the setup code) to a .env only its owner can read", async () => {
    // A folder of its own (the setup flow writes .env there), with the files Probot reads.
    const cwd = mkdtempSync(join(tmpdir(), "hcp-setup-cwd-"));
    for (const file of ["app.yml", "package.json"]) copyFileSync(join(root, file), join(cwd, file));
    const child = spawn(process.execPath, [bin, "serve"], { cwd, env: cleanEnv({ PORT: "0", HCP_DATA_DIR: cwd }) });
    try {
      const { port, code } = await setupConsole(child);
      const reach = (host: string) => new Promise<boolean>((resolve) => {
        const socket = connect(port, host, () => (socket.destroy(), resolve(true)));
        socket.on("error", () => resolve(false));
      });
      expect(await reach("127.0.0.1")).toBe(true);
      const outside = Object.values(networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal);
      expect(outside, "a non-loopback address to try").toBeDefined();
      expect(await reach(outside!.address)).toBe(false);
      const credentials = { appId: "1234", pem: "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----", webhook_secret: "imported-secret" };
      const importAs = (extra: object) => fetch(`http://127.0.0.1:${port}/probot/import`, { method: "POST", body: JSON.stringify({ ...credentials, ...extra }) });
      const env = join(cwd, ".env");
      // Without the code printed on the console, or with another one, nothing is written.
      expect((await importAs({ appId: "999", webhook_secret: "attacker" })).status).toBe(403);
      expect((await importAs({ appId: "999", webhook_secret: "attacker", setup_code: "AAAA-BBBB-CCCC" })).status).toBe(403);
      expect(existsSync(env)).toBe(false);
      expect((await importAs({ setup_code: code })).status).toBe(200);
      expect(statSync(env).mode & 0o777).toBe(0o600);
      expect(readFileSync(env, "utf8")).toMatch(/^APP_ID=1234$/m);
      // One time: the code is spent once .env is written.
      expect((await importAs({ appId: "999", webhook_secret: "attacker", setup_code: code })).status).toBe(403);
      expect(readFileSync(env, "utf8")).toMatch(/^APP_ID=1234$/m);
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describe("hcp-bot serve with a malformed setting", () => {
  it.each([
    [{ APP_ID: "12", WEBHOOK_SECRET: "s", PRIVATE_KEY: FLIPPED_KEY }, /^hcp-bot: configuration error: PRIVATE_KEY is damaged: a signature made with it does not verify with its own public half/],
    [{ PORT: "eighty" }, /^hcp-bot: configuration error: PORT must be a number between 0 and 65535\n$/],
    [{ APP_ID: "12", WEBHOOK_SECRET: "s" }, /^hcp-bot: configuration error: PRIVATE_KEY or PRIVATE_KEY_PATH is missing/],
    [{ NODE_ENV: "production" }, /required when NODE_ENV=production/],
  ])("stops with one clear line (%j)", async (env, line) => {
    const result = await promisify(execFile)(process.execPath, [bin, "serve"], { cwd: root, env: cleanEnv(env) }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(line);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});
