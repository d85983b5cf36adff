// A real redis-server for the tests, on a loopback port chosen by the OS, with its data in a
// fresh folder and AOF on (appendfsync always), as a production Redis behind the bot must be:
// a restart keeps the claims. `.ci/run` installs Debian's redis-server when it is missing.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PATIENCE_MS } from "./patience.ts";

export const REDIS_MISSING =
  "redis-server is not installed: the Redis store tests need a real Redis. Install Debian's package (apt-get install -y redis-server; .ci/run does this), then run the tests again.";

export function redisServerAvailable(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

export interface TestRedis {
  url: string;
  port: number;
  /** The running server's process id (undefined while stopped). */
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM: it writes its AOF and exits). */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder (the data comes back from the AOF). */
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  dispose(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** True once something answers PING with +PONG on the port. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let text = "";
    socket.once("error", () => resolve(false));
    socket.on("data", (d) => {
      text += d.toString();
      if (text.includes("\r\n")) {
        socket.destroy();
        resolve(text.startsWith("+PONG"));
      }
    });
    socket.once("connect", () => socket.write("PING\r\n"));
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, ms = PATIENCE_MS): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Starts a redis-server; throws REDIS_MISSING (one clear line) when the binary is absent. */
export async function startRedis(): Promise<TestRedis> {
  if (!redisServerAvailable()) throw new Error(REDIS_MISSING);
  const dir = mkdtempSync(join(tmpdir(), "hcp-redis-"));
  let child: ChildProcess | undefined;
  let port = 0;
  let stderr = "";

  async function launch(): Promise<void> {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "yes", "--loglevel", "warning"];
    child = spawn("redis-server", args, { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<boolean>((resolve) => child!.once("exit", () => resolve(true)));
    await Promise.race([waitFor(() => pong(port), `redis-server on port ${port}`), exited.then(() => Promise.reject(new Error(`redis-server exited: ${stderr.trim()}`)))]);
  }

  async function stop(): Promise<void> {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((resolve) => c.once("exit", resolve));
    c.kill("SIGTERM");
    await gone;
  }

  // Another program may take the port between the probe and the start: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      await stop();
      if (attempt >= 4) throw error;
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    get port() {
      return port;
    },
    get pid() {
      return child?.pid;
    },
    stop,
    start: launch,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
