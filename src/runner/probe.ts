// Puts the HCP probe (probe/sitecustomize.py, documented there) in a fresh temp dir that the
// run prepends to PYTHONPATH. A dir of its own, so nothing else on the path is shadowed but
// `sitecustomize`, which the probe chains to anyway. Next to it: the run's probe key, a 0600
// file that the torchrun launcher's probe reads and deletes (HCP_PROBE_KEY_FILE names it).
import { randomBytes } from "node:crypto";
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageFile } from "../node/package-files.ts";

export const PROBE_SOURCE_PATH = packageFile("src/runner/probe/sitecustomize.py");

export function readProbeSource(): Promise<string> {
  return readFile(PROBE_SOURCE_PATH, "utf8");
}

export interface ProbeDir {
  dir: string;
  /** The run's probe key (64 hex digits): secret until the run has exited. */
  key: string;
  /** Where the key waits for the launcher's probe. */
  keyFile: string;
  /** Whether the launcher's probe took (read and deleted) the key file. */
  keyTaken(): Promise<boolean>;
  remove(): Promise<void>;
}

/** A fresh probe key: 32 random bytes as lowercase hex (the verdict's ProbeKeySchema). */
export function newProbeKey(): string {
  return randomBytes(32).toString("hex");
}

export async function writeProbeDir(parent: string = tmpdir(), key: string = newProbeKey()): Promise<ProbeDir> {
  const dir = await mkdtemp(join(parent, "hcp-bot-probe-")); // 0700
  await writeFile(join(dir, "sitecustomize.py"), await readProbeSource(), { mode: 0o644 });
  const keyFile = join(dir, "key");
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  return {
    dir,
    key,
    keyFile,
    keyTaken: () => access(keyFile).then(() => false, () => true),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
