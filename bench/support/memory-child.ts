// The server under a memory measurement, in its own process so the client's buffers do not
// count: `node --import tsx bench/support/memory-child.ts [ROOT]` starts the real Node server
// from ROOT's sources (default: this checkout; another checkout measures the code before a
// change), samples its RSS every 5 ms, and answers the parent's messages over IPC:
// "reset" -> {rss}, "peak" -> {rss, peak}.
import { pathToFileURL } from "node:url";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? join(import.meta.dirname, "..", ".."));
const { startServer } = (await import(pathToFileURL(join(root, "src/server/server.ts")).href)) as typeof import("../../src/server/server.ts");
const { botSettings } = (await import(pathToFileURL(join(root, "test/support/bot-harness.ts")).href)) as typeof import("../../test/support/bot-harness.ts");

export const CHILD_SECRET = "memory-bench-secret";
// No webhook in the measurement passes its signature, so GitHub is never called.
const bot = await startServer(botSettings({ githubUrl: "http://127.0.0.1:9", appId: 1, secret: CHILD_SECRET }), { sweepIntervalMs: 0 });

let peak = 0;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage.rss());
};
setInterval(sample, 5).unref();
process.on("message", (m: unknown) => {
  sample();
  if (m === "reset") {
    globalThis.gc?.();
    peak = process.memoryUsage.rss();
    process.send!({ rss: peak });
  } else if (m === "peak") {
    process.send!({ rss: process.memoryUsage.rss(), peak });
  } else if (m === "stop") {
    void bot.stop().then(() => process.exit(0));
  }
});
process.send!({ port: bot.port });
