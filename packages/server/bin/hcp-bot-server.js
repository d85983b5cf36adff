#!/usr/bin/env node
// The `hcp-bot-server` command. `hcp-bot-server` or `hcp-bot-server serve` runs the GitHub App
// and Slack app server (dist/server/serve.js, built from src/cli/serve.ts by scripts/build.mjs);
// anything else is a command of the `hcp-bot` CLI, which this package depends on
// (`hcp-bot-server lint /work`), so the image has one entry point for both.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const args = process.argv.slice(2);
if (args.length === 0 || (args.length === 1 && args[0] === "serve")) {
  const { serveProcess } = await import("../dist/server/serve.js");
  process.exitCode = await serveProcess();
} else {
  // hcp-bot's bin reads process.argv itself; its `exports` name only package.json, so the file is found from there.
  const require = createRequire(import.meta.url);
  require(join(dirname(require.resolve("hcp-bot/package.json")), "bin", "hcp-bot.js"));
}
