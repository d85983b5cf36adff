// Runs the real `hcp-bot` binary as a child process, with the fake `uv` first on PATH.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { root } from "../support/cli.ts";
import { PATIENCE_MS } from "../support/patience.ts";

export { bin, hcpBot, root, startHcpBot, type Run, type Started } from "../support/cli.ts";
export const fixtures = join(import.meta.dirname, "fixtures");
export const fakeBin = join(fixtures, "bin");
export const logs = (name: string) => join(root, "fixtures", "logs", name);

/** The environment a test run starts from: ours, minus anything that would change the run. */
export function baseEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("FAKE_") || k.startsWith("GITHUB_") || k.startsWith("HCP_")) continue;
    if (k === "TORCH_DISTRIBUTED_DEBUG" || k === "TORCH_CPP_LOG_LEVEL" || k === "PYTHONPATH") continue;
    env[k] = v;
  }
  env.PATH = `${fakeBin}${delimiter}${process.env.PATH ?? ""}`;
  env.PYTHONDONTWRITEBYTECODE = "1";
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function tempDir(prefix = "hcp-runner-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Alive and not a zombie (a killed process may linger unreaped if our PID 1 does not reap). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

export async function waitFor<T>(probe: () => T | undefined, timeoutMs = PATIENCE_MS, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function readIf(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
