import { configDefaults, defineConfig } from "vitest/config";
import { PATIENCE_MS } from "./test/support/patience.ts";

export default defineConfig({
  test: {
    // Speed is checked by the benchmarks, not by timed tests: a test's time limit only ends a
    // hung test, so it is one generous figure for every test and hook (test/support/patience.ts).
    // Fixed limits failed sound tests on a loaded 2-core machine: 5 s for an in-process lint at
    // load 5, then 60 s for a 5 MB analysis at load 15.
    testTimeout: PATIENCE_MS,
    hookTimeout: PATIENCE_MS,
    projects: [
      {
        extends: true,
        test: {
          name: "core",
          exclude: [...configDefaults.exclude, "test/edge/**"],
          // Tests that run the `hcp-bot` binary run the compiled dist/, rebuilt when stale.
          globalSetup: ["test/setup/build.ts"],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "edge",
          include: ["test/edge/**/*.test.ts"],
          // dist/edge is built once for these suites; they run after the others, so workerd and
          // Deno do not compete on 2 cores with the timing-sensitive process tests.
          globalSetup: ["test/edge/build.setup.ts"],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
