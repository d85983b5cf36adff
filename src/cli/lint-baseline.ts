// `--baseline FILE` and `--baseline-write FILE`: the baseline's file on disk. Paths in it are
// relative to its own folder, so a lint from another working folder matches the same findings.
import { dirname, relative, resolve, sep } from "node:path";
import type { Finding } from "../core/model/finding.ts";
import { buildBaseline, parseBaseline, subtractBaseline, type PathMap } from "../core/rules/baseline.ts";
import { InputError } from "../node/files.ts";
import { readBytes, writeText } from "../node/fs-callbacks.ts";

function pathsFor(baselineFile: string): PathMap {
  const base = dirname(resolve(baselineFile));
  return (file) => relative(base, resolve(file)).split(sep).join("/");
}

export async function writeBaseline(file: string, findings: readonly Finding[]): Promise<number> {
  const baseline = buildBaseline(findings, pathsFor(file));
  try {
    await writeText(file, JSON.stringify(baseline, null, 2) + "\n");
  } catch (error) {
    throw new InputError(`cannot write the baseline ${file}: ${(error as Error).message}`);
  }
  return baseline.findings.length;
}

/** The findings not in the baseline; a missing or malformed baseline is an InputError (never an empty one). */
export async function applyBaseline(file: string, findings: readonly Finding[]): Promise<{ findings: Finding[]; baselined: number }> {
  let text: string;
  try {
    text = (await readBytes(file)).toString("utf8");
  } catch (error) {
    throw new InputError(`cannot read the baseline ${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file (write one with --baseline-write)" : (error as Error).message}`);
  }
  const parsed = parseBaseline(text, file);
  if (!parsed.ok) throw new InputError(parsed.problem);
  return subtractBaseline(findings, parsed.baseline, pathsFor(file));
}
