// findBridgePackageRoot (the editor server's, which must not block its thread on python3) finds
// the same installed Bridge as bridgePackageRoot (lint's): from MEGATRON_BRIDGE_DIR, and from the
// `python3` on the PATH, here a real script that prints where its megatron.bridge lives.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgePackageRoot, findBridgePackageRoot } from "../../src/node/bridge-package.ts";

let dir: string;
let site: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-bridge-root-"));
  site = join(dir, "site-packages");
  mkdirSync(join(site, "megatron", "bridge"), { recursive: true });
  writeFileSync(join(site, "megatron", "bridge", "__init__.py"), "");
  mkdirSync(join(dir, "bin"));
  // The probe's own answer: one line of JSON with the root and sys.path.
  writeFileSync(join(dir, "bin", "python3"), `#!/bin/sh\necho '${JSON.stringify({ root: site, path: ["", site] })}'\n`);
  chmodSync(join(dir, "bin", "python3"), 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("findBridgePackageRoot", () => {
  it("finds MEGATRON_BRIDGE_DIR's Bridge as lint does", async () => {
    const env = { MEGATRON_BRIDGE_DIR: site, PATH: "/nonexistent" };
    expect(bridgePackageRoot(env)).toBe(site);
    expect(await findBridgePackageRoot(env)).toBe(site);
  });

  it("asks the python3 on the PATH as lint does", async () => {
    const env = { PATH: join(dir, "bin"), HCP_BOT_CACHE_DIR: "off" };
    expect(bridgePackageRoot(env)).toBe(site);
    expect(await findBridgePackageRoot(env)).toBe(site);
  });

  it("is undefined when no variable names a Bridge and there is no python3", async () => {
    const env = { PATH: "/nonexistent" };
    expect(bridgePackageRoot(env)).toBeUndefined();
    expect(await findBridgePackageRoot(env)).toBeUndefined();
  });
});
