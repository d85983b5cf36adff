// `hcp-bot lint` of a user's script asks python3 where megatron.bridge lives once per
// environment, not on every run: the answer is remembered in the private cache folder with
// the times of the folders on Python's path, and asked again when one of them changes (an
// install), when the cache is off, or when the remembered entry cannot be read back. The
// python3 here is a real script on the PATH that counts its calls and answers as the probe's
// Python code does (one line of JSON).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

let dir: string;
let site: string;
let calls: string;
let script: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hcp-python-cache-"));
  site = join(dir, "site-packages");
  const pkg = join(site, "megatron", "bridge", "recipes");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(site, "megatron", "bridge", "__init__.py"), "");
  writeFileSync(join(pkg, "__init__.py"), "");
  // The installed base has CP 8; the script's 2 x 2 sizes then disagree with it (HCP002): proof the base was read.
  writeFileSync(join(pkg, "mine.py"), "def base_config():\n    cfg = ConfigContainer(model=GPTModelProvider())\n    cfg.model.context_parallel_size = 8\n    return cfg\n");
  calls = join(dir, "calls");
  writeFileSync(calls, "");
  mkdirSync(join(dir, "bin"));
  const answer = JSON.stringify({ root: site, path: ["", site] });
  writeFileSync(join(dir, "bin", "python3"), `#!/bin/sh\necho call >> '${calls}'\necho '${answer}'\n`);
  chmodSync(join(dir, "bin", "python3"), 0o755);
  script = join(dir, "train.py");
  writeFileSync(script, 'from megatron.bridge.recipes.mine import base_config\n\nif __name__ == "__main__":\n    cfg = base_config()\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    cfg.model.cp_comm_type = "a2a+p2p"\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const callCount = () => readFileSync(calls, "utf8").split("\n").filter(Boolean).length;

async function lint(cacheDir: string): Promise<string[]> {
  const env = { PATH: `${join(dir, "bin")}:${process.env.PATH}`, HOME: dir, HCP_BOT_CACHE_DIR: cacheDir, NO_COLOR: "1" };
  const run = await hcpBot(["lint", "--format", "json", script], { env, cwd: dir });
  const out = JSON.parse(run.stdout) as { findings: { ruleId: string }[] };
  return out.findings.map((f) => f.ruleId);
}

describe("hcp-bot lint remembers where python3 found megatron.bridge", () => {
  it("asks once per environment, again after an install changes a folder on Python's path, and every time with the cache off", async () => {
    const cache = join(dir, "cache");
    const before = callCount();
    expect(await lint(cache)).toContain("HCP002");
    expect(await lint(cache)).toContain("HCP002");
    expect(callCount() - before).toBe(1);

    // An install adds an entry to site-packages, which changes the folder's time.
    const later = new Date(Date.now() + 5_000);
    utimesSync(site, later, later);
    expect(await lint(cache)).toContain("HCP002");
    expect(callCount() - before).toBe(2);

    expect(await lint("off")).toContain("HCP002");
    expect(await lint("off")).toContain("HCP002");
    expect(callCount() - before).toBe(4);
  });

  it("asks again when the remembered entry is not what it wrote (a damaged cache is no error)", async () => {
    const cache = join(dir, "cache-damaged");
    expect(await lint(cache)).toContain("HCP002");
    const before = callCount();
    writeFileSync(join(cache, "python-bridge.json"), '[{"key": 1, "root": "/elsewhere"}]');
    expect(await lint(cache)).toContain("HCP002");
    expect(callCount() - before).toBe(1);
  });
});
