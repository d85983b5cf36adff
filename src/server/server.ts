// The default deployment: one HTTP server (Probot's) for GitHub webhooks at
// /api/github/webhooks, /healthz, Slack at /slack/events and the web pages (/playground,
// /runs). Without GitHub App credentials it serves Probot's setup flow from app.yml
// instead, and the playground.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHmac } from "node:crypto";
import { createServer as createNetServer } from "node:net";
import { Probot, Server } from "probot";
import { createApp, type AppDeps, type GitHubApp } from "../github/app.ts";
import type { AppHost, BotOctokit } from "../github/host.ts";
import { acceptDelivery, Unavailable, type Accept } from "../github/intake.ts";
import { createSmokeService, type SmokeGitHub, type SmokeListener, type SmokeTuning } from "../github/smoke/index.ts";
import { KeyedQueue } from "../github/queue.ts";
import { openStore, type Store } from "../store/index.ts";
import { botOctokit } from "./octokit.ts";
import type { RateGate } from "../github/rate-gate.ts";
import { guardWebhooks } from "./webhook-guard.ts";
import { createMetrics, metricsHandler, type BotMetrics } from "./metrics.ts";
import { DEFAULT_RETRY_POLICY, withWaits, type Clock } from "../github/octokit.ts";
import { healthReport } from "../github/health.ts";
import type { ServerSettings } from "./env.ts";
import { createAnalysisPool } from "../node/analysis-pool.ts";
import { judgeOffThread } from "../node/artifact-judge.ts";
import { watchAnswers, type AnswerWatch } from "./answers.ts";
import { FROM_SOURCE } from "../node/package-files.ts";
import { createSlackNode, type SlackNode } from "./slack.ts";
import { mountWeb, type WebPages } from "./web-mount.ts";
import { createLogger } from "./logger.ts";
import { writeEnvFile } from "./env-file.ts";
import { createDurableWork, type DurableWork } from "./durable.ts";
import { createSetupDoors, type SetupDoors } from "./setup.ts";

export interface RunningServer {
  url: string;
  port: number;
  mode: ServerSettings["mode"];
  /** Resolves when no webhook work is queued or running. */
  idle(): Promise<void>;
  /**
   * SIGTERM: stops accepting work (webhooks 503, /healthz 503 "draining"), lets running jobs
   * finish for up to HCP_DRAIN_SECONDS, hands the rest back to the store, then stops.
   */
  drain(): Promise<{ handedBack: number }>;
  /** The playground and the smoke-run history (their static files build on first use). */
  web: WebPages;
  /** The counters behind /metrics (src/server/metrics.ts), for other parts of the host to feed. */
  metrics: BotMetrics;
  /** Setup mode: the one-time code the pages that write .env ask for (the CLI prints it on the console). */
  setupCode?: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  onReviewed?: AppDeps["onReviewed"];
  /** A store to use instead of the SQLite file in the data folder (tests). */
  store?: Store;
  /** How often queued smoke runs are checked for the queue timeout; 0 turns the sweep off. */
  sweepIntervalMs?: number;
  /** Smoke-dispatch tuning (tests), and one more listener told of every smoke state change. */
  smoke?: SmokeTuning & { notify?: SmokeListener };
  /** The GitHub retry policy's clock (tests hand in one that does not really sleep). */
  clock?: Clock;
}

type SetupDoorsLog = Parameters<typeof createSetupDoors>[0]["log"];

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

function slackHealth(settings: ServerSettings, slack: SlackNode | undefined): string {
  if (slack) return "on";
  if (settings.slack) return "off (the GitHub App is not set up yet)";
  return "off (SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN not set)";
}

/**
 * `/healthz`: `{"status":"ok"}` (or "degraded", 503) for anybody; the version, uptime, store
 * (its path) and Slack state only with `Authorization: Bearer HCP_HEALTH_TOKEN`.
 */
function healthHandler(mode: ServerSettings["mode"], started: number, store: Store | undefined, slack: string, token: string | undefined, durable?: DurableWork): Handler {
  return async (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    // HEAD is a load balancer's or uptime checker's GET without the body (Node leaves the body out of a HEAD answer).
    if ((req.method !== "GET" && req.method !== "HEAD") || path !== "/healthz") return false;
    if (durable?.draining) {
      res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ status: "draining" }));
      return true;
    }
    const github = mode === "app" ? "configured" : "setup (no credentials yet: open / to register the GitHub App)";
    const report = await healthReport({ started, github, store, slack, authorization: req.headers.authorization, token });
    res.writeHead(report.status, { "content-type": "application/json" }).end(JSON.stringify(report.body));
    return true;
  };
}

/**
 * Probot makes its app instance inside `server.load`, after Slack and the smoke service are
 * made; the service's GitHub access waits for it (no request reaches either before the server starts).
 */
function probotAccess(): { github: SmokeGitHub; loaded(probot: AppHost): void } {
  let loaded!: (probot: AppHost) => void;
  const host = new Promise<AppHost>((resolve) => (loaded = resolve));
  return { github: { auth: async (installationId) => (await host).auth(installationId) }, loaded };
}

/** The periodic sweep of queued smoke runs, one at a time on the server's queue. */
function sweepEvery(ms: number, queue: KeyedQueue, app: GitHubApp): ReturnType<typeof setInterval> {
  const timer = setInterval(() => void queue.enqueue("sweep:queue-timeouts", () => app.sweep()), ms);
  timer.unref();
  return timer;
}

/** node:crypto's HMAC, in this thread (WebCrypto's goes to the thread pool, a wait per delivery on a busy server). */
const nodeHmac = (secret: string, message: string): Uint8Array => createHmac("sha256", secret).update(message).digest();

/** Setup mode has no App yet, so no job can be written: a delivery the app would act on is refused (503) for GitHub to deliver again. */
const notSetUp: Accept = async () => {
  throw new Unavailable("hcp-bot is not set up yet (no GitHub App credentials); deliver again once it is");
};

/** A free port on `host`. Probot's Server reads port 0 as "use 3000", so PORT=0 is resolved here. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Idle keep-alive connections stay open 65 s, longer than what sits in front keeps them (load
 * balancers and ingresses: 60 s). With Node's 5 s default the server closed connections the
 * proxy (or bench:load's client) still counted as open, and the next request sent on one met
 * a reset: a lost webhook or Slack command, counted as nothing by the bot.
 */
export const KEEP_ALIVE_MS = 65_000;

/** The most a job waits for the server to finish answering before it runs anyway. */
const ANSWERS_FIRST_MS = 1000;

function keepIdleConnections(http: import("node:http").Server): void {
  http.keepAliveTimeout = KEEP_ALIVE_MS;
  // Headers must be allowed to take longer than the idle wait, or a slow first request is cut first.
  http.headersTimeout = KEEP_ALIVE_MS + 1000;
}

interface AppPartsInput {
  settings: ServerSettings;
  options: StartOptions;
  store: Store;
  analysis: ReturnType<typeof createAnalysisPool>;
  queue: KeyedQueue;
  durable: DurableWork;
  metrics: BotMetrics;
  log: Awaited<ReturnType<typeof createLogger>>;
}

/**
 * The smoke service, made once and handed to the GitHub handlers and to Slack; the metrics, a
 * caller's listener (tests) and Slack's channel messages hear every state change, in this order.
 * Slack needs the GitHub side (users are mapped to GitHub logins), so it runs only in app mode.
 */
function appParts(p: AppPartsInput): { slack: SlackNode | undefined; app(host: AppHost): GitHubApp; probotLoaded(probot: AppHost): void } {
  const { settings, options, metrics } = p;
  const probot = probotAccess();
  const smoke = createSmokeService({
    store: p.store,
    analyze: p.analysis.analyze,
    github: probot.github,
    log: p.log,
    ...(settings.botLogin ? { botLogin: settings.botLogin } : {}),
    // Log artifacts are judged on a thread of their own (src/node/artifact-judge.ts).
    tuning: { ...(settings.smokeMaxActive ? { maxActive: settings.smokeMaxActive } : {}), judgeArtifact: judgeOffThread, ...options.smoke },
    notify: [async (_request, state) => metrics.smokeState(state), options.smoke?.notify, async (request, state): Promise<void> => slack?.notify(request, state)],
  });
  const slack: SlackNode | undefined = settings.slack
    ? createSlackNode({ ...settings.slack, githubApiUrl: settings.baseUrl, store: p.store, queue: p.queue, accept: p.durable.slackAccept, analyze: p.analysis.analyze, advise: p.analysis.advise, slackWaits: metrics.slack, smoke, log: p.log })
    : undefined;
  const app = (host: AppHost) =>
    createApp(
      {
      analyze: p.analysis.analyze,
      advise: p.analysis.advise,
      botLogin: settings.botLogin,
      onReviewed: (outcome) => {
        metrics.reviewed(outcome);
        options.onReviewed?.(outcome);
      },
      store: p.store,
      smoke,
    },
    host,
  );
  return { slack, app, probotLoaded: probot.loaded };
}

/** The bot's own setup pages (src/server/setup.ts): the doors that write .env need the code printed on the console. */
function setupDoors(settings: ServerSettings, log: SetupDoorsLog): SetupDoors {
  return createSetupDoors({
    githubWebUrl: settings.web.githubWebUrl,
    baseUrl: settings.baseUrl,
    webhookPath: settings.webhookPath,
    ...(settings.publicUrl ? { publicUrl: settings.publicUrl } : {}),
    ...(settings.webhookProxyUrl ? { webhookProxyUrl: settings.webhookProxyUrl } : {}),
    cwd: process.cwd(),
    // The new credentials go to .env, readable by its owner only; `hcp-bot serve` loads it on the next start.
    writeEnv: writeEnvFile,
    log,
  });
}

/** Probot's HTTP server, with the app's credentials (or, in setup mode, placeholders it never uses). */
function probotServer(settings: ServerSettings, baseOptions: Parameters<typeof Probot.defaults>[0] & { log: Awaited<ReturnType<typeof createLogger>> }): Server {
  return new Server({
    host: settings.host,
    port: settings.port,
    webhookPath: settings.webhookPath,
    log: baseOptions.log,
    Probot:
      settings.mode === "app"
        ? Probot.defaults({ ...baseOptions, appId: settings.appId!, privateKey: settings.privateKey! })
        : // Probot needs some credentials to construct; the setup flow never uses them (probot#1512).
          Probot.defaults({ ...baseOptions, appId: 1, privateKey: "setup mode" }),
    // Probot's stock setup pages and their static files are not served (src/server/setup.ts has the bot's own).
    enableStaticFiles: false,
    // Only a configured channel is used (and mentioned); Probot never creates one by itself here.
    ...(settings.webhookProxyUrl ? { webhookProxy: settings.webhookProxyUrl } : {}),
  });
}

export async function startServer(settings: ServerSettings, options: StartOptions = {}): Promise<RunningServer> {
  if (settings.port === 0) settings = { ...settings, port: await freePort(settings.host) };
  const started = Date.now();
  const log = await createLogger(settings);
  const opened = settings.mode === "app" ? (options.store ?? (await openStore(settings.redis ? { kind: "redis", ...settings.redis } : { kind: "sqlite", dataDir: settings.dataDir }))) : undefined;
  const metrics = createMetrics({ queueDepth: () => queue.size });
  const store = opened && metrics.counted(opened);
  // Replicas on Redis share GitHub's rate limits through it (src/github/rate-gate.ts).
  const gate = opened && "rateGate" in opened ? (opened as Store & { rateGate(): RateGate }).rateGate() : undefined;
  const baseOptions = { secret: settings.webhookSecret ?? "development", baseUrl: settings.baseUrl, log, Octokit: botOctokit({ policy: withWaits(DEFAULT_RETRY_POLICY, settings.githubWaits), clock: options.clock, observer: metrics.github, gate }) };
  const server = probotServer(settings, baseOptions);
  const queue = new KeyedQueue(4, log);
  // Reviews, pre-flight and Slack checks are analyzed on a worker thread (src/node/analysis-pool.ts).
  const analysis = createAnalysisPool(settings.mode === "app" ? settings.analysisThreads : 0);
  // Webhook and Slack work is a durable job in the store (src/server/durable.ts).
  // A job waits (up to ANSWERS_FIRST_MS) while requests are being answered (src/server/answers.ts).
  let answers: AnswerWatch | undefined;
  const durable = store ? createDurableWork({ store, policy: settings.jobs, log, beforeRun: () => answers?.quiet(ANSWERS_FIRST_MS) ?? Promise.resolve() }) : undefined;
  const timers: ReturnType<typeof setInterval>[] = [];
  const sweepMs = options.sweepIntervalMs ?? 60_000;
  const parts = settings.mode === "app" ? appParts({ settings, options, store: store!, analysis, queue, durable: durable!, metrics, log }) : undefined;
  const slack = parts?.slack;
  server.addHandler(healthHandler(settings.mode, started, store, slackHealth(settings, slack), settings.healthToken, durable));
  server.addHandler(metricsHandler(metrics, settings.metricsToken));
  const web = mountWeb(server, settings, store, log);
  let setup: SetupDoors | undefined;
  if (slack) server.addHandler(slack.handler);
  if (parts) {
    await server.load((probot: Probot) => {
      // Probot is kept for its HTTP server, setup flow and Octokit class: deliveries reach the app through the intake's jobs.
      const host: AppHost = { auth: (id) => probot.auth(id) as unknown as Promise<BotOctokit>, log };
      parts.probotLoaded(host);
      const app = parts.app(host);
      durable!.bind({ runDelivery: metrics.timed(app.runDelivery), ...(slack ? { runSlack: slack.run } : {}) });
      if (sweepMs > 0) timers.push(sweepEvery(sweepMs, queue, app));
    });
  } else {
    setup = setupDoors(settings, log);
    server.addHandler(setup.handle);
  }
  const http = await server.start();
  keepIdleConnections(http);
  guardWebhooks(http, {
    path: settings.webhookPath,
    // Every delivery goes through the one intake (src/github/intake.ts); its job runs the app's handler.
    intake: (delivery) => acceptDelivery(delivery, { secret: baseOptions.secret, accept: durable?.accept ?? notSetUp, log, hmacSha256: nodeHmac }),
    log,
    onRefused: (reason) => metrics.webhook("unverified", reason),
    onAnswered: (event, status) => metrics.webhook(event, status < 300 ? "accepted" : `answered-${status}`),
  });
  // After the guard, so that its listener sees the webhook requests too (the guard passes on only the others).
  answers = watchAnswers(http);
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  // The built server loads the grammar on its thread now, not in the first review; from the
  // sources (tests) a thread's start costs seconds of compiling TypeScript, so it waits for first use.
  if (!FROM_SOURCE && settings.mode === "app") analysis.warm().catch((error: unknown) => log.warn({ err: error }, "the analysis thread did not start; it is tried again on the first analysis"));
  durable?.start(); // jobs a stopped or killed process left behind run now
  /** `waitForJobs` false: jobs were handed back (drain), so the process may exit under them. */
  const stop = async (waitForJobs = true) => {
    for (const t of timers) clearInterval(t);
    durable?.stop();
    // Keep-alive sockets would otherwise outlive the server and swallow the next request.
    http.closeIdleConnections();
    await server.stop();
    http.closeAllConnections();
    if (waitForJobs) {
      await queue.idle();
      await durable?.idle(); // let started reviews finish their posts
    }
    await analysis.close();
    if (!options.store) await store?.close();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    mode: settings.mode,
    idle: async () => {
      await queue.idle();
      await durable?.idle();
    },
    web,
    metrics,
    ...(setup ? { setupCode: setup.code } : {}),
    drain: async () => {
      const handedBack = (await durable?.drain(settings.drainSeconds * 1000)) ?? 0;
      await stop(handedBack === 0);
      return { handedBack };
    },
    stop: () => stop(),
  };
}
