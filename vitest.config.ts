import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Speed is checked by the benchmarks, not by timed tests: a test's time limit only ends a
    // hung test. Vitest's 5 s default failed sound tests on a loaded 2-core machine (an
    // in-process lint that loads the grammar took 6 s at load 5).
    testTimeout: 60_000,
    hookTimeout: 120_000,
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
