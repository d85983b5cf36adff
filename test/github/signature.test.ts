// The webhook signature check the edge hosts answer with before loading the app. GitHub's
// documented test vector first, then everything a forger or a broken proxy could send.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhookSignature } from "../../src/github/signature.ts";

// docs.github.com, "Validating webhook deliveries": the secret, the payload and its signature.
const DOC_SECRET = "It's a Secret to Everybody";
const DOC_BODY = "Hello, World!";
const DOC_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

const sign = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

describe("verifyWebhookSignature", () => {
  it("accepts GitHub's documented example, and node:crypto's signature of any body", async () => {
    expect(await verifyWebhookSignature(DOC_SECRET, DOC_BODY, DOC_SIGNATURE)).toBe(true);
    const body = JSON.stringify({ action: "opened", text: "ünïcødé ✓ \u0000" });
    expect(await verifyWebhookSignature("s3cret", body, sign("s3cret", body))).toBe(true);
  });

  it("refuses a wrong secret, a changed body, and every malformed header, without throwing", async () => {
    expect(await verifyWebhookSignature("other", DOC_BODY, DOC_SIGNATURE)).toBe(false);
    expect(await verifyWebhookSignature(DOC_SECRET, `${DOC_BODY} `, DOC_SIGNATURE)).toBe(false);
    for (const header of [null, "", "sha256=", "sha256=zz", DOC_SIGNATURE.toUpperCase(), DOC_SIGNATURE.replace("sha256=", "sha1="), `${DOC_SIGNATURE}00`, DOC_SIGNATURE.slice(0, -2), ` ${DOC_SIGNATURE}`]) {
      expect(await verifyWebhookSignature(DOC_SECRET, DOC_BODY, header), String(header)).toBe(false);
    }
  });
});
