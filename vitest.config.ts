import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The edge suites (test/edge) run dist/edge, built once before any test file.
    globalSetup: ["test/edge/build.setup.ts"],
  },
});
