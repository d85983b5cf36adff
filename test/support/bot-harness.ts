// Shared pieces of the end-to-end suites: the GitHub App's key pair, signed webhook
// deliveries, and training logs built from real GPU logs.
import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

/** A PKCS#1 RSA key pair, as GitHub hands App keys out (made once per test file). */
export const appKeys = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

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

export function fixtureLog(name: string): string {
  return readFileSync(join(root, "fixtures", "logs", name), "utf8");
}
