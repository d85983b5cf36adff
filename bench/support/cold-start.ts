// Spawn to first response of a runtime process, measured without the harness competing for
// the CPU it measures (this machine has two cores): no polling loop. workerd gets its
// listening socket from here (`--socket-fd`, as a socket-activated deployment starts it), so
// the request is sent the moment the process is spawned and waits in the kernel's backlog;
// Deno (which cannot inherit a socket) prints a line when it listens and the request goes
// out then. Next to the wall time: the CPU the process used until it answered, and how long
// its threads waited for a core (the load of the others on this machine), from schedstat.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, connect, type AddressInfo, type Server } from "node:net";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";

export interface ColdStart {
  /** Spawn to the first byte of a 200 answer. */
  wallMs: number;
  /** CPU time of the process's threads until then. */
  cpuMs: number;
  /** Time its threads were runnable but waiting for a core. */
  waitMs: number;
  /** The answer's body (to show it is a real answer). */
  body: string;
}

export type Launch =
  /** workerd: spawned with the listening socket as fd 3 (`--socket-fd NAME=3`). */
  | { kind: "socket-fd"; start: (fd: number) => ChildProcess }
  /** Deno: spawned on `port`; prints a line containing `ready` once it listens. */
  | { kind: "ready-line"; ready: string; start: (port: number) => ChildProcess };

/** Per-thread CPU and run-queue wait of a live process (Linux schedstat, nanoseconds). */
function schedstat(pid: number): { cpuMs: number; waitMs: number } {
  let cpu = 0;
  let wait = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, queued] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
      cpu += run!;
      wait += queued!;
    } catch {
      /* the thread ended meanwhile */
    }
  }
  return { cpuMs: cpu / 1e6, waitMs: wait / 1e6 };
}

/** A free loopback port (other engineers' servers share this machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The first request a started process gets. */
export interface FirstRequest {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** The status that counts as answered (200 for /healthz, 202 for an accepted webhook). */
  status: number;
}

/** Sends `req` on `port`; resolves with the status and body once the whole answer is read. */
function send(port: number, req: FirstRequest, pid: number): Promise<{ status: number; body: string; firstByte: number; used: { cpuMs: number; waitMs: number } }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    let firstByte = 0;
    let used = { cpuMs: 0, waitMs: 0 };
    const body = req.body ?? "";
    const headers = { host: "127.0.0.1", connection: "close", ...(req.method === "POST" ? { "content-length": String(Buffer.byteLength(body)) } : {}), ...req.headers };
    socket.on("connect", () => socket.write(`${req.method} ${req.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`));
    socket.on("data", (chunk: Buffer) => {
      if (!firstByte) {
        firstByte = performance.now();
        used = schedstat(pid);
      }
      text += chunk.toString();
    });
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const raw = text.slice(text.indexOf("\r\n\r\n") + 4);
      // workerd answers chunked: keep only the chunks' data.
      const body = /transfer-encoding: chunked/i.test(text) ? raw.replace(/(?:^|\r\n)[0-9a-f]+\r\n/gi, "").replace(/\r\n$/, "") : raw;
      resolve({ status, body, firstByte, used });
    });
    socket.on("error", reject);
  });
}

/** A listening socket whose fd a child inherits; this process never accepts on it. */
async function listeningSocket(): Promise<{ server: Server; port: number; fd: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The fd of the listening handle (Unix): handed to the child as its fd 3.
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  return { server, port: (server.address() as AddressInfo).port, fd };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

/** One spawn of `launch`, timed to the first byte of its answer to `req`. */
export async function coldStart(launch: Launch, req: FirstRequest): Promise<ColdStart> {
  let child: ChildProcess;
  let port: number;
  let t0: number;
  if (launch.kind === "socket-fd") {
    const socket = await listeningSocket();
    port = socket.port;
    t0 = performance.now();
    child = launch.start(socket.fd);
    // Closed here before this event loop could accept on it: only the child listens now.
    socket.server.close();
  } else {
    port = await freePort();
    t0 = performance.now();
    child = launch.start(port);
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      lines.on("line", (line) => line.includes(launch.ready) && resolve());
      child.once("exit", (code) => reject(new Error(`exited with ${code} before listening`)));
    });
  }
  try {
    const answer = await send(port, req, child.pid!);
    if (answer.status !== req.status) throw new Error(`${req.method} ${req.path} answered ${answer.status}, not ${req.status}: ${answer.body.slice(0, 200)}`);
    return { wallMs: answer.firstByte - t0, ...answer.used, body: answer.body };
  } finally {
    await stop(child);
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
