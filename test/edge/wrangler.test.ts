// wrangler.toml as Cloudflare's own tool reads it: `wrangler deploy --dry-run` (offline)
// accepts the prebuilt worker, attaches its chunks and the three WebAssembly modules and binds the store's
// Durable Object and the jobs queue; the upload it would send stays within the budget.
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

it("wrangler deploy --dry-run takes wrangler.toml and dist/edge as they are", async () => {
  const { stdout } = await promisify(execFile)(join(root, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", mkdtempSync(join(tmpdir(), "hcp-wrangler-"))], {
    cwd: root,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
    timeout: 90_000,
  });
  for (const wasm of ["anchor-scan.wasm", "tree-sitter-python.wasm", "web-tree-sitter.wasm"]) expect(stdout).toMatch(new RegExp(`${wasm}\\s*│\\s*compiled-wasm`));
  // The worker's chunks (the work it imports on first need) go up as ES modules; the Deno entry's stay out.
  expect(stdout).toMatch(/worker-work-\w+\.js\s*│\s*esm/);
  expect(stdout).not.toMatch(/deno[.-]/);
  expect(stdout).toMatch(/env\.STORE \(HcpStore\)\s+Durable Object/);
  expect(stdout).toMatch(/env\.JOBS \(hcp-bot-jobs\)\s+Queue/);
  // The web pages' files go up as Workers Static Assets, outside the worker's modules and its budget.
  expect(stdout).toMatch(/Read \d+ files from the assets directory \S+\/dist\/edge-web/);
  expect(stdout).toMatch(/env\.ASSETS\s+Assets/);
  expect(stdout).not.toMatch(/\.html\s*│/);
  const gzipKiB = Number(/Total Upload: [\d.]+ KiB \/ gzip: ([\d.]+) KiB/.exec(stdout)?.[1]);
  expect(gzipKiB).toBeGreaterThan(100);
  expect(gzipKiB).toBeLessThanOrEqual(450);
});
