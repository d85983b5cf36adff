// An HTTP/1.1 client on a bare socket that sends the way GitHub's webhook client does: the
// headers with a content-length, the whole body, and only then does it read the answer. A
// server that answers early and closes with part of the body unread makes the kernel reset
// the connection, and such a client never reads the answer: fetch would hide that race.
import { connect } from "node:net";

export interface RawAnswer {
  /** The status of the answer, or null when none was read. */
  status: number | null;
  /** The socket error that ended the exchange (ECONNRESET, EPIPE), if any. */
  error?: string;
}

export interface RawPost {
  url: string;
  headers: Record<string, string>;
  /** What the body starts with (a JSON prefix, say); padding fills it up to `bytes`. */
  prefix?: string;
  bytes: number;
}

const CHUNK = 64 * 1024;

export function postWholeThenRead(o: RawPost): Promise<RawAnswer> {
  const url = new URL(o.url);
  const head = [
    `POST ${url.pathname}${url.search} HTTP/1.1`,
    `host: ${url.host}`,
    `content-length: ${o.bytes}`,
    "connection: close",
    ...Object.entries(o.headers).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ].join("\r\n");
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const received: Buffer[] = [];
    let error: string | undefined;
    const finish = () => {
      const text = Buffer.concat(received).toString("latin1");
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ status: status ? Number(status) : null, ...(error ? { error } : {}) });
    };
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
      socket.resume(); // whatever answer already arrived is still read
    });
    socket.on("close", finish);
    // Nothing is read until the body is written, as a client that writes first would.
    socket.pause();
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.once("connect", async () => {
      const write = (data: Buffer | string) =>
        new Promise<boolean>((ok) => {
          if (socket.destroyed) return ok(false);
          if (socket.write(data)) return ok(true);
          socket.once("drain", () => ok(true));
          socket.once("close", () => ok(false));
        });
      let sent = 0;
      const prefix = Buffer.from(o.prefix ?? "");
      if (!(await write(head)) || !(await write(prefix))) return;
      sent += prefix.length;
      const pad = Buffer.alloc(CHUNK, 0x61);
      while (sent < o.bytes) {
        const n = Math.min(CHUNK, o.bytes - sent);
        if (!(await write(n === CHUNK ? pad : pad.subarray(0, n)))) break;
        sent += n;
      }
      socket.resume();
    });
  });
}
