// Puts the HCP probe (probe/sitecustomize.py, documented there) in a fresh temp dir that the
// run prepends to PYTHONPATH. A dir of its own, so nothing else on the path is shadowed but
// `sitecustomize`, which the probe chains to anyway.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageFile } from "../node/package-files.ts";

export const PROBE_SOURCE_PATH = packageFile("src/runner/probe/sitecustomize.py");

export function readProbeSource(): Promise<string> {
  return readFile(PROBE_SOURCE_PATH, "utf8");
}

export interface ProbeDir {
  dir: string;
  remove(): Promise<void>;
}

export async function writeProbeDir(parent: string = tmpdir()): Promise<ProbeDir> {
  const dir = await mkdtemp(join(parent, "hcp-bot-probe-"));
  await writeFile(join(dir, "sitecustomize.py"), await readProbeSource(), { mode: 0o644 });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
