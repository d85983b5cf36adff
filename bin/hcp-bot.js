#!/usr/bin/env node
// The `hcp-bot` command: runs the compiled CLI in dist/ (`npm run build`; `npm ci` runs it
// through the `prepare` script). `hcp-bot --version` is answered here, before any bundle
// loads, so it costs about what starting Node costs; `hcp-bot lint` runs from dist/lint.cjs
// with a V8 code cache (src/node/lint-start.ts), every other command from dist/main.js.
// node:fs through process.getBuiltinModule: an ESM import of it costs 4-8 ms (src/node/code-cache.ts).
const { readFileSync } = process.getBuiltinModule("node:fs");

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  // "lint" anywhere in the arguments: startLint itself decides whether they run `lint`.
  const lint = args.includes("lint") ? await importDist("../dist/lint-start.js") : undefined;
  if (!(await lint?.startLint(args))) await importDist("../dist/main.js");
}

/** A module of dist/, or undefined (with a message and exit status 2 for main.js) when the build is missing. */
async function importDist(path) {
  try {
    return await import(path);
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes(path.slice(3))) throw error;
    if (path === "../dist/main.js") {
      process.stderr.write("hcp-bot: the build is missing (dist/main.js); run `npm run build` in the package folder\n");
      process.exitCode = 2;
    }
    return undefined;
  }
}
