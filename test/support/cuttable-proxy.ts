// A TCP proxy on loopback (to Redis, in the replica tests) that the test can cut, as a
// network partition does: one replica loses the store while the others still see it.
import { createConnection, createServer, type Socket } from "node:net";

/** A TCP proxy to `target` on loopback that can be cut (every connection dropped, new ones refused at once) and restored. */
export async function startCuttableProxy(target: number): Promise<{ port: number; cut(): void; restore(): void; close(): void }> {
  const open = new Set<Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = createConnection({ host: "127.0.0.1", port: target });
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut() {
      down = true;
      for (const socket of open) socket.destroy();
    },
    restore() {
      down = false;
    },
    close() {
      for (const socket of open) socket.destroy();
      server.close();
    },
  };
}
