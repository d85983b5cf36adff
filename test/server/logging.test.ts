// What `hcp-bot serve` logs: readable lines on a terminal, JSON lines when piped (a log
// collector), LOG_FORMAT to choose, and no word about Smee unless WEBHOOK_PROXY_URL is set.
// The real binary, piped and under a real pseudo-terminal (`script`).
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readServerSettings } from "../../src/server/env.ts";
import { bin, root } from "../support/cli.ts";

interface Served {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** An environment with no App credentials (setup mode) and none of the developer's own settings. */
function setupEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, PORT: "0", HOST: "127.0.0.1", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-log-")), ...extra };
}

/**
 * Runs `argv` until its output shows the server listening, asks /healthz once (an HTTP
 * request line), then stops it and returns everything it wrote.
 */
function serveUntilListening(argv: string[], env: NodeJS.ProcessEnv, ask: (port: string) => Promise<unknown> = askHealth): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let asked = false;
    const timer = setTimeout(() => {
      process.kill(-child.pid!, "SIGKILL");
      reject(new Error(`no start-up line in time:\n${stdout}\n${stderr}`));
    }, 40_000);
    const check = async () => {
      const port = /localhost:(\d+)\//.exec(stdout + stderr)?.[1];
      if (!port || asked || !/Listening on/.test(stdout)) return;
      asked = true;
      await ask(port);
      setTimeout(() => process.kill(-child.pid!, "SIGTERM"), 300);
    };
    child.stdout!.setEncoding("utf8").on("data", (d: string) => ((stdout += d), void check()));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => ((stderr += d), void check()));
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
  });
}

const askHealth = (port: string) => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.text());

const serve = (env: NodeJS.ProcessEnv, ask?: (port: string) => Promise<unknown>) => serveUntilListening([process.execPath, bin, "serve"], env, ask);
/** The same under a pseudo-terminal: stdout and stderr are a TTY. */
const serveOnTerminal = (env: NodeJS.ProcessEnv) =>
  serveUntilListening(["script", "-qec", `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} serve`, "/dev/null"], { TERM: "xterm", ...env });

const lines = (text: string) => text.split(/\r?\n/).filter((l) => l.trim() !== "");
const isJson = (line: string) => {
  try {
    return typeof (JSON.parse(line) as { level?: unknown }).level === "number";
  } catch {
    return false;
  }
};
const PRETTY = /^\[\d\d:\d\d:\d\d\] (?:\u001b\[\d+m)?INFO(?:\u001b\[\d+m)? \(hcp-bot\)/;

describe("hcp-bot serve logging", () => {
  it("piped: JSON lines a collector can parse, and nothing about Smee", async () => {
    const r = await serve(setupEnv());
    const out = lines(r.stdout);
    expect(out.length).toBeGreaterThan(3);
    expect(out.filter((l) => !isJson(l))).toEqual([]);
    expect(out.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain("hcp-bot is in setup mode: no GitHub App credentials yet, so no webhook is received");
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/smee/i);
  });

  it("LOG_FORMAT=pretty: one readable line per event, even when piped", async () => {
    const r = await serve(setupEnv({ LOG_FORMAT: "pretty" }));
    const out = lines(r.stdout);
    expect(out.some((l) => PRETTY.test(l) && l.includes("hcp-bot is in setup mode"))).toBe(true);
    expect(out.filter(isJson)).toEqual([]);
    expect(r.stdout).not.toContain("\u001b[");
  });

  it("on a terminal: readable, coloured lines; NO_COLOR keeps them readable without colour; LOG_FORMAT=json wins", async () => {
    const tty = await serveOnTerminal(setupEnv());
    expect(lines(tty.stdout).some((l) => PRETTY.test(l))).toBe(true);
    expect(tty.stdout).toContain("\u001b[32mINFO");
    expect(tty.stdout).not.toMatch(/smee/i);
    const plain = await serveOnTerminal(setupEnv({ NO_COLOR: "1" }));
    expect(lines(plain.stdout).some((l) => PRETTY.test(l))).toBe(true);
    expect(plain.stdout).not.toContain("\u001b[32m");
    const json = await serveOnTerminal(setupEnv({ LOG_FORMAT: "json" }));
    expect(lines(json.stdout).filter((l) => l.startsWith("{")).every(isJson)).toBe(true);
    expect(lines(json.stdout).some(isJson)).toBe(true);
  });

  it("a LOG_FORMAT or WEBHOOK_PROXY_URL it cannot use stops start-up with one line naming it", async () => {
    const r = await serve(setupEnv({ LOG_FORMAT: "xml" }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/LOG_FORMAT must be pretty or json/);
    expect(() => readServerSettings({ WEBHOOK_PROXY_URL: "smee.io/abc" })).toThrow(/WEBHOOK_PROXY_URL must be an http\(s\) URL/);
    expect(readServerSettings({ WEBHOOK_PROXY_URL: "https://smee.io/abc123" }).webhookProxyUrl).toBe("https://smee.io/abc123");
  });

  describe("secrets never reach the log", () => {
    const TOKEN = "operator-health-token-0123456789";
    const SESSION = "s3ss10n-v4lue-that-replays";
    const HUB = `sha256=${"ab".repeat(32)}`;
    const SLACK = `v0=${"cd".repeat(32)}`;
    const CODE = "0ne-t1me-c0de";
    /** One request carrying every credential a client sends, on a URL with one-time codes in its query. */
    const askWithSecrets = async (port: string) => {
      const headers = { authorization: `Bearer ${TOKEN}`, cookie: `__Host-hcp_session=${SESSION}; theme=dark`, "x-hub-signature-256": HUB, "x-hub-signature": `sha1=${"ef".repeat(20)}`, "x-slack-signature": SLACK };
      await fetch(`http://127.0.0.1:${port}/healthz`, { headers }).then((r) => r.text());
      await fetch(`http://127.0.0.1:${port}/auth/callback?code=${CODE}&state=${CODE}-state&keep=visible`, { headers }).then((r) => r.text());
    };
    const SECRETS = [TOKEN, SESSION, HUB.slice(7), SLACK.slice(3), "ef".repeat(20), CODE];

    it("JSON: the request is logged with its credentials redacted and the rest kept", async () => {
      const r = await serve(setupEnv({ LOG_FORMAT: "json", HCP_HEALTH_TOKEN: TOKEN }), askWithSecrets);
      for (const secret of SECRETS) expect(r.stdout).not.toContain(secret);
      const entries = lines(r.stdout).map((l) => JSON.parse(l) as { msg: string; req?: { url: string; headers: Record<string, string> } });
      const health = entries.find((e) => e.req?.url === "/healthz")!;
      expect(health.req!.headers).toMatchObject({ authorization: "[Redacted]", cookie: "[Redacted]", "x-hub-signature-256": "[Redacted]", "x-hub-signature": "[Redacted]", "x-slack-signature": "[Redacted]", host: expect.stringMatching(/^127\.0\.0\.1:/) });
      const callback = entries.find((e) => e.req?.url.startsWith("/auth/callback"))!;
      expect(callback.req!.url).toBe("/auth/callback?code=[Redacted]&state=[Redacted]&keep=visible");
      expect(callback.msg).toMatch(/^GET \/auth\/callback\?code=\[Redacted\]&state=\[Redacted\]&keep=visible \d{3} - \d+ms$/);
    });

    it("pretty: one line per event, without the credentials", async () => {
      const r = await serve(setupEnv({ LOG_FORMAT: "pretty", HCP_HEALTH_TOKEN: TOKEN }), askWithSecrets);
      for (const secret of SECRETS) expect(r.stdout).not.toContain(secret);
      const out = lines(r.stdout);
      expect(out.filter((l) => !/^\[\d\d:\d\d:\d\d\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) \((hcp-bot|http)\)/.test(l))).toEqual([]);
      expect(out.some((l) => /GET \/healthz 200 - \d+ms$/.test(l))).toBe(true);
    });
  });
});
