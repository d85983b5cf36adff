// The job-log fallback streams the log: a child process judges a run whose only log is a
// 120 MB job log served by the fake GitHub over loopback, and its RSS stays far below the
// log's size (reading it whole, as before, added about 4.5 times the log's size).
import { afterAll, beforeAll, expect, it } from "vitest";
import { join } from "node:path";
import { mb, measureJobLogVerdict, seedHugeJobLog } from "../../bench/support/memory-client.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";

let gh: FakeGitHub;
beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 1, validateResponses: false });
});
afterAll(() => gh?.close());

it("judges a 120 MB job log in well under its size of memory (a child process, measured)", async () => {
  const seeded = seedHugeJobLog(gh, 120);
  const result = await measureJobLogVerdict(join(import.meta.dirname, "..", ".."), gh.apiUrl, seeded);
  expect(result.status).toBe("fail"); // no runner report: never a pass
  expect(mb(result.peak - result.baseline)).toBeLessThan(120);
  expect(gh.violations).toEqual([]);
}, 180_000);
