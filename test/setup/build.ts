// Vitest global setup: tests that run the `hcp-bot` binary run the compiled dist/, so it is
// rebuilt (JavaScript only, ~1 s) whenever a source file is newer than the last build. Tests
// that import modules use the sources directly.
import { buildPackage, isStale } from "../../scripts/build.mjs";

export default async function setup(): Promise<void> {
  if (isStale({ types: false })) await buildPackage({ types: false });
}
