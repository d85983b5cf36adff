// Shared pieces of the end-to-end suites: the GitHub App's key pair, signed webhook
// deliveries, and training logs built from real GPU logs.
import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readServerSettings, type ServerSettings } from "../../src/node/env.ts";

const root = join(import.meta.dirname, "..", "..");

/** A PKCS#1 RSA key pair, as GitHub hands App keys out (made once per test file). */
export const appKeys = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

/**
 * Settings for the real server pointed (GHE_HOST/GHE_PROTOCOL) at a fake GitHub on
 * loopback, on a free port, quiet, with a fresh data folder unless one is given; `extra`
 * adds or overrides variables (Slack's, for instance).
 */
export function botSettings(o: { githubUrl: string; appId: number; secret: string; dataDir?: string; extra?: Record<string, string> }): ServerSettings {
  return readServerSettings({
    APP_ID: String(o.appId),
    PRIVATE_KEY: appKeys.privateKey,
    WEBHOOK_SECRET: o.secret,
    PORT: "0",
    HOST: "127.0.0.1",
    GHE_HOST: new URL(o.githubUrl).host,
    GHE_PROTOCOL: "http",
    LOG_LEVEL: "silent",
    HCP_DATA_DIR: o.dataDir ?? mkdtempSync(join(tmpdir(), "hcp-data-")),
    ...o.extra,
  });
}

/** POSTs a webhook signed like GitHub signs it; resolves with the HTTP status. */
export async function deliverWebhook(url: string, secret: string, event: string, payload: object, id: string = randomUUID()): Promise<number> {
  const body = JSON.stringify(payload);
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": id,
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    },
    body,
  });
  await res.text();
  return res.status;
}

/** Delivers a signed webhook to the bot, then waits for the work it queued (the answer comes first). */
export async function deliverAndSettle(bot: { url: string; idle(): Promise<void> }, secret: string, event: string, payload: object, id?: string): Promise<number> {
  const status = await deliverWebhook(`${bot.url}/api/github/webhooks`, secret, event, payload, id);
  await bot.idle();
  return status;
}

/** Bridge iteration lines (HCP-RULES 4.2) with finite losses. */
export function iterationLines(count = 2): string {
  return Array.from(
    { length: count },
    (_, k) =>
      ` [2026-11-30 10:00:0${k + 1}] iteration        ${k + 1}/       ${count} | consumed samples:            ${4 * (k + 1)} | elapsed time per iteration (ms): 1234.5 | learning rate: 1.000000E-05 | global batch size:     4 | lm loss: 1.03456${k + 1}E+01 | loss scale: 1.0 | grad norm: 3.210 | number of skipped iterations:   0 | number of nan iterations:   0 |`,
  ).join("\n");
}

/** A real GPU log from fixtures/logs, with two training steps added (the probe runs trained nothing). */
export function trainingLog(fixture: string): string {
  return `${fixtureLog(fixture)}\n${iterationLines()}\n`;
}

/**
 * A passing smoke run as the bot receives it: the real signed probe log of a CP=4 [2, 2] run on
 * 4 ranks (fixtures/logs/real-probe) with two training steps added, and the runner's
 * verdict.json facts: exit 0 and that run's probe key (`extra` adds or replaces facts).
 */
export const PASSING_RUN_LOG = "real-probe/s1_gloo_cp4_hcp2x2.v2.log";
export const PASSING_RUN_KEY: string = JSON.parse(readFileSync(join(root, "fixtures", "logs", "real-probe", "keys.json"), "utf8"))["s1_gloo_cp4_hcp2x2.v2.log"];
export function runnerFacts(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ exitCode: 0, probeKey: PASSING_RUN_KEY, ...extra });
}

export function fixtureLog(name: string): string {
  return readFileSync(join(root, "fixtures", "logs", name), "utf8");
}

/** The smoke run's default recipe as a one-GPU module would define it (CP is set by the run's overrides). */
export const SMOKE_RECIPE = `from megatron.bridge.recipes.common import _pretrain_common


def llama32_1b_pretrain_config():
    cfg = _pretrain_common()
    cfg.dataset.seq_length = 8192
    cfg.model.seq_length = 8192
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.context_parallel_size = 1
    return cfg
`;
