// Where `hcp-bot serve` finds the server. The server is not part of the `hcp-bot` package (a
// lint's install has no Probot, Bolt or Redis client): it is the bundle dist/server/serve.js
// (src/cli/serve.ts), which `npm run build` writes in a clone and the hcp-bot-server package
// ships and exports as "hcp-bot-server/serve". Running from the sources, it is ./serve.ts.
// The specifier is computed, so esbuild leaves the import to run time and bundles none of it.
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { Io } from "../cli.ts";
import { FROM_SOURCE, packageFile } from "../node/package-files.ts";

type ServeModule = typeof import("./serve.ts");

export const SERVER_PACKAGE = "hcp-bot-server";

const EXIT_USAGE = 2;

/** The server bundle's URL next to this build, or the server package's export when the build has none. */
export function serverEntry(): string {
  if (FROM_SOURCE) return new URL("./serve.ts", import.meta.url).href;
  const built = packageFile("dist/server/serve.js");
  return existsSync(built) ? pathToFileURL(built).href : `${SERVER_PACKAGE}/serve`;
}

function isMissingServerPackage(error: unknown, entry: string): boolean {
  return entry.startsWith(SERVER_PACKAGE) && (error as { code?: unknown })?.code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes(`'${SERVER_PACKAGE}'`);
}

export async function serve(io: Io): Promise<number> {
  const entry = serverEntry();
  let server: ServeModule;
  try {
    server = (await import(entry)) as ServeModule;
  } catch (error) {
    if (!isMissingServerPackage(error, entry)) throw error;
    io.err(`hcp-bot: \`serve\` runs the GitHub App and Slack server, which is the ${SERVER_PACKAGE} package: \`npm install ${SERVER_PACKAGE}\` (it brings this CLI with it), then \`npx ${SERVER_PACKAGE} serve\`\n`);
    return EXIT_USAGE;
  }
  return await server.serve(io);
}
