// `lint` must not pay for the runner: execa is loaded only by the commands that need it.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { baseEnv, bin, fixtures, root } from "./helpers.ts";

function resolvesExeca(args: string[]): boolean {
  const r = spawnSync(process.execPath, ["--import", join(fixtures, "report-execa.mjs"), bin, ...args], { cwd: root, encoding: "utf8", env: baseEnv() });
  return /hcp-test: execa (resolved|loaded)/.test(r.stderr);
}

describe("lazy loading", () => {
  it("lint does not load execa; smoke-run does", () => {
    expect(resolvesExeca(["lint", join("fixtures", "recipes")])).toBe(false);
    expect(resolvesExeca(["smoke-run", "--recipe", "x", "--dry-run"])).toBe(true);
  });
});
