// A package-lock.json that installs a folder's dependencies exactly as the repository's own lock
// pins them, without the registry: `npm ci --offline` then takes every tarball from npm's cache
// (which the repository's `npm ci` filled), and the packages this repository builds from the
// tarballs `npm pack` made. The Docker image installs the hcp-bot-server package this way
// (`node scripts/install-lock.mjs /app /pkg/hcp-bot-0.1.0.tgz`), and the pack tests do the same.
//
// Every package reachable from the folder's dependencies keeps its path, version, URL and
// integrity from the repository's lock; its `dev` marks are dropped (in the repository the
// server's dependencies are development tools of the `hcp-bot` package, and `npm ci
// --omit=dev` would skip them), and one reached only through optional dependencies (esbuild's
// platform binaries) is marked optional, so a machine of another platform skips it.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The entry a lock file gives a package installed from a local tarball. */
function tarballEntry(tarball, manifest) {
  const entry = {
    version: manifest.version,
    resolved: `file:${tarball}`,
    integrity: `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`,
    license: manifest.license,
  };
  for (const key of ["dependencies", "optionalDependencies", "peerDependencies", "peerDependenciesMeta", "bin", "engines"]) if (manifest[key]) entry[key] = manifest[key];
  return entry;
}

/** Where Node (and npm) finds `name` from the package at `from`: the nearest node_modules above it that the lock has. */
function lockPathOf(packages, from, name) {
  for (let base = from; ; base = base.slice(0, base.lastIndexOf("/node_modules/") < 0 ? 0 : base.lastIndexOf("/node_modules/"))) {
    const path = `${base ? `${base}/` : ""}node_modules/${name}`;
    if (packages[path]) return path;
    if (!base) return undefined;
  }
}

/** The dependency edges of a lock entry: [name, optional]. Optional peers are left to the user. */
function edgesOf(entry) {
  const optionalPeer = (name) => entry.peerDependenciesMeta?.[name]?.optional === true;
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => [name, false]),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => [name, true]),
    ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeer(name)).map((name) => [name, false]),
  ];
}

/**
 * The lock for installing `manifest`'s dependencies into a folder: `local` maps a package name to
 * [tarball, manifest] for the packages built here; the rest comes from `projectLock`'s entries.
 * Throws when a dependency is in neither (the repository's lock must pin everything shipped).
 */
export function installLock(manifest, local, projectLock) {
  const known = JSON.parse(readFileSync(projectLock, "utf8")).packages;
  const packages = { "": { name: manifest.name, version: manifest.version, dependencies: manifest.dependencies ?? {} } };
  const required = new Set();
  const queue = [["", packages[""], false]];
  while (queue.length > 0) {
    const [from, entry, optional] = queue.shift();
    for (const [name, optionalEdge] of edgesOf(entry)) {
      const path = local[name] ? `node_modules/${name}` : lockPathOf(known, from, name);
      if (!path) {
        if (optionalEdge || optional) continue;
        throw new Error(`${name} (needed by ${from || manifest.name}) is not in ${projectLock}`);
      }
      const viaOptional = optional || optionalEdge;
      if (!viaOptional) required.add(path);
      if (packages[path]) continue;
      const next = local[name] ? tarballEntry(local[name][0], local[name][1]) : { ...known[path] };
      delete next.dev;
      delete next.devOptional;
      delete next.peer;
      packages[path] = next;
      queue.push([path, next, viaOptional]);
    }
  }
  for (const [path, entry] of Object.entries(packages)) {
    if (path === "") continue;
    if (required.has(path)) delete entry.optional;
    else entry.optional = true;
  }
  return { name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages };
}

// `node scripts/install-lock.mjs DIR CLI_TARBALL`: DIR holds the unpacked hcp-bot-server package;
// its `hcp-bot` dependency is the tarball (the `hcp-bot` package of the same build).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, cliTarball] = process.argv.slice(2);
  if (!dir || !cliTarball) throw new Error("usage: node scripts/install-lock.mjs DIR CLI_TARBALL");
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const cli = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const lock = installLock(manifest, { [cli.name]: [resolve(cliTarball), cli] }, join(root, "package-lock.json"));
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  process.stderr.write(`${join(dir, "package-lock.json")}: ${Object.keys(lock.packages).length - 1} packages\n`);
}
