// Settings from the environment, with Probot's names, for every host (the Node server, Deno,
// Cloudflare Workers). A missing or malformed setting stops start-up with one line that
// names it and says what is expected. Runtime-neutral: the host hands in how to read a file.
import * as z from "zod";
import type { GitHubWaits } from "./octokit.ts";
import { DEFAULT_JOB_POLICY, type JobPolicy } from "../jobs/runner.ts";

/** Kubernetes waits 30 s (terminationGracePeriodSeconds) before SIGKILL; draining ends well before. */
export const DEFAULT_DRAIN_SECONDS = 20;

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

export interface ServerSettings {
  mode: "app" | "setup";
  appId?: number;
  privateKey?: string;
  webhookSecret?: string;
  port: number;
  host: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** REST base URL: https://api.github.com, or http(s)://GHE_HOST/api/v3. */
  baseUrl: string;
  webhookPath: string;
  /** HCP_PUBLIC_URL without a trailing slash: where GitHub and browsers reach the server (setup mode's webhook URL). */
  publicUrl?: string;
  dataDir: string;
  /** Overrides the bot's login (`slug[bot]`), skipping the GET /app lookup. */
  botLogin?: string;
  /** The Slack app; undefined when SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN are not set. */
  slack?: SlackSettings;
  /** LOG_FORMAT: "pretty" lines for people, "json" for collectors; unset, `serve` picks by whether stdout is a terminal. */
  logFormat?: "pretty" | "json";
  /** WEBHOOK_PROXY_URL: a smee.io channel that forwards webhooks to this server (development). */
  webhookProxyUrl?: string;
  /** REDIS_URL: the shared store of two or more replicas (SQLite in dataDir when unset). */
  redis?: RedisSettings;
  /** HCP_JOB_LEASE_SECONDS, HCP_JOB_RETRY_SECONDS, HCP_JOB_UNLEASED_SECONDS: durable jobs' timings. */
  jobs: JobPolicy;
  /**
   * HCP_GITHUB_WAIT_HORIZON_SECONDS, HCP_GITHUB_SECONDARY_WAIT_SECONDS: the GitHub retry
   * policy's horizon and first secondary-limit wait, when not the host's defaults (tests shorten them).
   */
  githubWaits: GitHubWaits;
  /** HCP_DRAIN_SECONDS: how long SIGTERM waits for running jobs before handing them back. */
  drainSeconds: number;
  /** HCP_ANALYSIS_THREADS (Node): worker threads that run the analysis off the answering thread; 0 runs it there. */
  analysisThreads: number;
  /** HCP_SMOKE_MAX_ACTIVE: the operator's cap on active smoke runs across every installation. */
  smokeMaxActive?: number;
  /** HCP_HEALTH_TOKEN: `/healthz` shows its details only to a request bearing it. */
  healthToken?: string;
  /** HCP_METRICS_TOKEN: `/metrics` (Node) answers only a request bearing it; unset, `/metrics` is off. */
  metricsToken?: string;
  /** The web pages: GitHub's web host (links, OAuth) and who may see the smoke-run history. */
  web: WebSettings;
}

export type RunsAccess =
  | { access: "off" }
  | {
      access: "github";
      /** The GitHub App's OAuth client (Probot's setup flow writes both to .env). */
      clientId: string;
      clientSecret: string;
      /** Keys the session cookies; derived from the client secret unless HCP_SESSION_SECRET is set. */
      sessionSecret: string;
      /** The server's public URL (the OAuth callback is PUBLIC_URL/auth/callback); default: the request's host. */
      publicUrl?: string;
    };

export interface WebSettings {
  /** https://github.com, or GHE_PROTOCOL://GHE_HOST: pull-request links and the OAuth endpoints. */
  githubWebUrl: string;
  runs: RunsAccess;
}

export interface SlackSettings {
  signingSecret: string;
  botToken: string;
  /** Web API base URL ending in "/": https://slack.com/api/ unless a proxy or a test says otherwise. */
  apiUrl: string;
  /** SLACK_TEAM_ID: the workspace whose bare user ids `slack.users` maps (unless a config names one). */
  teamId?: string;
}

export interface RedisSettings {
  url: string;
  /** HCP_REDIS_PREFIX: keys start with this (default `hcp:`), so bots can share a Redis. */
  prefix?: string;
  /** HCP_AUDIT_MAXLEN: the audit stream keeps about this many records. */
  auditMaxLen?: number;
}

export class SettingsError extends Error {}

/** Every environment variable the hosts read at start (exported for the configuration table in docs/configuration.md). */
export const Env = z.object({
  APP_ID: z
    .string()
    .regex(/^\d+$/, "must be the numeric App ID from the app's settings page")
    .optional(),
  PRIVATE_KEY: z
    .string()
    .refine((k) => k.includes("-----BEGIN") && k.includes("PRIVATE KEY-----"), "must be a PEM private key (-----BEGIN ... PRIVATE KEY-----)")
    .optional(),
  PRIVATE_KEY_PATH: z.string().min(1).optional(),
  WEBHOOK_SECRET: z.string().min(1, "must not be empty").optional(),
  PORT: z
    .string()
    .regex(/^\d+$/, "must be a number between 0 and 65535")
    .refine((p) => Number(p) <= 65535, "must be a number between 0 and 65535")
    .optional(),
  HOST: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).optional(),
  LOG_FORMAT: z.enum(["pretty", "json"], { error: "must be pretty or json" }).optional(),
  WEBHOOK_PROXY_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://smee.io/abc123" }).optional(),
  GHE_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+(:\d+)?$/, "must be a host name with an optional port, without a scheme or path (e.g. github.example.com)")
    .optional(),
  GHE_PROTOCOL: z.enum(["http", "https"]).optional(),
  WEBHOOK_PATH: z.string().startsWith("/").optional(),
  HCP_DATA_DIR: z.string().min(1).optional(),
  HCP_BOT_LOGIN: z.string().min(1).optional(),
  NODE_ENV: z.string().optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  SLACK_BOT_TOKEN: z.string().startsWith("xox", "must be a Slack bot token (xoxb-...)").optional(),
  SLACK_TEAM_ID: z.string().regex(/^[TE][A-Z0-9]{2,}$/, "must be a Slack team id such as T012ABCDEF").optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL such as redis://:password@redis:6379/0" }).optional(),
  HCP_REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_-]{1,50}$/, "must be 1 to 50 letters, digits, colons, dashes or underscores").optional(),
  HCP_AUDIT_MAXLEN: z.string().regex(/^[1-9][0-9]{2,9}$/, "must be a whole number of at least 100").optional(),
  HCP_DRAIN_SECONDS: z.string().regex(/^[1-9][0-9]{0,3}$/, "must be a whole number of seconds (1 to 9999)").optional(),
  HCP_GITHUB_WAIT_HORIZON_SECONDS: z.string().regex(/^[1-9][0-9]{0,5}$/, "must be a whole number of seconds (1 to 999999)").optional(),
  HCP_GITHUB_SECONDARY_WAIT_SECONDS: z.string().regex(/^[1-9][0-9]{0,4}$/, "must be a whole number of seconds (1 to 99999)").optional(),
  HCP_ANALYSIS_THREADS: z.string().regex(/^(?:[0-9]|1[0-6])$/, "must be a whole number from 0 to 16").optional(),
  HCP_SMOKE_MAX_ACTIVE: z.string().regex(/^[1-9][0-9]{0,5}$/, "must be a positive whole number").optional(),
  HCP_HEALTH_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  HCP_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  SLACK_API_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://slack.com/api/" }).optional(),
  HCP_RUNS_ACCESS: z.enum(["off", "github"], { error: "must be off (the default) or github (sign in with GitHub)" }).optional(),
  GITHUB_CLIENT_ID: z.string().min(1).optional(),
  GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  HCP_SESSION_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  HCP_PUBLIC_URL: z.url({ protocol: /^https?$/, error: "must be the server's public http(s) URL, such as https://hcp-bot.example.com" }).optional(),
});

function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join(".")} ${issue.message}`;
}

/** PEM with literal "\n" sequences (as some secret stores hand it over) is unescaped. */
function normalizePem(key: string): string {
  return key.includes("\\n") && !key.includes("\n") ? key.replace(/\\n/g, "\n") : key;
}

/** Both Slack secrets or neither: one alone is a mistake worth stopping for. */
function slackSettings(e: z.infer<typeof Env>): SlackSettings | undefined {
  if (!e.SLACK_SIGNING_SECRET && !e.SLACK_BOT_TOKEN) return undefined;
  if (!e.SLACK_SIGNING_SECRET) throw new SettingsError("SLACK_SIGNING_SECRET is missing (SLACK_BOT_TOKEN is set): copy it from the Slack app's Basic Information page");
  if (!e.SLACK_BOT_TOKEN) throw new SettingsError("SLACK_BOT_TOKEN is missing (SLACK_SIGNING_SECRET is set): copy the Bot User OAuth Token from the Slack app's OAuth & Permissions page");
  const api = e.SLACK_API_URL ?? "https://slack.com/api/";
  return { signingSecret: e.SLACK_SIGNING_SECRET, botToken: e.SLACK_BOT_TOKEN, apiUrl: api.endsWith("/") ? api : `${api}/`, ...(e.SLACK_TEAM_ID ? { teamId: e.SLACK_TEAM_ID } : {}) };
}

function runsAccess(e: z.infer<typeof Env>): RunsAccess {
  if (e.HCP_RUNS_ACCESS !== "github") return { access: "off" };
  if (!e.GITHUB_CLIENT_ID || !e.GITHUB_CLIENT_SECRET) {
    throw new SettingsError("HCP_RUNS_ACCESS=github needs GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET: the GitHub App's client id and a client secret (its settings page; Probot's setup flow writes them to .env)");
  }
  return {
    access: "github",
    clientId: e.GITHUB_CLIENT_ID,
    clientSecret: e.GITHUB_CLIENT_SECRET,
    sessionSecret: e.HCP_SESSION_SECRET ?? `client-secret:${e.GITHUB_CLIENT_SECRET}`,
    ...(e.HCP_PUBLIC_URL ? { publicUrl: e.HCP_PUBLIC_URL.replace(/\/+$/, "") } : {}),
  };
}

/** Job timings from the environment (tests shorten them); a bad value is a SettingsError. */
export function jobPolicy(env: Record<string, string | undefined>): JobPolicy {
  const read = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new SettingsError(`${name} must be a positive number of seconds`);
    return n;
  };
  return {
    leaseSeconds: read("HCP_JOB_LEASE_SECONDS", DEFAULT_JOB_POLICY.leaseSeconds),
    retrySeconds: read("HCP_JOB_RETRY_SECONDS", DEFAULT_JOB_POLICY.retrySeconds),
    unleasedSeconds: read("HCP_JOB_UNLEASED_SECONDS", DEFAULT_JOB_POLICY.unleasedSeconds),
    attempts: DEFAULT_JOB_POLICY.attempts,
  };
}

/** How a host reads PRIVATE_KEY_PATH; throws an error with a `code` (ENOENT...) when it cannot. */
export type ReadTextFile = (path: string) => string;

export function readSettings(env: Record<string, string | undefined>, readFile: ReadTextFile | undefined): ServerSettings {
  const blank = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  // Parsed once per start: zod's compiled fast path (new Function) would cost more than it saves.
  const parsed = Env.safeParse(blank, { jitless: true });
  if (!parsed.success) throw new SettingsError(firstProblem(parsed.error));
  const e = parsed.data;
  let privateKey = e.PRIVATE_KEY ? normalizePem(e.PRIVATE_KEY) : undefined;
  if (!privateKey && e.PRIVATE_KEY_PATH) {
    if (!readFile) throw new SettingsError("PRIVATE_KEY_PATH cannot be used here (no file system): set PRIVATE_KEY to the key's text");
    try {
      privateKey = readFile(e.PRIVATE_KEY_PATH);
    } catch (error) {
      throw new SettingsError(`PRIVATE_KEY_PATH ${e.PRIVATE_KEY_PATH} cannot be read: ${(error as { code?: string }).code ?? String(error)}`);
    }
    if (!privateKey.includes("PRIVATE KEY-----")) throw new SettingsError(`PRIVATE_KEY_PATH ${e.PRIVATE_KEY_PATH} does not hold a PEM private key`);
  }
  const base = {
    port: e.PORT !== undefined ? Number(e.PORT) : 3000,
    host: e.HOST ?? "0.0.0.0",
    logLevel: e.LOG_LEVEL ?? "info",
    baseUrl: e.GHE_HOST ? `${e.GHE_PROTOCOL ?? "https"}://${e.GHE_HOST}/api/v3` : "https://api.github.com",
    webhookPath: e.WEBHOOK_PATH ?? "/api/github/webhooks",
    ...(e.HCP_PUBLIC_URL ? { publicUrl: e.HCP_PUBLIC_URL.replace(/\/+$/, "") } : {}),
    dataDir: e.HCP_DATA_DIR ?? ".hcp-bot-data",
    botLogin: e.HCP_BOT_LOGIN,
    slack: slackSettings(e),
    ...(e.LOG_FORMAT ? { logFormat: e.LOG_FORMAT } : {}),
    ...(e.WEBHOOK_PROXY_URL ? { webhookProxyUrl: e.WEBHOOK_PROXY_URL } : {}),
    ...(e.REDIS_URL ? { redis: { url: e.REDIS_URL, ...(e.HCP_REDIS_PREFIX ? { prefix: e.HCP_REDIS_PREFIX } : {}), ...(e.HCP_AUDIT_MAXLEN ? { auditMaxLen: Number(e.HCP_AUDIT_MAXLEN) } : {}) } } : {}),
    jobs: jobPolicy(env),
    githubWaits: {
      ...(e.HCP_GITHUB_WAIT_HORIZON_SECONDS ? { horizonSeconds: Number(e.HCP_GITHUB_WAIT_HORIZON_SECONDS) } : {}),
      ...(e.HCP_GITHUB_SECONDARY_WAIT_SECONDS ? { secondaryWaitSeconds: Number(e.HCP_GITHUB_SECONDARY_WAIT_SECONDS) } : {}),
    },
    drainSeconds: e.HCP_DRAIN_SECONDS ? Number(e.HCP_DRAIN_SECONDS) : DEFAULT_DRAIN_SECONDS,
    analysisThreads: e.HCP_ANALYSIS_THREADS ? Number(e.HCP_ANALYSIS_THREADS) : 1,
    ...(e.HCP_SMOKE_MAX_ACTIVE ? { smokeMaxActive: Number(e.HCP_SMOKE_MAX_ACTIVE) } : {}),
    ...(e.HCP_HEALTH_TOKEN ? { healthToken: e.HCP_HEALTH_TOKEN } : {}),
    ...(e.HCP_METRICS_TOKEN ? { metricsToken: e.HCP_METRICS_TOKEN } : {}),
    web: { githubWebUrl: e.GHE_HOST ? `${e.GHE_PROTOCOL ?? "https"}://${e.GHE_HOST}` : "https://github.com", runs: runsAccess(e) },
  };
  const credentials = [e.APP_ID, privateKey, e.WEBHOOK_SECRET];
  if (credentials.every((c) => c === undefined)) {
    if (e.NODE_ENV === "production") throw new SettingsError("APP_ID, PRIVATE_KEY (or PRIVATE_KEY_PATH) and WEBHOOK_SECRET are required when NODE_ENV=production; without them the bot only serves its setup page");
    // The setup flow writes the App's credentials: it answers this machine only, unless HOST says otherwise.
    return { ...base, mode: "setup", host: e.HOST ?? "127.0.0.1", logLevel: base.logLevel };
  }
  if (!e.APP_ID) throw new SettingsError("APP_ID is missing (the other GitHub App credentials are set)");
  if (!privateKey) throw new SettingsError("PRIVATE_KEY or PRIVATE_KEY_PATH is missing (the other GitHub App credentials are set)");
  if (!e.WEBHOOK_SECRET) throw new SettingsError("WEBHOOK_SECRET is missing: webhooks cannot be verified without it");
  return { ...base, mode: "app", appId: Number(e.APP_ID), privateKey, webhookSecret: e.WEBHOOK_SECRET };
}
