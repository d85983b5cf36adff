// Where the edge's GitHub policy gives up (its ten-minute horizon), the job fails and runs again
// later, never sooner than GitHub asked: the job runner reads the give-up's retryAt.
import { describe, expect, it } from "vitest";
import { GitHubUnavailable } from "../../src/github/octokit.ts";
import { createJobRunner, DEFAULT_JOB_POLICY } from "../../src/jobs/runner.ts";
import { MemoryStore } from "../../src/store/memory/store.ts";

const log = { info() {}, warn() {}, error() {} };

describe("a job GitHub rate-limited past the horizon", () => {
  it("is retried no sooner than the limit's reset; other failures keep the job policy's delay", async () => {
    const store = new MemoryStore();
    let error: unknown = new GitHubUnavailable("primary-limit", 1, 0, Date.now() + 40 * 60_000, { status: 403 });
    const runner = createJobRunner({ store, policy: DEFAULT_JOB_POLICY, log, execute: async () => { throw error; } });
    const limited = (await store.enqueueJob({ key: "acme/mb#1", kind: "github", payload: "{}" }))!;
    const outcome = await runner.run(limited.id);
    expect(outcome.kind).toBe("retry");
    expect((outcome as { seconds: number }).seconds).toBeGreaterThanOrEqual(40 * 60 - 2);
    error = new Error("boom");
    const plain = (await store.enqueueJob({ key: "acme/mb#2", kind: "github", payload: "{}" }))!;
    expect(await runner.run(plain.id)).toMatchObject({ kind: "retry", seconds: DEFAULT_JOB_POLICY.retrySeconds });
  });
});
