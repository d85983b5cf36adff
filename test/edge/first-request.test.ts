// A cold start on the edge pays for the modules its first request evaluates, and the first
// request is most often a webhook. The build keeps that path small: the entry and its static
// chunks route and verify a delivery and write its job, and the app itself (review, smoke,
// verdict, Octokit, tree-sitter) is a dynamic chunk loaded when the job runs. bench:edge
// measures the cold start; this test keeps the split from quietly coming undone.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEdge, webFilesDir, type EdgeSizes } from "../../scripts/build-edge.ts";

const dir = mkdtempSync(join(tmpdir(), "hcp-edge-split-"));
let sizes: EdgeSizes;
beforeAll(async () => {
  sizes = await buildEdge(true, dir);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(webFilesDir(dir), { recursive: true, force: true });
});

/** What a webhook's answer needs, and what only its job does. */
const ANSWER = ["src/github/routes.ts", "src/github/signature.ts", "src/edge/webhook.ts", "src/core/crypto/hmac.ts"];
const WORK = ["src/github/app.ts", "src/edge/work.ts", "src/github/review.ts", "src/core/review/plan.ts", "src/github/smoke/request.ts"];
const WORK_PACKAGES = [/node_modules\/@octokit\//, /node_modules\/web-tree-sitter\//];

describe.each(["worker", "deno"] as const)("the %s entry's first request", (entry) => {
  it("evaluates the webhook's answer, not the app", () => {
    const first = sizes.firstRequest[entry].sources;
    for (const source of ANSWER) expect(first, source).toContain(source);
    for (const source of WORK) {
      expect(sizes.sources[entry], `${source} is in the build`).toContain(source);
      expect(first, `${source} is not evaluated before the answer`).not.toContain(source);
    }
    for (const pkg of WORK_PACKAGES) {
      expect(sizes.sources[entry].some((s) => pkg.test(s)), `${pkg} is in the build`).toBe(true);
      expect(first.filter((s) => pkg.test(s)), `${pkg} is not evaluated before the answer`).toEqual([]);
    }
  });

  it("is a minority of the bundle's JavaScript", () => {
    const bytes = sizes.firstRequest[entry].files.reduce((t, f) => t + sizes.files[f]!.bytes, 0);
    expect(bytes).toBeLessThan(sizes.js[entry].bytes / 3);
  });
});
