// Puts the HCP probe (probe/sitecustomize.py) and the launcher (probe/launch.py), both
// documented there, in a fresh 0700 temp dir: DIR/python is what the run prepends to PYTHONPATH
// (a dir of its own, so nothing else on the path is shadowed but `sitecustomize`, which the
// probe chains to anyway); DIR/launch.py is what `python -I -S` runs instead of
// `-m torch.distributed.run`. The run's key goes to the ranks over a descriptor, never a file.
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageFile } from "../node/package-files.ts";

export const PROBE_SOURCE_PATH = packageFile("src/gpu/probe/sitecustomize.py");
export const LAUNCHER_SOURCE_PATH = packageFile("src/gpu/probe/launch.py");

export function readProbeSource(): Promise<string> {
  return readFile(PROBE_SOURCE_PATH, "utf8");
}

export interface ProbeDir {
  /** The folder put first on the ranks' PYTHONPATH (sitecustomize.py). */
  dir: string;
  /** The launcher script (outside `dir`, so no rank can import it). */
  launcher: string;
  /** The run's probe key (64 hex digits): secret until the run has exited. */
  key: string;
  remove(): Promise<void>;
}

/** A fresh probe key: 32 random bytes as lowercase hex (the verdict's ProbeKeySchema). */
export function newProbeKey(): string {
  return randomBytes(32).toString("hex");
}

/** What the launcher's key descriptor carries: one line per rank, each rank's probe reads one. */
export function keyLines(key: string, ranks: number): Uint8Array {
  return Buffer.from(`${key}\n`.repeat(ranks), "ascii");
}

export async function writeProbeDir(parent: string = tmpdir(), key: string = newProbeKey()): Promise<ProbeDir> {
  const root = await mkdtemp(join(parent, "hcp-bot-probe-")); // 0700
  const dir = join(root, "python");
  await mkdir(dir, { mode: 0o700 });
  await writeFile(join(dir, "sitecustomize.py"), await readProbeSource(), { mode: 0o644 });
  const launcher = join(root, "launch.py");
  await writeFile(launcher, await readFile(LAUNCHER_SOURCE_PATH, "utf8"), { mode: 0o644 });
  return { dir, launcher, key, remove: () => rm(root, { recursive: true, force: true }) };
}
