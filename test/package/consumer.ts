// An empty folder that installs the packed tarball the way a user's project would, without
// the network: its lock file pins the tarball and, for every production dependency, the
// version, URL and integrity of the project's own package-lock.json. `npm ci --offline`
// then takes each tarball from the npm cache, which the project's `npm ci` filled.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  license?: string;
  dev?: boolean;
  dependencies?: Record<string, string>;
  bin?: Record<string, string> | string;
  engines?: Record<string, string>;
  [key: string]: unknown;
}

interface Lock {
  packages: Record<string, LockEntry>;
}

/** Writes package.json and package-lock.json for a consumer of `tarball` into `dir`; returns the lock's package count. */
export function writeConsumer(dir: string, tarball: string, projectLock: string): number {
  const lock = JSON.parse(readFileSync(projectLock, "utf8")) as Lock;
  const self = lock.packages[""]!;
  const spec = `file:${tarball}`;
  const packages: Record<string, LockEntry> = {
    "": { name: "consumer", dependencies: { [String((self as { name?: string }).name ?? "hcp-bot")]: spec } },
    "node_modules/hcp-bot": {
      version: self.version,
      resolved: spec,
      integrity: `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`,
      license: self.license,
      dependencies: self.dependencies,
      bin: self.bin,
      engines: self.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) if (path !== "" && !entry.dev) packages[path] = entry;
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { "hcp-bot": spec } }, null, 2));
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify({ name: "consumer", lockfileVersion: 3, requires: true, packages }, null, 2));
  return Object.keys(packages).length;
}

/** A TypeScript program that uses the published types of both entry points. */
export const CONSUMER_TS = `import { adviseLayout, analyze, rankGrid, recommendLayout, type Finding } from "hcp-bot";
import { loadPythonLanguage, readSources } from "hcp-bot/node";

const layout = recommendLayout({ cp: 16, tp: 1, gpusPerNode: 8 });
const sizes: [number, number] | undefined = layout.sizes;
const advice = adviseLayout({ cp: 16, numAttentionHeads: 32, numQueryGroups: 8 });
const rings: number[][] = rankGrid({ tp: 1, cp: 16, sizes: [8, 2] }).levels[1]!;
const { files } = await readSources(["r.py"]);
const findings: readonly Finding[] = analyze(files, { python: await loadPythonLanguage() }).findings;
console.log(JSON.stringify({ sizes, advised: advice.recommendation.sizes, rings: rings.length, findings: findings.map((f) => f.ruleId) }));
`;

export const tarballName = (path: string) => basename(path);
