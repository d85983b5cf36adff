// `hcp-bot serve` in setup mode, as its tests start it: what it prints on the console.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHcpBot, type Started } from "./cli.ts";
import { PATIENCE_MS } from "./patience.ts";

/** The port and the one-time setup code that `serve` in setup mode prints on stderr. */
export function setupConsole(child: ChildProcess): Promise<{ port: number; code: string }> {
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const port = /localhost:(\d+)\//.exec(err);
      const code = /setup code is ([A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4})/.exec(err);
      if (port && code) resolve({ port: Number(port[1]), code: code[1]! });
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
    setTimeout(() => reject(new Error(`no start-up line: ${err}`)), PATIENCE_MS);
  });
}


/**
 * `hcp-bot serve` in setup mode on a free loopback port with a fresh data folder, for the
 * browser tests of the pages it serves (the playground, the landing page): its base URL.
 */
export async function servePages(name: string): Promise<{ server: Started; base: string }> {
  const server = startHcpBot(["serve"], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_SMEE_SETUP: "true", LOG_LEVEL: "warn", PORT: "0", HOST: "127.0.0.1", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), `hcp-${name}-`)) },
  });
  const { port } = await setupConsole(server.child);
  return { server, base: `http://127.0.0.1:${port}` };
}
