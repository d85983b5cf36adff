// `hcp-bot serve`: the GitHub App (and Slack app) server. This module is the entry of the
// server bundle (dist/server/serve.js, which the hcp-bot-server package ships); the `hcp-bot`
// package's CLI reaches it through src/cli/serve-loader.ts and bundles none of it.
import { existsSync } from "node:fs";
import type { Io } from "../cli.ts";
import { processIo } from "./process-io.ts";
import { VERSION } from "../version.ts";

const EXIT_USAGE = 2;

export async function serve(io: Io): Promise<number> {
  // The setup flow writes the new app's credentials to .env; read them like Probot does.
  if (existsSync(".env")) process.loadEnvFile(".env");
  // Loaded on demand: its zod schema would cost lint's start-up for nothing.
  const { readServerSettings, SettingsError } = await import("../server/env.ts");
  let settings;
  try {
    settings = readServerSettings(process.env);
    // A damaged App key parses; only a test signature shows it (src/edge/key.ts, as on the edge hosts).
    if (settings.mode === "app") await (await import("../edge/key.ts")).checkPrivateKey(settings.privateKey!);
  } catch (error) {
    if (error instanceof SettingsError) {
      io.err(`hcp-bot: configuration error: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  // Loaded on demand: linting should not pay for Probot's start-up.
  const { startServer } = await import("../server/server.ts");
  // Readable lines for a person at a terminal, JSON for a log collector, unless LOG_FORMAT says.
  const server = await startServer({ ...settings, logFormat: settings.logFormat ?? (process.stdout.isTTY ? "pretty" : "json") });
  // The playground's files are built now, so the first visitor does not wait for esbuild.
  void server.web.files.prepare().catch((error: Error) => io.err(`hcp-bot: the playground could not be built: ${error.message}\n`));
  io.err(
    settings.mode === "app"
      ? `hcp-bot ${VERSION}: GitHub App listening on port ${server.port} (webhooks at ${settings.webhookPath}, health at /healthz)\n`
      : `hcp-bot ${VERSION}: no GitHub App credentials yet; open http://localhost:${server.port}/ to register the app from app.yml (or http://localhost:${server.port}/playground to try the rules first)\n` +
          `hcp-bot: the one-time setup code is ${server.setupCode}: the setup page asks for it before it writes .env (nobody without it can)\n`,
  );
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  // SIGTERM (a rolling deploy, Kubernetes): refuse new work, let running jobs finish for up to
  // HCP_DRAIN_SECONDS, hand the rest back to the store, exit.
  const drain = async () => {
    const { handedBack } = await server.drain();
    if (handedBack > 0) io.err(`hcp-bot: handed ${handedBack} unfinished job(s) back to the store for another replica\n`);
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", drain);
  return await new Promise<number>(() => {});
}

/** `hcp-bot-server serve` (packages/server/bin/hcp-bot-server.js): the server on this process's stdout and stderr. */
export function serveProcess(): Promise<number> {
  return serve(processIo());
}

/**
 * Where the server takes a shipped file from: its own package (app.yml, dist/web) or the
 * `hcp-bot` package it depends on (the workers, templates/, the upstream index, the probe, the
 * .wasm files). Exported so the installed package can be asked (test/package/pack.test.ts).
 */
export { packageFile } from "../node/package-files.ts";
