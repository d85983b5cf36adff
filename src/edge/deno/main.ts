// The Deno entry (`deno run`, Deno Deploy): Deno.serve on HOST/PORT, the store on Deno KV,
// jobs run in this process right after the answer (written with their claim first, so a
// process that dies mid-job loses nothing), and a minute's Deno.cron that restarts jobs
// whose lease passed and runs the queue-timeout sweep; the same recovery runs at start, right
// after the first answer.
// First: the KV open starts before the entry's other modules are evaluated.
import { env, kvOpening } from "./kv-open.ts";
import { useAnchorScanModule } from "../../core/verdict/scan/wasm-scanner.ts";
import { KeyedQueue } from "../../github/queue.ts";
import type { RunOutcome } from "../../jobs/runner.ts";
import { KvStore } from "../../store/kv/store.ts";
import type { Job } from "../../store/types.ts";
import { createEdgeBot, jobPolicy, type EdgeBot } from "../bot.ts";
import type { EdgeWebFiles } from "../web.ts";
import { consoleLog } from "../log.ts";
import { pythonFromModules } from "../python.ts";
import { anchorScan, pythonGrammar, treeSitterRuntime } from "../wasm.js";

interface DenoApi {
  readTextFileSync(path: string): string;
  readFile(path: URL): Promise<Uint8Array>;
  serve(options: { hostname: string; port: number; onListen(addr: { hostname: string; port: number }): void }, handler: (request: Request) => Promise<Response>): { finished: Promise<void> };
  cron(name: string, schedule: string, handler: () => Promise<void>): Promise<void>;
  exit(code: number): never;
  addSignalListener(signal: "SIGINT" | "SIGTERM", handler: () => void): void;
}

const Deno = (globalThis as unknown as { Deno: DenoApi }).Deno;
const log = consoleLog(env.LOG_LEVEL, { runtime: "deno" });

useAnchorScanModule(anchorScan);
const queue = new KeyedQueue(4, log);
let bot!: EdgeBot;

/** Runs a job here; a retry or a wait is tried again here too (the cron covers a process that dies meanwhile). */
function runHere(job: Pick<Job, "id" | "key">, tries = 0): void {
  void queue.enqueue(job.key, async () => {
    const outcome: RunOutcome = await bot.runJob(job.id);
    if ((outcome.kind === "wait" || outcome.kind === "retry") && tries < 20) {
      setTimeout(() => runHere(job, tries + 1), outcome.seconds * 1000);
    }
  });
}

/** The web pages' files from the folder beside this bundle's (dist/edge-web, scripts/build-edge.ts); only the build's own names. */
function webFilesBeside(build: { hash: string; names: readonly string[]; folder: string }): EdgeWebFiles {
  const known = new Set(build.names);
  return { hash: build.hash, read: async (name) => (known.has(name) ? Deno.readFile(new URL(`${build.folder}${name}`, import.meta.url)) : undefined) };
}

try {
  const { kv, label } = await kvOpening;
  const store = new KvStore(kv, label);
  bot = await createEdgeBot(env, {
    name: "deno",
    store,
    python: pythonFromModules(treeSitterRuntime, pythonGrammar),
    dispatch: async (job) => runHere(job),
    log,
    readFile: (path) => Deno.readTextFileSync(path),
    webFiles: async () => webFilesBeside(await import("edge:web-files")),
  });
} catch (error) {
  console.error(`hcp-bot: ${(error as Error).message}`);
  Deno.exit(1);
}

/**
 * Runs `task` after `ms` without Deno's setTimeout: Deno 2's setTimeout and setInterval load
 * its Node timers module on first use (10-40 ms of a cold start here), so nothing on the way
 * to the first answer calls them. AbortSignal.timeout is the web platform's own timer.
 */
function soon(ms: number, task: () => void): void {
  AbortSignal.timeout(ms).addEventListener("abort", task, { once: true });
}

// After the first answer (or a second after listening when no request comes), never before it
// and never skipped: the start-up recovery (jobs a dead process left, the queue-timeout sweep,
// and the modules they load) and, between cron ticks (a minute apart, and absent without
// --unstable-cron), the restart of a job a dead process left once its lease has passed.
let afterFirstAnswerStarted = false;
function afterFirstAnswer(): void {
  if (afterFirstAnswerStarted) return;
  afterFirstAnswerStarted = true;
  void bot.scheduled().catch((error: unknown) => log.error({ err: error }, "start-up recovery failed"));
  setInterval(() => void bot.recover().catch((error: unknown) => log.warn({ err: error }, "recovering stale jobs failed")), jobPolicy(env).leaseSeconds * 1000);
}
// At the top level: Deno Deploy reads the crons an entry declares there, not in handlers.
if (typeof Deno.cron === "function") void Deno.cron("hcp-bot recovery and queue timeouts", "* * * * *", () => bot.scheduled());
else log.warn({}, "Deno.cron is not available (run with --unstable-cron, as deno.json says): stale jobs restart only at start-up");
Deno.serve(
  {
    hostname: env.HOST ?? "0.0.0.0",
    port: Number(env.PORT ?? 3000),
    onListen: ({ hostname, port }) => {
      console.log(JSON.stringify({ level: "info", msg: "hcp-bot listening", runtime: "deno", url: `http://${hostname}:${port}`, port }));
      soon(1000, afterFirstAnswer);
    },
  },
  (request) =>
    bot.fetch(request).finally(() => {
      if (!afterFirstAnswerStarted) soon(0, afterFirstAnswer);
    }),
);

// Deno Deploy sends SIGINT before it shuts an isolate down: the jobs running here go back to
// the store at once (as the Node server's SIGTERM drain does), rather than waiting out a
// lease nobody renews (two minutes by default) before another process may take them.
let stopping = false;
const handBackAndExit = () => {
  if (stopping) return;
  stopping = true;
  void bot
    .handBack()
    .then((n) => n > 0 && log.info({ jobs: n }, "handed unfinished jobs back to the store"))
    .catch((error: unknown) => log.warn({ err: error }, "handing jobs back failed; their leases pass by themselves"))
    .finally(() => Deno.exit(0));
};
for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, handBackAndExit);
