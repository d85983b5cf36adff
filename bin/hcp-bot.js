#!/usr/bin/env node
// The `hcp-bot` command: runs the compiled CLI in dist/ (`npm run build`; `npm ci` runs it
// through the `prepare` script). `hcp-bot --version` is answered here, before any bundle
// loads, so it costs about what starting Node costs; `hcp-bot lint` runs from dist/lint.cjs
// with a V8 code cache (src/cli/lint-start.ts, built to dist/lint-start.cjs), every other
// command from dist/main.js.
//
// This file is CommonJS (bin/package.json): Node starts an ES module main through its ESM
// loader, which reads the file with fs/promises and costs ~13 ms more than a CommonJS main
// before any line runs (bench:cli); require() of dist/lint-start.cjs and of Node's own
// modules skips that loader altogether, so a lint never loads it.
"use strict";
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  // A rejection is left unhandled: Node prints it and exits 1, as for an ES module main.
  run();
}

async function run() {
  // "lint" anywhere in the arguments: startLint itself decides whether they run `lint`.
  const lint = args.includes("lint") ? requireDist("../dist/lint-start.cjs") : undefined;
  if (!(await lint?.startLint(args))) await importMain();
}

/** dist/lint-start.cjs, or undefined when the build is missing (dist/main.js then says so). */
function requireDist(path) {
  try {
    return require(path);
  } catch (error) {
    if (error?.code === "MODULE_NOT_FOUND" && String(error.message).includes(path.slice(3))) return undefined;
    throw error;
  }
}

/** dist/main.js, or a message and exit status 2 when the build is missing. */
async function importMain() {
  try {
    await import("../dist/main.js");
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/main.js")) throw error;
    process.stderr.write("hcp-bot: the build is missing (dist/main.js); run `npm run build` in the package folder\n");
    process.exitCode = 2;
  }
}
