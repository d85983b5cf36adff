// Settings on the edge hosts: GitHub's PKCS#1 key works as GitHub hands it out (wrapped for
// WebCrypto exactly as OpenSSL would), and a malformed key is a clear one-line error on
// both runtimes rather than a failed first webhook.
import { spawnSync } from "node:child_process";
import { createPrivateKey } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkPrivateKey, normalizePrivateKey } from "../../src/edge/key.ts";
import { appKeys } from "../support/bot-harness.ts";
import { startWorkerd } from "../../scripts/start-workerd.ts";

const root = join(import.meta.dirname, "..", "..");
const BAD_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\n";
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

  it("workerd answers every request with the reason (503) when the key is malformed", async () => {
    const worker = await startWorkerd({ ...settings(BAD_KEY), HOST: "127.0.0.1", PORT: "0" });
    try {
      for (const [path, init] of [["/healthz", {}], ["/api/github/webhooks", { method: "POST", body: "{}" }]] as const) {
        const res = await fetch(`${worker.url}${path}`, init);
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: string }).error).toMatch(/^PRIVATE_KEY is not a usable RSA private key/);
      }
    } finally {
      await worker.stop();
    }
  }, 30_000);

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
    const missing = denoWith({ ...settings(BAD_KEY), APP_ID: "" });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/APP_ID is missing/);
  }, 60_000);
});
