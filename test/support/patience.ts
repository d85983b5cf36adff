/**
 * How long a test waits for anything (its own time limit, a hook, a condition to hold, a page to
 * change) before it counts as hung. Speed is the benchmarks' job: this only ends a test that would
 * never finish, so it is generous. The suite must pass on a loaded 2-core machine
 * (`npm run test:stress`), where a 5 MB analysis that takes 8 s on a quiet one took 74 s.
 * Tests name no time limits of their own (test/repo/time-limits.test.ts checks it).
 */
export const PATIENCE_MS = Number(process.env.HCP_TEST_PATIENCE_MS ?? 300_000);
