// `hcp-bot serve` in setup mode, as its tests start it: what it prints on the console.
import type { ChildProcess } from "node:child_process";
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

