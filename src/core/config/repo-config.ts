// `.github/hcp-bot.yml` (or pyproject.toml's `[tool.hcp-bot]`): the repository's settings. The
// App reads them from the default branch only (a pull request cannot loosen its own review or
// grant itself GPU time); the CLI from the file nearest above each linted file. One schema for both.
import { parse as parseToml } from "smol-toml";
import { parseDocument } from "yaml";
import * as z from "zod";
import { DEFAULT_GLOBS } from "../analyze/classify.ts";
import { CompareModeSchema } from "../ab/mode.ts";
import { smokeRuntimeFields } from "./smoke-runtime.ts";

export const CONFIG_PATH = ".github/hcp-bot.yml";

const RuleId = z.string().regex(/^HCP\d{3}$/, "a rule id such as HCP001");
const Severity = z.enum(["error", "warning", "info"]);

export const PERMISSION_LEVELS = ["read", "triage", "write", "maintain", "admin"] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];

/** `/hcp smoke`: what runs, where, and who may spend GPU time on it. */
export const SmokeConfigSchema = z
  .object({
    /** Workflow file in .github/workflows on the default branch (templates/hcp-smoke.yml). */
    workflow: z.string().regex(/^[\w.-]+\.ya?ml$/, "a workflow file name such as hcp-smoke.yml").default("hcp-smoke.yml"),
    runner_labels: z.array(z.string().min(1)).min(1).default(["self-hosted", "linux", "gpu-4"]),
    recipe: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a recipe function name").default("llama32_1b_pretrain_config"),
    cp: z.number().int().min(1).default(4),
    sizes: z.array(z.number().int().min(1)).length(2).nullable().default([2, 2]),
    gpus: z.number().int().min(1).max(8).default(4),
    iters: z.number().int().min(1).max(50).default(2),
    /** `/hcp smoke` without compare=: none, or a reference leg (p2p, a2a) after the HCP leg in the same job. */
    compare: CompareModeSchema.default("none"),
    /** Least repository permission of the person who asks. */
    permission: z.enum(PERMISSION_LEVELS).default("write"),
    /** Fork PRs run only once copy-pr-bot's pull-request/<N> branch points at the pinned SHA. */
    require_copy_pr_bot: z.boolean().default(false),
    /** Override keys allowed besides the built-in allowlist. */
    allowed_keys: z.array(z.string().regex(/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+$/)).default([]),
    timeouts: z
      .object({
        /** A run still queued after this (no GPU runner online) ends timed_out. */
        queue_minutes: z.number().int().min(1).max(24 * 60).default(30),
        run_minutes: z.number().int().min(1).max(24 * 60).default(30),
      })
      .strict()
      .default({ queue_minutes: 30, run_minutes: 30 }),
    quotas: z
      .object({
        per_user_per_day: z.number().int().min(0).default(10),
        max_queued: z.number().int().min(1).default(4),
      })
      .strict()
      .default({ per_user_per_day: 10, max_queued: 4 }),
    /** container, launcher, env: where and how the job runs (smoke-runtime.ts; rendered by init-workflow). */
    ...smokeRuntimeFields,
  })
  .strict();
export type SmokeConfig = z.infer<typeof SmokeConfigSchema>;

/**
 * `slack:`: who may use `/hcp` from Slack and where. A Slack user id maps to the GitHub
 * login whose repository permission is checked, exactly as for a PR comment.
 */
export const SlackConfigSchema = z
  .object({
    /**
     * Slack user -> GitHub login. A key `TEAM/USER` (T012AB/U012ABCDEF) names the workspace; a
     * bare user id (U…/W…) counts only in the workspace `team_id` (or the operator's
     * SLACK_TEAM_ID) names, so a signed request from another workspace cannot act as a mapped
     * user. Unmapped users are refused.
     */
    users: z.record(z.string().regex(/^(?:[TE][A-Z0-9]{2,}\/)?[UW][A-Z0-9]{2,}$/, "a Slack user id such as U012ABCDEF, or TEAM/USER such as T012AB/U012ABCDEF"), z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, "a GitHub login")).default({}),
    /** The Slack workspace (T…) whose bare user ids `users` maps. */
    team_id: z.string().regex(/^[TE][A-Z0-9]{2,}$/, "a Slack team id such as T012ABCDEF").nullable().default(null),
    /** Channel ids (C…/G…) where commands are accepted; empty: any channel. */
    channels: z.array(z.string().regex(/^[CGD][A-Z0-9]{2,}$/, "a Slack channel id such as C012ABCDEF")).default([]),
    /** Channel id that also hears about smoke runs started on GitHub. */
    notify_channel: z.string().regex(/^[CG][A-Z0-9]{2,}$/, "a Slack channel id such as C012ABCDEF").nullable().default(null),
  })
  .strict();
export type SlackConfig = z.infer<typeof SlackConfigSchema>;

export const RepoConfigSchema = z
  .object({
    /** Globs (relative to the repository root) of the files the review reads. */
    paths: z.array(z.string().min(1)).min(1).default([...DEFAULT_GLOBS]),
    rules: z
      .object({
        select: z.array(RuleId).optional(),
        ignore: z.array(RuleId).default([]),
        severity: z.record(RuleId, Severity).default({}),
      })
      .strict()
      .default({ ignore: [], severity: {} }),
    review: z
      .object({
        /** comment: a COMMENT review; request-changes: REQUEST_CHANGES when an error is found; check-only: no PR comments. */
        mode: z.enum(["comment", "request-changes", "check-only"]).default("comment"),
        /** Drafts get the check run only by default; the full review comes with ready_for_review. */
        drafts: z.enum(["check-only", "full", "skip"]).default("check-only"),
        max_inline_comments: z.number().int().min(0).max(50).default(30),
      })
      .strict()
      .default({ mode: "comment", drafts: "check-only", max_inline_comments: 30 }),
    /** GPUs in one NVLink domain (HCP018). */
    gpus_per_node: z.number().int().positive().default(8),
    smoke: SmokeConfigSchema.default(() => SmokeConfigSchema.parse({})),
    slack: SlackConfigSchema.default(() => SlackConfigSchema.parse({})),
  })
  .strict();

export type RepoConfig = z.infer<typeof RepoConfigSchema>;

export type ConfigResult = { ok: true; config: RepoConfig; source: "file" | "default" } | { ok: false; problem: string };

export function defaultRepoConfig(): RepoConfig {
  return RepoConfigSchema.parse({});
}

/** Parses the file's text; every problem is a sentence naming the place and the fix. */
export function parseRepoConfig(text: string | undefined, name: string = CONFIG_PATH): ConfigResult {
  if (text === undefined) return { ok: true, config: defaultRepoConfig(), source: "default" };
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const where = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : "";
    return { ok: false, problem: `${name} is not valid YAML${where}: ${e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}` };
  }
  return parseRepoConfigData(doc.toJS() ?? {}, name);
}

/** The table `[tool.hcp-bot]` of a pyproject.toml holds the same settings as `.github/hcp-bot.yml`. */
export const PYPROJECT_TABLE = "tool.hcp-bot";

/**
 * A pyproject.toml's `[tool.hcp-bot]` table, read with the schema of `.github/hcp-bot.yml`;
 * undefined when the file has no such table (it configures something else, so the search goes on).
 */
export function parsePyprojectConfig(text: string, name = "pyproject.toml"): ConfigResult | undefined {
  let data: unknown;
  try {
    data = parseToml(text);
  } catch (error) {
    return { ok: false, problem: `${name} is not valid TOML: ${(error as Error).message.split("\n")[0]}` };
  }
  const tool = (data as { tool?: Record<string, unknown> }).tool;
  const table = tool && typeof tool === "object" ? tool["hcp-bot"] : undefined;
  if (table === undefined) return undefined;
  return parseRepoConfigData(table, `${name} [${PYPROJECT_TABLE}]`);
}

/** Settings already read from YAML or TOML, checked against the schema. */
export function parseRepoConfigData(data: unknown, name: string = CONFIG_PATH): ConfigResult {
  const parsed = RepoConfigSchema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(top level)"}: ${i.message}`);
    return { ok: false, problem: `${name} has ${issues.length} problem(s): ${issues.join("; ")}` };
  }
  return { ok: true, config: parsed.data, source: "file" };
}
