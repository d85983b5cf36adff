// The default deployment: one HTTP server (Probot's) for GitHub webhooks at
// /api/github/webhooks and /healthz. Without GitHub App credentials it serves Probot's
// setup flow from app.yml instead.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { Probot, Server } from "probot";
import { createApp, type AppDeps } from "../github/app.ts";
import { KeyedQueue } from "../github/queue.ts";
import { botOctokit } from "../github/octokit.ts";
import { VERSION } from "../version.ts";
import type { ServerSettings } from "./env.ts";
import { loadPythonLanguage } from "./treesitter.ts";

export interface RunningServer {
  url: string;
  port: number;
  mode: ServerSettings["mode"];
  /** Resolves when no webhook work is queued or running. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  onReviewed?: AppDeps["onReviewed"];
}

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

function healthHandler(mode: ServerSettings["mode"], started: number): Handler {
  return (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" || path !== "/healthz") return false;
    const body = {
      status: "ok",
      version: VERSION,
      uptimeSeconds: Math.round((Date.now() - started) / 1000),
      github: mode === "app" ? "configured" : "setup (no credentials yet: open / to register the GitHub App)",
      store: { status: "not used" },
      slack: "off",
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    return true;
  };
}

/** Probot's setup flow lives outside its public exports; it is loaded by file so the setup page keeps working. */
async function loadSetupFactory(): Promise<(options: Record<string, unknown>) => unknown> {
  const entry = createRequire(import.meta.url).resolve("probot");
  const mod = (await import(pathToFileURL(join(dirname(entry), "apps", "setup.js")).href)) as { setupAppFactory: (o: Record<string, unknown>) => unknown };
  return mod.setupAppFactory;
}

export async function startServer(settings: ServerSettings, options: StartOptions = {}): Promise<RunningServer> {
  const started = Date.now();
  const logLevel = settings.logLevel;
  const log = pino({ level: logLevel, name: "hcp-bot" });
  const baseOptions = { secret: settings.webhookSecret ?? "development", baseUrl: settings.baseUrl, log, Octokit: botOctokit() };
  const server = new Server({
    host: settings.host,
    port: settings.port,
    webhookPath: settings.webhookPath,
    log,
    Probot:
      settings.mode === "app"
        ? Probot.defaults({ ...baseOptions, appId: settings.appId!, privateKey: settings.privateKey! })
        : // Probot needs some credentials to construct; the setup flow never uses them (probot#1512).
          Probot.defaults({ ...baseOptions, appId: 1, privateKey: "setup mode" }),
    enableStaticFiles: settings.mode === "setup",
  });
  const queue = new KeyedQueue(4, log);
  server.addHandler(healthHandler(settings.mode, started));
  if (settings.mode === "app") {
    await server.load(createApp({ python: loadPythonLanguage, botLogin: settings.botLogin, onReviewed: options.onReviewed, queue }));
  } else {
    const setupAppFactory = await loadSetupFactory();
    await server.loadHandlerFactory(
      // Probot's own updateEnv writes the new credentials to .env; `hcp-bot serve` loads it on the next start.
      setupAppFactory({ host: settings.host, port: settings.port, log }) as never,
    );
  }
  const http = await server.start();
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    mode: settings.mode,
    idle: () => queue.idle(),
    stop: async () => {
      await server.stop();
      await queue.idle(); // let started reviews finish their posts
    },
  };
}
