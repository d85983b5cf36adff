// The whole bot behind one fetch handler, for Deno and Cloudflare Workers. This front holds
// what a cold start's first request needs: the settings and the App key (checked at start, so
// a bad one is the first answer's 503), the store, /healthz, and GitHub's deliveries up to
// their answer (src/edge/webhook.ts: verified, routed and written as a job). Everything else
// (the jobs' work, Slack's /hcp) is src/edge/work.ts, imported on first need: a cold isolate
// answers its first delivery without evaluating the review, smoke, verdict and Slack modules. The runtime
// entries (workers/main.ts, deno/main.ts) supply the store, the Python grammar and how a job
// reaches `runJob` (a Queue, or this process).
import type { Language } from "web-tree-sitter";
import { anchorScanAvailable } from "../core/verdict/scan/wasm-scanner.ts";
import type { Log } from "../shared/log.ts";
import { healthReport } from "../github/health.ts";
import { jobPolicy, readSettings, SettingsError, type ReadTextFile } from "../github/settings.ts";
import type { RunOutcome } from "../jobs/runner.ts";
import type { Job, Store } from "../store/types.ts";
import { checkPrivateKey } from "./key.ts";
import { isWebPath } from "../web/server/paths.ts";
import type { EdgeWebFiles } from "./web.ts";
import { acceptWebhook, json, type Accept } from "./webhook.ts";
import type { EdgeWork } from "./work.ts";

export interface EdgeRuntime {
  name: "workerd" | "deno";
  store: Store;
  python: () => Promise<Language>;
  /** Hands an accepted job to the runtime, to reach `runJob` after the answer. */
  dispatch(job: Job): Promise<void>;
  log: Log;
  /** How PRIVATE_KEY_PATH is read; undefined where there is no file system. */
  readFile?: ReadTextFile;
  /** The web pages' built files (the playground, the rule pages), loaded on the first page request. */
  webFiles?: () => Promise<EdgeWebFiles>;
}

export interface EdgeBot {
  fetch(request: Request): Promise<Response>;
  runJob(id: string): Promise<RunOutcome>;
  /** Starts jobs nobody runs (an isolate evicted or a process killed mid-job). */
  recover(): Promise<void>;
  /** Every minute: recover, then the queue-timeout sweep. */
  scheduled(): Promise<void>;
  /** Before the process stops: the jobs it runs go back to the store (none ran if the work never loaded). */
  handBack(): Promise<number>;
}

export { jobPolicy };

export async function createEdgeBot(env: Record<string, string | undefined>, runtime: EdgeRuntime): Promise<EdgeBot> {
  const started = Date.now();
  const settings = readSettings(env, runtime.readFile);
  if (settings.mode !== "app") throw new SettingsError("APP_ID, PRIVATE_KEY and WEBHOOK_SECRET are required: the edge deployment has no setup page (register the App with `npm start` on Node, or by hand)");
  const privateKey = await checkPrivateKey(settings.privateKey!);
  const policy = jobPolicy(env);
  const { store, log } = runtime;

  const accept: Accept = async (job, claim) => {
    const written = await store.enqueueJob(job, claim);
    if (!written) return false;
    // The job is in the store: if handing it on fails, the minute's recovery starts it.
    await runtime.dispatch(written).catch((error: unknown) => log.warn({ err: error, job: written.id }, "handing a job to the runtime failed; the recovery sweep starts it"));
    return true;
  };

  let loading: Promise<EdgeWork> | undefined;
  /** The app, Slack and the job runner, built once on first need. */
  const work = () => (loading ??= import("./work.ts").then((m) => m.createEdgeWork(settings, privateKey, policy, runtime, accept)));
  let pages: Promise<(request: Request) => Promise<Response>> | undefined;
  /** The web pages (src/edge/web.ts), the same handler as Node's, built on the first page request. */
  const web = (files: () => Promise<EdgeWebFiles>) => (pages ??= Promise.all([import("./web.ts"), files()]).then(([m, f]) => m.createEdgeWeb(f), (error: unknown) => {
      pages = undefined; // the next request tries again
      throw error;
    }));

  async function health(request: Request): Promise<Response> {
    const report = await healthReport({
      authorization: request.headers.get("authorization"),
      token: settings.healthToken,
      started,
      github: "configured",
      store,
      slack: settings.slack ? "on" : "off (SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN not set)",
      extra: { runtime: runtime.name, verdictScanner: anchorScanAvailable() ? "webassembly" : "regex" },
    });
    return json(report.status, report.body);
  }

  return {
    async fetch(request) {
      const path = new URL(request.url).pathname;
      try {
        if (path === "/healthz" && request.method === "GET") return await health(request);
        // A load balancer's or uptime checker's HEAD: the GET's status and headers, no body.
        if (path === "/healthz" && request.method === "HEAD") return withoutBody(await health(request));
        if (path === settings.webhookPath) return request.method === "POST" ? await acceptWebhook(request, settings.webhookSecret!, accept, log) : json(405, { error: "POST only" });
        if (runtime.webFiles && (path === "/" || isWebPath(path))) return await (await web(runtime.webFiles))(request);
        return await (await work()).fetch(request, path);
      } catch (error) {
        log.error({ err: error, path }, "request failed");
        return json(500, { error: "internal error" });
      }
    },
    runJob: async (id) => (await work()).runJob(id),
    recover: async () => (await work()).recover(),
    async scheduled() {
      const w = await work();
      await w.recover();
      await w.sweep();
    },
    handBack: async () => (loading ? (await loading).handBack() : 0),
  };
}

function withoutBody(response: Response): Response {
  return new Response(null, { status: response.status, headers: response.headers });
}

/** A bot whose settings are wrong answers every request with the one-line reason (and logs it). */
export function misconfigured(error: unknown, log: Log): EdgeBot {
  const reason = error instanceof SettingsError ? error.message : `start-up failed: ${(error as Error).message ?? String(error)}`;
  log.error({ err: error }, reason);
  return {
    fetch: async () => json(503, { status: "misconfigured", error: reason }),
    runJob: async () => ({ kind: "wait", seconds: 60, reason: "delayed" }),
    recover: async () => {},
    scheduled: async () => {},
    handBack: async () => 0,
  };
}
