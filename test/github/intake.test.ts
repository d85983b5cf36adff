// The one intake every host wraps (src/github/intake.ts), driven with bodies signed by
// node:crypto (an HMAC independent of the intake's WebCrypto one), GitHub's own example
// payloads and a real MemoryStore: what is refused before the body is read, what is capped,
// what is ignored, and that a routed delivery becomes one job, recording its route, however
// often it is delivered.
import { createHmac, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import examples from "@octokit/webhooks-examples/api.github.com/index.json" with { type: "json" };
import { acceptDelivery, Unavailable, type Accept, type IncomingDelivery, type IntakeDeps } from "../../src/github/intake.ts";
import type { ChunkSource } from "../../src/shared/read-capped.ts";
import { MemoryStore } from "../../src/store/index.ts";
import type { Job } from "../../src/store/types.ts";

type Json = Record<string, any>;
const SECRET = "intake-secret";
const sign = (body: string, secret = SECRET) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
const quiet = { info() {}, warn() {}, error() {} };

function example(name: string, action?: string): Json {
  const event = (examples as { name: string; examples: Json[] }[]).find((e) => e.name === name)!;
  return structuredClone(event.examples.find((p) => p.action === action && p.installation) ?? event.examples.find((p) => p.action === action)!);
}

/** A body in chunks of `size` bytes that counts what was read of it. */
function chunked(body: string, size: number): ChunkSource & { bytesRead: number; cancelled: boolean } {
  const bytes = new TextEncoder().encode(body);
  let at = 0;
  return {
    bytesRead: 0,
    cancelled: false,
    async read() {
      if (at >= bytes.length) return { done: true };
      const value = bytes.subarray(at, at + size);
      at += value.length;
      this.bytesRead += value.length;
      return { done: false, value };
    },
    cancel() {
      this.cancelled = true;
    },
  };
}

/** The intake over a real store: the jobs it wrote, and the deps to call it with. */
function intake(o: { maxBytes?: number; accept?: Accept; hmacSha256?: IntakeDeps["hmacSha256"] } = {}) {
  const store = new MemoryStore();
  const written: Job[] = [];
  const accept: Accept = async (job, claim) => {
    const stored = await store.enqueueJob(job, claim);
    if (stored) written.push(stored);
    return stored !== undefined;
  };
  const deps: IntakeDeps = { secret: SECRET, accept: o.accept ?? accept, log: quiet, ...(o.maxBytes ? { maxBytes: o.maxBytes } : {}), ...(o.hmacSha256 ? { hmacSha256: o.hmacSha256 } : {}) };
  return { written, store, deliver: (d: Partial<IncomingDelivery> & { body: IncomingDelivery["body"] }) => acceptDelivery({ id: randomUUID(), name: null, signature: null, ...d }, deps) };
}

describe("acceptDelivery", () => {
  it("refuses a forged signature (401) after reading the body, and a missing or malformed one before reading a byte; no job", async () => {
    const { deliver, written } = intake();
    const body = JSON.stringify(example("pull_request", "opened"));
    expect(await deliver({ name: "pull_request", signature: sign(body, "not-the-secret"), body })).toMatchObject({ status: 401, refused: "forged" });
    expect(await deliver({ name: "pull_request", signature: sign(`${body} `), body })).toMatchObject({ status: 401, refused: "forged" });
    for (const signature of [null, "", "sha256=zz", sign(body).toUpperCase(), sign(body).replace("sha256=", "sha1=")]) {
      const source = chunked(body, 1024);
      expect(await deliver({ name: "pull_request", signature, body: source }), String(signature)).toMatchObject({ status: 401, refused: "unsigned" });
      expect(source.bytesRead, "an unsigned body is never read").toBe(0);
    }
    expect(written).toEqual([]);
  });

  it("refuses a body over the cap with 413, by its declared length and while it streams, reading at most twice the cap; no job", async () => {
    const max = 4096;
    const { deliver, written } = intake({ maxBytes: max });
    const payload = { ...example("pull_request", "opened"), pad: "x".repeat(3 * max) };
    const body = JSON.stringify(payload);
    const streamed = chunked(body, 512);
    expect(await deliver({ name: "pull_request", signature: sign(body), body: streamed })).toMatchObject({ status: 413, refused: "too-large", body: { error: `webhook body over ${max} bytes` } });
    expect(streamed.bytesRead).toBeGreaterThan(max);
    expect(streamed.bytesRead, "the cap, then as much again dropped (each overshot by at most a chunk)").toBeLessThanOrEqual(2 * (max + 512));
    expect(streamed.cancelled).toBe(true);
    const declared = chunked(body, 512);
    expect(await deliver({ name: "pull_request", signature: sign(body), body: declared, declaredBytes: body.length })).toMatchObject({ status: 413, refused: "too-large" });
    expect(await deliver({ name: "pull_request", signature: sign(body), body })).toMatchObject({ status: 413 });
    expect(written).toEqual([]);
  });

  it("answers an event it does not act on 2xx, ignored, and a signed body that is not what its event carries 400; no job", async () => {
    const { deliver, written } = intake();
    const push = JSON.stringify(example("push"));
    expect(await deliver({ name: "push", signature: sign(push), body: push })).toEqual({ status: 200, body: { ok: true, ignored: true }, event: "push" });
    const edited = JSON.stringify(example("pull_request", "labeled"));
    expect(await deliver({ name: "pull_request", signature: sign(edited), body: edited })).toMatchObject({ status: 200, body: { ignored: true } });
    expect(await deliver({ name: "pull_request", signature: sign("[1,2]"), body: "[1,2]" })).toMatchObject({ status: 400, body: { error: "a pull_request delivery whose body is not a JSON object" } });
    expect(await deliver({ name: "Not An Event", signature: sign(edited), body: edited })).toMatchObject({ status: 400 });
    expect(written).toEqual([]);
  });

  it("writes a routed delivery as one job, with its route, key and the body as signed, however often it is delivered", async () => {
    const { deliver, written, store } = intake();
    const payload = example("pull_request", "opened");
    const body = JSON.stringify(payload, null, 2); // the body as GitHub sent it, spacing and all
    const id = randomUUID();
    expect(await deliver({ id, name: "pull_request", signature: sign(body), body: chunked(body, 100) })).toEqual({ status: 202, body: { ok: true }, event: "pull_request" });
    expect(await deliver({ id, name: "pull_request", signature: sign(body), body })).toEqual({ status: 200, body: { ok: true, duplicate: true }, event: "pull_request" });
    expect(written).toHaveLength(1);
    const [job] = written;
    expect(job).toMatchObject({ kind: "github", key: `${payload.repository.owner.login}/${payload.repository.name}#${payload.pull_request.number}`, claim: `webhook:${id}` });
    expect(JSON.parse(job!.payload)).toEqual({ id, name: "pull_request", route: "review", payload });
    expect(job!.payload).toContain(body);
    expect(await store.listStaleJobs(0)).toHaveLength(1);
  });

  it("verifies with the host's own HMAC when it brings one (the Node server's node:crypto), to the same answers", async () => {
    const used: string[] = [];
    const { deliver, written } = intake({ hmacSha256: (secret, message) => (used.push(secret), createHmac("sha256", secret).update(message).digest()) });
    const body = JSON.stringify(example("pull_request", "opened"));
    expect(await deliver({ name: "pull_request", signature: sign(body, "not-the-secret"), body })).toMatchObject({ status: 401, refused: "forged" });
    expect(await deliver({ name: "pull_request", signature: sign(body), body })).toMatchObject({ status: 202 });
    expect(used).toEqual([SECRET, SECRET]);
    expect(written).toHaveLength(1);
  });

  it("answers 503 when the job cannot be written now (Unavailable), for GitHub to deliver again; other failures are the host's", async () => {
    const body = JSON.stringify(example("pull_request", "opened"));
    const down = intake({ accept: async () => Promise.reject(new Unavailable("the store is down")) });
    expect(await down.deliver({ name: "pull_request", signature: sign(body), body })).toEqual({ status: 503, body: { error: "the store is down" }, event: "pull_request" });
    const broken = intake({ accept: async () => Promise.reject(new Error("a bug")) });
    await expect(broken.deliver({ name: "pull_request", signature: sign(body), body })).rejects.toThrow("a bug");
  });
});
