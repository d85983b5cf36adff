// The job-log fallback streams the log: a child process judges a run whose only log is a
// huge job log served by the fake GitHub over loopback, and its RSS stays far below the
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

// Bounded, not proportional: what a streaming reader holds does not grow with the log (the
// runtime's own heap sizing decides the rest: Node 24's V8 settles higher than Node 20's did).
it("judges 80 MB and 240 MB job logs in well under their size of memory, the larger costing about what the smaller does (a child process, measured)", async () => {
  const growth: number[] = [];
  for (const size of [80, 240]) {
    const seeded = seedHugeJobLog(gh, size);
    const result = await measureJobLogVerdict(join(import.meta.dirname, "..", ".."), gh.apiUrl, seeded);
    expect(result.status).toBe("fail"); // no runner report: never a pass
    growth.push(mb(result.peak - result.baseline));
  }
  expect(growth[1]!).toBeLessThan(240);
  // Held whole, three times the log would add about 4.5 x 160 MB more.
  expect(growth[1]! - growth[0]!).toBeLessThan(80);
  expect(gh.violations).toEqual([]);
});
