#!/usr/bin/env node
// The `hcp-bot` command: runs the compiled CLI in dist/ (`npm run build`; `npm ci` runs it
// through the `prepare` script). `hcp-bot --version` is answered here, before any bundle
// loads, so it costs about what starting Node costs.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  try {
    await import("../dist/main.js");
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/main.js")) throw error;
    process.stderr.write("hcp-bot: the build is missing (dist/main.js); run `npm run build` in the package folder\n");
    process.exitCode = 2;
  }
}
