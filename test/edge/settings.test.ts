// Settings on the edge hosts: GitHub's PKCS#1 key works as GitHub hands it out (wrapped for
// WebCrypto exactly as OpenSSL would), and a malformed key is a clear one-line error on
// both runtimes rather than a failed first webhook.
import { spawnSync } from "node:child_process";
import { createPrivateKey } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkPrivateKey, normalizePrivateKey } from "../../src/edge/key.ts";
import { appKeys } from "../support/bot-harness.ts";
import { startWorkerd } from "../../scripts/start-workerd.ts";
import { startEdge } from "./runtimes.ts";

const root = join(import.meta.dirname, "..", "..");
const BAD_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\n";
/** The App key with one base64 character of its modulus changed: it parses, and signs nothing GitHub accepts. */
const FLIPPED_KEY = (() => {
  const lines = appKeys.privateKey.split("\n");
  lines[2] = `${lines[2]!.slice(0, 30)}${lines[2]![30] === "A" ? "B" : "A"}${lines[2]!.slice(31)}`;
  return lines.join("\n");
})();
const settings = (key: string) => ({ APP_ID: "5", PRIVATE_KEY: key, WEBHOOK_SECRET: "s", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-edge-settings-")), LOG_LEVEL: "silent" as const });

describe("the App key on edge runtimes", () => {
  it("wraps a PKCS#1 key in the same PKCS#8 envelope as OpenSSL, and keeps a PKCS#8 key", async () => {
    const openssl = createPrivateKey(appKeys.privateKey).export({ type: "pkcs8", format: "der" });
    expect(Buffer.from(normalizePrivateKey(appKeys.privateKey).der).equals(openssl)).toBe(true);
    const pkcs8 = createPrivateKey(appKeys.privateKey).export({ type: "pkcs8", format: "pem" }) as string;
    expect(Buffer.from(normalizePrivateKey(pkcs8).der).equals(openssl)).toBe(true);
    // A key stored as one line with literal \n (as some secret stores hand it over).
    expect(await checkPrivateKey(appKeys.privateKey.replace(/\n/g, "\\n"))).toContain("BEGIN PRIVATE KEY");
  });

  it("says what is wrong with a key that is not one", async () => {
    await expect(checkPrivateKey("hello")).rejects.toThrow(/PRIVATE_KEY must be a PEM private key/);
    await expect(checkPrivateKey("-----BEGIN RSA PRIVATE KEY-----\n!!!\n-----END RSA PRIVATE KEY-----")).rejects.toThrow(/not valid PEM/);
    await expect(checkPrivateKey(BAD_KEY)).rejects.toThrow(/PRIVATE_KEY is not a usable RSA private key/);
    await expect(checkPrivateKey("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----")).rejects.toThrow(/unencrypted/);
  });

  it.each([
    ["malformed", BAD_KEY, /^PRIVATE_KEY is not a usable RSA private key/],
    ["damaged (one base64 character changed)", FLIPPED_KEY, /^PRIVATE_KEY is (damaged: a signature made with it does not verify|not a usable RSA private key)/],
  ])("workerd answers every request with the reason (503) when the key is %s", async (_what, key, reason) => {
    const worker = await startWorkerd({ ...settings(key), HOST: "127.0.0.1", PORT: "0" });
    try {
      for (const [path, init] of [["/healthz", {}], ["/api/github/webhooks", { method: "POST", body: "{}" }]] as const) {
        const res = await fetch(`${worker.url}${path}`, init);
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: string }).error).toMatch(reason);
      }
    } finally {
      await worker.stop();
    }
  });

  it.each(["workerd", "deno"] as const)("%s takes the key from PRIVATE_KEY_PATH, as npm start does", async (runtime) => {
    const file = join(mkdtempSync(join(tmpdir(), "hcp-edge-key-")), "app.pem");
    writeFileSync(file, appKeys.privateKey);
    const { PRIVATE_KEY: _unused, ...rest } = settings(appKeys.privateKey);
    const bot = await startEdge(runtime, { ...rest, PRIVATE_KEY_PATH: file, HCP_HEALTH_TOKEN: "key-path-operator-token" });
    try {
      const res = await fetch(`${bot.url}/healthz`, { headers: { authorization: "Bearer key-path-operator-token" } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: "ok", runtime });
    } finally {
      await bot.stop();
    }
  });

  it("Deno stops at start with the reason, as the Node server does", () => {
    const denoWith = (env: Record<string, string>) =>
      spawnSync(join(root, "node_modules", ".bin", "deno"), ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "dist/edge/deno.js"], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", PORT: "0", HOST: "127.0.0.1", ...env },
        encoding: "utf8",
        timeout: 30_000,
      });
    const bad = denoWith(settings(BAD_KEY));
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim()).toMatch(/^hcp-bot: PRIVATE_KEY is not a usable RSA private key/);
    // One base64 character changed in the modulus (Deno's WebCrypto refuses it at the import, workerd's signs with it).
    const flipped = denoWith(settings(FLIPPED_KEY));
    expect(flipped.status).toBe(1);
    expect(flipped.stderr.trim()).toMatch(/^hcp-bot: PRIVATE_KEY is (damaged|not a usable RSA private key)/);
    const missing = denoWith({ ...settings(BAD_KEY), APP_ID: "" });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/APP_ID is missing/);
    const { PRIVATE_KEY: _unused, ...noKey } = settings(BAD_KEY);
    const unreadable = denoWith({ ...noKey, PRIVATE_KEY_PATH: "/nonexistent/app.pem" });
    expect(unreadable.status).toBe(1);
    expect(unreadable.stderr.trim()).toMatch(/^hcp-bot: PRIVATE_KEY_PATH \/nonexistent\/app\.pem cannot be read/);
  });
});
