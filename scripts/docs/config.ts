// docs/configuration.md's two tables: every environment variable (the hosts' zod schema in
// src/github/settings.ts, plus the few read elsewhere) and every key of `.github/hcp-bot.yml` (the
// repository-settings schema in src/core/config/repo-config.ts). The names, types and defaults
// come from the schemas; the meanings are written here, and the generator stops when a schema
// gains a name this file does not explain, or this file explains a name no schema or source has.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { RepoConfigSchema } from "../../src/core/config/repo-config.ts";
import { ROOT } from "./transcripts.ts";

interface EnvDoc {
  default?: string;
  meaning: string;
}

/** The hosts' environment schema: the one module under src/ that exports `Env` (src/github/settings.ts). */
async function envSchemaNames(): Promise<string[]> {
  const modules = filesUnder("src").filter((f) => f.endsWith(".ts") && /^export const Env = z\.object\(/m.test(readFileSync(join(ROOT, f), "utf8")));
  if (modules.length !== 1) throw new Error(`expected one module under src/ to export the environment schema Env, found ${modules.length}: ${modules.join(", ")}`);
  const { Env } = (await import(join(ROOT, modules[0]!))) as { Env: z.ZodObject };
  return Object.keys(Env.shape);
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(ROOT.length + 1));
}

/** The variables of the hosts' schema, with their meanings. */
const SERVER_ENV: Record<string, EnvDoc> = {
  APP_ID: { meaning: "the GitHub App's numeric id. Without APP_ID, the key and WEBHOOK_SECRET the server runs in setup mode ([github-app.md](github-app.md#registering-the-app-setup-mode)) and writes the new credentials to `.env` (mode 0600)" },
  PRIVATE_KEY: { meaning: "the App's private key (PEM; PKCS#1 as GitHub hands it out, or PKCS#8; one line with `\\n` is accepted). A key that parses but fails a test signature stops start-up" },
  PRIVATE_KEY_PATH: { meaning: "a file holding the key, instead of PRIVATE_KEY (not on Workers)" },
  WEBHOOK_SECRET: { meaning: "the App's webhook secret; every delivery's `x-hub-signature-256` is checked with it" },
  PORT: { default: "3000", meaning: "the HTTP port" },
  HOST: { default: "0.0.0.0 (127.0.0.1 in setup mode)", meaning: "the address to listen on" },
  LOG_LEVEL: { default: "info", meaning: "trace, debug, info, warn, error, fatal or silent" },
  LOG_FORMAT: { default: "pretty on a terminal, json when piped", meaning: "`pretty` (one line per event) or `json` (pino's JSON lines). Either way secrets, signatures, cookies and one-time codes are written as `[Redacted]`" },
  WEBHOOK_PROXY_URL: { meaning: "a smee.io channel that forwards GitHub's webhooks to this server (development); in setup mode, the webhook URL the App is registered with" },
  GHE_HOST: { meaning: "GitHub Enterprise Server (or a proxy or test double): the API is `GHE_PROTOCOL://GHE_HOST/api/v3`, OAuth and links use the same host" },
  GHE_PROTOCOL: { default: "https", meaning: "`http` or `https`, with GHE_HOST" },
  WEBHOOK_PATH: { default: "/api/github/webhooks", meaning: "where GitHub posts webhooks" },
  HCP_DATA_DIR: { default: ".hcp-bot-data", meaning: "the SQLite store (`hcp-bot.sqlite`: claims, smoke requests, audit log, jobs) on Node; the Deno KV file or the Durable Object's state on the edge" },
  HCP_BOT_LOGIN: { meaning: "the bot's login (`slug[bot]`); saves one API call at start" },
  NODE_ENV: { meaning: "`production` requires the App's credentials (no setup page)" },
  SLACK_SIGNING_SECRET: { meaning: "the Slack app's signing secret (Basic Information). Slack is on only with this and SLACK_BOT_TOKEN" },
  SLACK_BOT_TOKEN: { meaning: "the Slack app's Bot User OAuth Token (`xoxb-…`)" },
  SLACK_TEAM_ID: { meaning: "the workspace (T…) whose bare user ids `slack.users` maps when the repository's config names none" },
  SLACK_API_URL: { default: "https://slack.com/api/", meaning: "the Slack Web API base URL (a proxy or a test double)" },
  REDIS_URL: { default: "unset: SQLite in HCP_DATA_DIR", meaning: "`redis://[:password@]host:port[/db]` or `rediss://`: the shared store of two or more replicas ([replicas.md](replicas.md))" },
  HCP_REDIS_PREFIX: { default: "hcp:", meaning: "the Redis keys' prefix, so bots can share a Redis" },
  HCP_AUDIT_MAXLEN: { default: "100000", meaning: "about how many records the Redis audit stream keeps" },
  HCP_DRAIN_SECONDS: { default: "20", meaning: "on SIGTERM, how long running jobs may finish before they are handed back" },
  HCP_GITHUB_WAIT_HORIZON_SECONDS: { default: "3600 on Node, 600 on Workers and Deno", meaning: "the most one GitHub request waits in all before it gives up ([the retry horizon](github-app.md#when-github-misbehaves-the-retry-horizon))" },
  HCP_GITHUB_SECONDARY_WAIT_SECONDS: { default: "60", meaning: "the first wait on a secondary rate limit that names no time (doubled each time); only tests should lower it" },
  HCP_ANALYSIS_THREADS: { default: "1", meaning: "Node: worker threads that run the analysis of reviews, pre-flight checks and `/hcp check`, so the thread that answers webhooks never waits behind it; `0` runs it on that thread" },
  HCP_SMOKE_MAX_ACTIVE: { meaning: "the operator's cap on smoke runs queued or running across every installation" },
  HCP_HEALTH_TOKEN: { meaning: "16+ characters: `/healthz` shows its details (version, store, Slack, installed workflow versions) only with this bearer token" },
  HCP_METRICS_TOKEN: { meaning: "16+ characters: turns on `/metrics` (Node), readable only with this bearer token; unset, `/metrics` answers 404" },
  HCP_RUNS_ACCESS: { default: "off", meaning: "`off` (`/runs` answers 404) or `github` (sign in with GitHub; see [github-app.md](github-app.md#the-smoke-run-history-runs))" },
  GITHUB_CLIENT_ID: { meaning: "the GitHub App's OAuth client id, for `/runs` sign-in (setup mode writes it to `.env`)" },
  GITHUB_CLIENT_SECRET: { meaning: "the GitHub App's OAuth client secret, for `/runs` sign-in" },
  HCP_PUBLIC_URL: { default: "the request's host", meaning: "the server's public URL: in setup mode the App is registered with the webhook URL `HCP_PUBLIC_URL/api/github/webhooks`; the App's Callback URL must be `HCP_PUBLIC_URL/auth/callback`; findings link the bot's own rule pages, `HCP_PUBLIC_URL/docs/rules/HCP001`, unless HCP_DOCS_URL is set" },
  HCP_SESSION_SECRET: { default: "derived from the client secret", meaning: "32+ characters: the `/runs` session key (rotating the client secret signs everyone out otherwise)" },
};

/** Variables read outside the schema; each must still appear in the sources it is listed with (folders, so that moving a module does not matter). */
const OTHER_ENV: { group: string; where: string[]; vars: Record<string, EnvDoc> }[] = [
  {
    group: "jobs",
    where: ["src"],
    vars: {
      HCP_JOB_LEASE_SECONDS: { default: "120", meaning: "a job's lease, renewed every third of it while the job runs and before every write to GitHub; keep it well above GitHub's slowest answers" },
      HCP_JOB_RETRY_SECONDS: { default: "10", meaning: "the first retry's delay, doubled each time (5 runs at most)" },
      HCP_JOB_UNLEASED_SECONDS: { default: "60", meaning: "when a job nobody started is picked up" },
    },
  },
  {
    group: "CLI",
    where: ["src"],
    vars: {
      HCP_BOT_CACHE_DIR: { default: "$XDG_CACHE_HOME/hcp-bot, else ~/.cache/hcp-bot", meaning: "where `lint` keeps its V8 code cache and where python3 said megatron.bridge is installed (asked again after an hour or when a folder on Python's path changes); `off` or empty: none, python3 asked every time. Read only from a folder the user owns that others cannot write" },
      XDG_CACHE_HOME: { meaning: "the cache's parent folder when HCP_BOT_CACHE_DIR is unset" },
      MEGATRON_BRIDGE_DIR: { meaning: "a Megatron-Bridge checkout whose `megatron.bridge` package holds the base recipes of a user's training script (then PYTHONPATH, VIRTUAL_ENV, `python3 -c 'import megatron.bridge'`)" },
      HCP_BRIDGE_INDEX: { default: "the package's data/megatron-bridge-recipes.json", meaning: "another index of upstream recipes (`npm run index:bridge` writes one)" },
      HCP_DOCS_URL: { default: "HCP_PUBLIC_URL/docs/rules/, else package.json's homepage + /docs/rules/, else none", meaning: "the http(s) folder URL of the rule pages (`HCP001.md` ...): SARIF `helpUri`, the link under each PR comment, `url` in `rules`/`explain --format json`; a fork or an Enterprise mirror sets it" },
      NO_COLOR: { meaning: "any value: no colour (as `--no-color`)" },
      FORCE_COLOR: { meaning: "colour even when piped (`--color=never` still wins)" },
    },
  },
  {
    group: "smoke workflow (repository variable)",
    where: ["templates/hcp-smoke.yml"],
    vars: {
      HCP_BOT_SPEC: { default: "hcp-bot@<the version that rendered it>", meaning: "the exact package the GPU job installs (`name@1.2.3`; a tag or range is refused)" },
      HCP_BOT_INTEGRITY: { meaning: "`sha512-…` (`npm view hcp-bot@<version> dist.integrity`): the job installs only a tarball with this hash. Also read by `init-workflow`" },
      HCP_GPU: { meaning: "the GPU's name (H100, …) for the verdict's peak-throughput check" },
    },
  },
  {
    group: "tests",
    where: ["test/support"],
    vars: {
      CHROMIUM_PATH: { default: "/usr/bin/chromium", meaning: "the browser the web tests drive through playwright-core" },
      HCP_TEST_PATIENCE_MS: { default: "300000", meaning: "how long a hung test or hook may take before it is ended (test/support/patience.ts)" },
    },
  },
];

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function textUnder(path: string): string {
  const full = join(ROOT, path);
  try {
    return readFileSync(full, "utf8");
  } catch {
    return readdirSync(full, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"))
      .join("\n");
  }
}

/** The schema's names that have no meaning here, and the meanings whose names it lacks. */
export async function envProblems(names?: readonly string[]): Promise<string[]> {
  names ??= await envSchemaNames();
  const problems = names.filter((n) => !(n in SERVER_ENV)).map((n) => `${n} (the Env schema) has no line in scripts/docs/config.ts SERVER_ENV`);
  problems.push(...Object.keys(SERVER_ENV).filter((n) => !names.includes(n)).map((n) => `SERVER_ENV explains ${n}, which the Env schema no longer reads`));
  for (const g of OTHER_ENV) {
    const text = g.where.map(textUnder).join("\n");
    for (const n of Object.keys(g.vars)) if (!text.includes(n)) problems.push(`${n} is documented as read by ${g.where.join(", ")}, which never name it`);
  }
  return problems;
}

export async function envTable(): Promise<string> {
  const names = await envSchemaNames();
  const problems = await envProblems(names);
  if (problems.length > 0) throw new Error(`the environment table is out of step with the code:\n  ${problems.join("\n  ")}`);
  const row = (name: string, d: EnvDoc, group: string) => `| \`${name}\` | ${group} | ${d.default ? cell(d.default) : ""} | ${cell(d.meaning)} |`;
  return [
    "| variable | read by | default | meaning |",
    "|---|---|---|---|",
    ...names.map((n) => row(n, SERVER_ENV[n]!, "server")),
    ...OTHER_ENV.flatMap((g) => Object.entries(g.vars).map(([n, d]) => row(n, d, g.group))),
    "",
  ].join("\n");
}

/** What each key of `.github/hcp-bot.yml` means, by its dotted path. */
const REPO_KEYS: Record<string, string> = {
  paths: "globs (from the repository root) of the files the review reads; default: the linter's globs (`hcp-bot lint --help`)",
  "rules.select": "only these rules",
  "rules.ignore": "skip these rules (the CLI's `--ignore` adds to it)",
  "rules.severity": "a rule id → `error`, `warning` or `info`",
  "review.mode": "`comment`: a COMMENT review; `request-changes`: REQUEST_CHANGES on an error; `check-only`: no PR comments",
  "review.drafts": "drafts get `check-only` (the check run; the review comes with ready_for_review), `full` or `skip`",
  "review.max_inline_comments": "inline comments per review; the rest are listed in the summary",
  gpus_per_node: "GPUs in one NVLink domain where a recipe's name or hardware folder does not say (72 for NVL72; HCP018 and proposed sizes)",
  "smoke.workflow": "the smoke workflow's file in `.github/workflows` on the default branch",
  "smoke.runner_labels": "the self-hosted runner's labels (`init-workflow` renders them)",
  "smoke.recipe": "the recipe `/hcp smoke` runs without `recipe=`",
  "smoke.cp": "context_parallel_size without `cp=`",
  "smoke.sizes": "hierarchical sizes without `sizes=` (`null`: none)",
  "smoke.gpus": "GPUs of the smoke run (torchrun's `--nproc_per_node`)",
  "smoke.iters": "training iterations",
  "smoke.compare": "`none`, `p2p` or `a2a`: the A/B reference leg of `/hcp smoke` without `compare=`",
  "smoke.permission": "the least repository permission of the person who asks (`read`, `triage`, `write`, `maintain`, `admin`)",
  "smoke.require_copy_pr_bot": "fork PRs run only once copy-pr-bot's `pull-request/<N>` branch points at the pinned commit",
  "smoke.allowed_keys": "override keys allowed besides the built-in allowlist",
  "smoke.timeouts.queue_minutes": "a run still queued after this (no GPU runner online) is cancelled and ends `timed_out`",
  "smoke.timeouts.run_minutes": "the run's time limit (the job gets 5 minutes more to stop it and upload the log)",
  "smoke.quotas.per_user_per_day": "GPU runs a requester may start per day in this installation (an A/B run counts two)",
  "smoke.quotas.max_queued": "this repository's active runs at once",
  "smoke.container": "`{ image, options, credentials: { username, password } }`: run the job in a container; credentials are the NAMES of repository secrets",
  "smoke.launcher": "`uv` (`uv run python`) or `python` (the container's python)",
  "smoke.env": "extra variables for the job: allowlisted names only (`NCCL_*`, `NVTE_*`, `CUDA_*`, `TORCH_*`, …), never a secret",
  "slack.users": "Slack user id (or `TEAM/USER`) → GitHub login; unmapped users are refused",
  "slack.team_id": "the workspace whose bare user ids `users` maps",
  "slack.channels": "channel ids where commands are accepted; empty: any",
  "slack.notify_channel": "a channel that also hears about runs started on GitHub",
};

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

/** Leaf keys of the schema with their JSON Schema: a nested object is walked, a record is one key. */
function leaves(schema: JsonSchema, prefix = ""): [string, JsonSchema][] {
  const props = schema.properties ?? schema.anyOf?.find((s) => s.properties)?.properties;
  if (!props || (schema.type === "object" && prefix && typeof schema.additionalProperties === "object")) return [[prefix, schema]];
  // An optional object of its own keys (smoke.container) is one setting, as the YAML writes it.
  if (schema.anyOf) return [[prefix, schema]];
  return Object.entries(props).flatMap(([k, s]) => leaves(s, prefix ? `${prefix}.${k}` : k));
}

function typeOf(s: JsonSchema): string {
  if (s.anyOf) return s.anyOf.map(typeOf).join(" or ");
  if (s.enum) return s.enum.map((e) => `\`${String(e)}\``).join(" \\| ");
  if (s.type === "array") return `list of ${s.items ? typeOf(s.items) : "values"}`;
  if (s.type === "object") return "map";
  const range = s.type === "integer" && s.maximum !== undefined && s.maximum < 1e6 ? ` (${s.minimum ?? ""}–${s.maximum})` : "";
  return `${String(s.type ?? "value")}${range}`;
}

function defaultOf(s: JsonSchema): string {
  if (s.default === undefined) return "";
  const json = JSON.stringify(s.default);
  return json.length > 40 ? "see meaning" : `\`${json}\``;
}

/** The settings file's keys, dotted (`smoke.timeouts.run_minutes`), as the table lists them. */
export function repoKeys(): string[] {
  return leaves(z.toJSONSchema(RepoConfigSchema, { io: "input", unrepresentable: "any" }) as JsonSchema).map(([k]) => k);
}

export function repoKeyProblems(keys: readonly string[] = repoKeys()): string[] {
  return [
    ...keys.filter((k) => !(k in REPO_KEYS)).map((k) => `${k} (src/core/config) has no line in scripts/docs/config.ts REPO_KEYS`),
    ...Object.keys(REPO_KEYS).filter((k) => !keys.includes(k)).map((k) => `REPO_KEYS explains ${k}, which the repository-settings schema no longer has`),
  ];
}

export function repoTable(): string {
  const problems = repoKeyProblems();
  if (problems.length > 0) throw new Error(`the settings table is out of step with the schema:\n  ${problems.join("\n  ")}`);
  const schema = z.toJSONSchema(RepoConfigSchema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const rows = leaves(schema).map(([k, s]) => `| \`${k}\` | ${typeOf(s)} | ${defaultOf(s)} | ${cell(REPO_KEYS[k]!)} |`);
  return ["| key | type | default | meaning |", "|---|---|---|---|", ...rows, ""].join("\n");
}
