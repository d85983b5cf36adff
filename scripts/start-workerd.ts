// `npm run start:workerd`: the built worker (dist/edge/worker.js) on workerd through
// Miniflare, with the bindings wrangler.toml declares (the store's Durable Object, the jobs
// queue, the cron), configured by the same environment variables as `npm start`. State
// (the Durable Object's SQLite) lives under HCP_DATA_DIR/workerd. The tests drive exactly
// this (startWorkerd), so what they check is what wrangler.toml deploys.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Miniflare, type MiniflareOptions } from "miniflare";
import { parse } from "smol-toml";

const root = join(import.meta.dirname, "..");

interface WranglerConfig {
  main: string;
  compatibility_date: string;
  durable_objects: { bindings: { name: string; class_name: string }[] };
  queues: { producers: { binding: string; queue: string }[]; consumers: { queue: string; max_batch_size?: number; max_batch_timeout?: number; max_retries?: number }[] };
  triggers?: { crons?: string[] };
  vars?: Record<string, string>;
  assets?: { directory: string; binding: string; run_worker_first?: boolean; html_handling?: "none" | "auto-trailing-slash"; not_found_handling?: "none" | "404-page" };
}

export function readWranglerConfig(): WranglerConfig {
  return parse(readFileSync(join(root, "wrangler.toml"), "utf8")) as unknown as WranglerConfig;
}

/** Settings from the environment as worker bindings; PRIVATE_KEY_PATH is read here (a worker has no files). */
export function workerSettings(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== "" && SETTINGS.test(k)) out[k] = v;
  if (!out.PRIVATE_KEY && env.PRIVATE_KEY_PATH) out.PRIVATE_KEY = readFileSync(env.PRIVATE_KEY_PATH, "utf8");
  delete out.PRIVATE_KEY_PATH;
  return out;
}

const SETTINGS = /^(APP_ID|PRIVATE_KEY|PRIVATE_KEY_PATH|WEBHOOK_SECRET|WEBHOOK_PATH|GHE_HOST|GHE_PROTOCOL|SLACK_SIGNING_SECRET|SLACK_BOT_TOKEN|SLACK_API_URL|SLACK_TEAM_ID|LOG_LEVEL|HCP_BOT_LOGIN|HCP_SMOKE_MAX_ACTIVE|HCP_HEALTH_TOKEN|HCP_JOB_[A-Z_]+|HCP_GITHUB_[A-Z_]+)$/;

export function miniflareOptions(env: Record<string, string | undefined>): MiniflareOptions {
  const config = readWranglerConfig();
  const script = resolve(root, config.main);
  const dataDir = resolve(env.HCP_DATA_DIR ?? ".hcp-bot-data");
  return {
    modules: true,
    scriptPath: script,
    modulesRoot: dirname(script),
    modulesRules: [
      { type: "ESModule", include: ["worker-*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: config.compatibility_date,
    durableObjects: Object.fromEntries(config.durable_objects.bindings.map((b) => [b.name, { className: b.class_name, useSQLite: true }])),
    durableObjectsPersist: join(dataDir, "workerd", "durable-objects"),
    queueProducers: Object.fromEntries(config.queues.producers.map((p) => [p.binding, { queueName: p.queue }])),
    queueConsumers: Object.fromEntries(
      config.queues.consumers.map((c) => [c.queue, { maxBatchSize: c.max_batch_size, maxBatchTimeout: c.max_batch_timeout, maxRetries: c.max_retries }]),
    ),
    bindings: { ...config.vars, ...workerSettings(env) },
    // Workers Static Assets as Cloudflare serves them: the worker first, the files behind ASSETS.
    ...(config.assets
      ? {
          assets: {
            directory: resolve(root, config.assets.directory),
            binding: config.assets.binding,
            routerConfig: { invoke_user_worker_ahead_of_assets: config.assets.run_worker_first === true, has_user_worker: true },
            assetConfig: { html_handling: config.assets.html_handling ?? "auto-trailing-slash", not_found_handling: config.assets.not_found_handling ?? "none" },
          },
        }
      : {}),
    host: env.HOST ?? "0.0.0.0",
    port: Number(env.PORT ?? 3000),
  };
}

export interface RunningWorkerd {
  url: string;
  /** Runs the cron trigger once (the minute's recovery and sweep). */
  scheduled(): Promise<void>;
  /** Restarts workerd on the same state, cutting off whatever it was running. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorkerd(env: Record<string, string | undefined>): Promise<RunningWorkerd> {
  const options = miniflareOptions(env);
  const mf = new Miniflare(options);
  const url = (await mf.ready).toString().replace(/\/$/, "");
  const scheduled = async () => {
    const worker = await mf.getWorker();
    // Fetcher.scheduled exists on workerd; Miniflare types the Fetcher without @cloudflare/workers-types.
    await (worker as unknown as { scheduled(o: { cron: string }): Promise<unknown> }).scheduled({ cron: readWranglerConfig().triggers?.crons?.[0] ?? "* * * * *" });
  };
  return {
    url,
    scheduled,
    restart: () => mf.setOptions(options),
    stop: () => mf.dispose(),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const running = await startWorkerd(process.env);
    console.log(JSON.stringify({ level: "info", msg: "hcp-bot listening", runtime: "workerd", url: running.url }));
    // Miniflare has no cron of its own: the trigger runs here every minute, as Cloudflare's would.
    setInterval(() => void running.scheduled().catch((error: Error) => console.error(`cron trigger failed: ${error.message}`)), 60_000);
    const stop = () => void running.stop().then(() => process.exit(0));
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  } catch (error) {
    console.error(`hcp-bot: ${(error as Error).message}`);
    process.exit(1);
  }
}
