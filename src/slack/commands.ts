// What `/hcp` does in Slack once the request has been acknowledged: find the repository,
// map the Slack user to a GitHub login from the repository's (or the org's) config, and
// act through the smoke service (src/github/smoke/) with the same checks as a PR comment.
// Only github's types are imported: the service is handed in at construction.
import type { JobLease } from "../jobs/fence.ts";
import type { BotOctokit } from "../github/host.ts";
import type { Analyzer } from "../core/analyze/analyzer.ts";
import { compileGlobs } from "../core/analyze/classify.ts";
import { checkSource, parseSlackCommand, RUN_RECIPE, shellLine, type Command, type SmokeCommand } from "../core/commands/index.ts";
import { readRecipe } from "../core/commands/grammar.ts";
import { CONFIG_PATH, type RepoConfig, type SlackConfig } from "../core/config/repo-config.ts";
import type { Finding } from "../core/model/finding.ts";
import { dryRunMessage, findingsMessage, mrkdwn, refusedMessage, statusMessage, textMessage, type SlackMessage } from "../core/render/slack.ts";
import type { FoundRepository, NamedSmokeOutcome, RepoRef, SmokeService } from "../github/smoke/index.ts";
import { roleRank } from "../core/smoke/policy.ts";
import type { Store } from "../store/types.ts";
import type { DeferredCommand } from "./endpoint.ts";
import type { SlashCommand } from "./payload.ts";
import type { SlackRuns } from "./runs.ts";
import type { SlackWebApi } from "./web-api.ts";
import type { Log } from "../shared/log.ts";

/** What Slack's commands log through: the shared Log port (src/shared/log.ts). */
export type SlackLog = Pick<Log, "info" | "warn">;

export interface SlackCommandDeps {
  web: SlackWebApi;
  store: Store;
  /** The smoke service, which also finds a named repository and reads settings and roles on GitHub. */
  smoke: SmokeService;
  analyze: Analyzer;
  runs: SlackRuns;
  log: SlackLog;
  /** The operator's workspace (SLACK_TEAM_ID): bare user ids of `slack.users` count there when the config names none. */
  teamId?: string;
}

/** A command that was acknowledged and now runs; `deliveryId` is stable across Slack retries. */
export interface SlackWork {
  payload: SlashCommand;
  deliveryId: string;
}

type Found = FoundRepository;
interface Access {
  found: Found;
  config: RepoConfig;
  login: string;
}

/** The repository's `slack:` section, with each empty key taken from the org's `.github` repository. */
export async function effectiveSlackConfig(smoke: SmokeService, found: Found, config: RepoConfig): Promise<SlackConfig> {
  const own = config.slack;
  if (Object.keys(own.users).length > 0 && own.channels.length > 0 && own.notify_channel && own.team_id) return own;
  const org = await orgConfig(smoke, found.octokit, found.ref.owner);
  if (!org) return own;
  return {
    users: Object.keys(own.users).length > 0 ? own.users : org.slack.users,
    channels: own.channels.length > 0 ? own.channels : org.slack.channels,
    notify_channel: own.notify_channel ?? org.slack.notify_channel,
    team_id: own.team_id ?? org.slack.team_id,
  };
}

/** `OWNER/.github`'s `.github/hcp-bot.yml` on its default branch; undefined when absent, unreadable or invalid. */
async function orgConfig(smoke: SmokeService, octokit: BotOctokit, owner: string): Promise<RepoConfig | undefined> {
  try {
    const { data } = await octokit.rest.repos.get({ owner, repo: ".github" });
    const result = await smoke.readConfig(octokit, { owner, repo: ".github", defaultBranch: data.default_branch });
    return result.ok && result.source === "file" ? result.config : undefined;
  } catch {
    return undefined; // not there, or the installation cannot see it
  }
}

const slackUserOf = (p: SlashCommand) => `${p.team_id}:${p.user_id}`;

/** Answers and the checks every command that names a repository passes first. */
function slackAccess(deps: SlackCommandDeps) {
  async function reply(work: SlackWork, message: SlackMessage): Promise<void> {
    try {
      await deps.web.respond(work.payload.response_url, message);
    } catch (error) {
      deps.log.warn({ err: error, delivery: work.deliveryId }, "answering a Slack command through response_url failed");
    }
  }

  async function deny(work: SlackWork, repo: string | null, reason: string, text: string): Promise<undefined> {
    await deps.store.audit({ action: "slack", decision: "denied", reason, slackUser: slackUserOf(work.payload), repo, deliveryId: work.deliveryId });
    await reply(work, textMessage(text));
    return undefined;
  }

  /** Installed, a valid config, an allowlisted channel, a mapped user: or a reply saying which is missing. */
  async function access(work: SlackWork, owner: string, repo: string): Promise<Access | undefined> {
    const full = `${owner}/${repo}`;
    const found = await deps.smoke.repository(owner, repo);
    if (!found) return deny(work, full, "not installed", `hcp-bot is not installed on ${mrkdwn(full)} (or the repository does not exist).`);
    if (!found.config.ok) return deny(work, full, "bad config", `hcp-bot cannot act on ${mrkdwn(full)}: ${mrkdwn(found.config.problem)}`);
    const config = found.config.config;
    const slack = await effectiveSlackConfig(deps.smoke, found, config);
    const { channel_id: channel, user_id: user } = work.payload;
    if (slack.channels.length > 0 && !slack.channels.includes(channel)) {
      const where = slack.channels.map((c) => `<#${c}>`).join(", ");
      return deny(work, full, `channel ${channel} not allowlisted`, `/hcp commands for ${mrkdwn(full)} are accepted only in ${where} (slack.channels in ${CONFIG_PATH}).`);
    }
    // A bare user id means a user of the configured workspace only; TEAM/USER names its own.
    const team = work.payload.team_id;
    const login = slack.users[`${team}/${user}`] ?? ((slack.team_id ?? deps.teamId) === team ? slack.users[user] : undefined);
    if (!login) {
      return deny(
        work,
        full,
        "unmapped slack user",
        `Your Slack account is not linked to a GitHub login for ${mrkdwn(full)}. Ask a maintainer to add \`${team}/${user}: YOUR-GITHUB-LOGIN\` under \`slack.users\` in \`${CONFIG_PATH}\` on the default branch of ${mrkdwn(full)} (or in the \`${mrkdwn(owner)}/.github\` repository for the whole org). Your Slack user id is \`${user}\` in workspace \`${team}\`.`,
      );
    }
    return { found, config, login };
  }

  async function readAccess(work: SlackWork, a: Access, action: string): Promise<boolean> {
    const role = await deps.smoke.role(a.found.octokit, a.found.ref, a.login);
    if (role !== undefined && roleRank(role) >= roleRank("read")) return true;
    await deny(work, `${a.found.ref.owner}/${a.found.ref.repo}`, `role ${role ?? "unknown"}`, `${mrkdwn(a.login)} (your linked GitHub login) cannot read ${mrkdwn(`${a.found.ref.owner}/${a.found.ref.repo}`)}, so hcp-bot will not ${action} it.`);
    return false;
  }

  return { reply, deny, access, readAccess };
}

export function createSlackCommands(deps: SlackCommandDeps) {
  const { reply, access, readAccess } = slackAccess(deps);

  /** Parses again with the repository's extra override keys (the ack only knew the built-in ones). */
  function reparse(work: SlackWork, config: RepoConfig): Command | string {
    const parsed = parseSlackCommand(work.payload.text, { allowedKeys: config.smoke.allowed_keys });
    return parsed.ok ? parsed.command : parsed.error;
  }

  async function smoke(work: SlackWork, target: { owner: string; repo: string; pr: number }, lease: JobLease | undefined): Promise<void> {
    const a = await access(work, target.owner, target.repo);
    if (!a) return;
    const command = reparse(work, a.config);
    if (typeof command === "string") return reply(work, textMessage(`:warning: ${mrkdwn(command)}`));
    if (command.kind !== "smoke") return;
    const requester = { login: a.login, isBot: false, slackUser: slackUserOf(work.payload) };
    deps.runs.expect(work.deliveryId, { channel: work.payload.channel_id, slackUser: work.payload.user_id });
    try {
      const outcome = await deps.smoke.requestNamed({ ...target, requester, command: command as SmokeCommand, origin: { source: "slack", deliveryId: work.deliveryId }, ...(lease ? { lease } : {}) });
      const message = await smokeOutcomeMessage(outcome, { ...target, login: a.login }, (id) => deps.runs.posted(id));
      if (message) await reply(work, message);
    } finally {
      deps.runs.forget(work.deliveryId);
    }
  }

  async function status(work: SlackWork, target: { owner: string; repo: string; pr: number }): Promise<void> {
    const a = await access(work, target.owner, target.repo);
    if (!a || !(await readAccess(work, a, "show the status of"))) return;
    const s = await deps.smoke.statusNamed(target.owner, target.repo, target.pr);
    if (!s) return reply(work, textMessage(`hcp-bot is not installed on ${mrkdwn(`${target.owner}/${target.repo}`)}.`));
    await reply(work, statusMessage({ repo: `${target.owner}/${target.repo}`, pr: target.pr, ...(s.headSha ? { headSha: s.headSha } : {}), ...(s.review ? { review: s.review } : {}), ...(s.smoke ? { smoke: s.smoke } : {}), ...(s.workflow ? { workflow: s.workflow } : {}) }));
  }

  async function cancel(work: SlackWork, target: { owner: string; repo: string; pr: number }, lease: JobLease | undefined): Promise<void> {
    const a = await access(work, target.owner, target.repo);
    if (!a) return;
    const text = await deps.smoke.cancelNamed({ ...target, requester: { login: a.login, isBot: false, slackUser: slackUserOf(work.payload) }, ...(lease ? { lease } : {}) });
    if (text) await reply(work, textMessage(mrkdwn(text))); // empty: a refusal past REFUSAL_LIMITS
  }

  async function check(work: SlackWork): Promise<void> {
    const spec = splitCheckText(work.payload.text);
    if (typeof spec === "string") return reply(work, textMessage(`:warning: ${mrkdwn(spec)}`));
    let config: RepoConfig | undefined;
    let recipeFiles: { path: string; text: string }[] = [];
    if (spec.repo) {
      const a = await access(work, spec.repo.owner, spec.repo.repo);
      if (!a || !(await readAccess(work, a, "read recipes of"))) return;
      config = a.config;
      if (spec.recipe) recipeFiles = await readRecipeModules(a.found.octokit, a.found.ref);
    }
    const parsed = parseSlackCommand(`check ${spec.rest}`, { allowedKeys: config?.smoke.allowed_keys ?? [] });
    if (!parsed.ok) return reply(work, textMessage(`:warning: ${mrkdwn(parsed.error)}`));
    if (parsed.command.kind !== "check") return;
    const source = checkSource(parsed.command.input);
    if (!source) return;
    if (spec.recipe && parsed.command.input.form === "overrides") {
      // Named recipe: the overrides are applied to it, as run_recipe.py would.
      source.text = `${shellLine(["python", RUN_RECIPE, "--recipe", spec.recipe, ...parsed.command.input.overrides.map((o) => `${o.key}=${o.text}`)])}\n`;
    }
    const report = await deps.analyze([...recipeFiles, source], { gpusPerNode: config?.gpus_per_node ?? 8 });
    const launch = report.units.filter((u) => u.location.file === source.path).map((u) => u.id);
    const findings: Finding[] = report.findings.filter((f) => launch.includes(f.unitId));
    const what = spec.recipe && spec.repo ? `that configuration (recipe ${spec.recipe} of ${spec.repo.owner}/${spec.repo.repo})` : "that configuration";
    await reply(work, findingsMessage(findings, what));
  }

  /** Runs the acknowledged command; every failure ends as a reply to the person, never silence. */
  return async function run(work: SlackWork, command: DeferredCommand, lease?: JobLease): Promise<void> {
    try {
      switch (command.kind) {
        case "deferred":
          return command.sub === "smoke" ? await smoke(work, command.target, lease) : await check(work);
        case "smoke":
          return await smoke(work, command.target!, lease);
        case "status":
          return await status(work, command.target!);
        case "cancel":
          return await cancel(work, command.target!, lease);
        case "check":
          return await check(work);
        case "help":
        case "advise":
          return;
      }
    } catch (error) {
      deps.log.warn({ err: error, delivery: work.deliveryId }, "a Slack command failed");
      await reply(work, textMessage(`:octagonal_sign: hcp-bot could not finish that command: ${mrkdwn((error as Error).message ?? String(error)).slice(0, 500)}`));
    }
  };
}

/** The reply to a `/hcp smoke` outcome; undefined: none (a refusal past REFUSAL_LIMITS). */
async function smokeOutcomeMessage(outcome: NamedSmokeOutcome, target: { owner: string; repo: string; pr: number; login: string }, posted: (requestId: string) => Promise<boolean>): Promise<SlackMessage | undefined> {
  const repoFull = `${target.owner}/${target.repo}`;
  switch (outcome.kind) {
    case "not-installed":
      return textMessage(`hcp-bot is not installed on ${mrkdwn(repoFull)}.`);
    case "bad-config":
      return textMessage(`hcp-bot cannot act on ${mrkdwn(repoFull)}: ${mrkdwn(outcome.reason)}`);
    case "refused":
      // silent: past REFUSAL_LIMITS (src/github/refusals.ts), neither answered nor recorded.
      return outcome.silent ? undefined : refusedMessage(outcome.reason, outcome.findings);
    case "failed":
      return textMessage(`:octagonal_sign: The smoke run could not start: ${mrkdwn(outcome.reason)}`);
    case "dry-run":
      return dryRunMessage({ requestId: "dry-run", requester: target.login, sha: outcome.sha, plan: outcome.plan, repo: repoFull, pr: target.pr }, outcome.plan.launchLine());
    case "dispatched":
      return textMessage(
        (await posted(outcome.request.id))
          ? `:rocket: Smoke run \`${outcome.request.id}\` dispatched on ${mrkdwn(repoFull)}#${target.pr}; this channel's message follows it.`
          : `:rocket: Smoke run \`${outcome.request.id}\` dispatched on ${mrkdwn(repoFull)}#${target.pr}, but hcp-bot could not post in this channel (invite it with \`/invite @hcp-bot\`). Follow it with \`/hcp status ${mrkdwn(repoFull)}#${target.pr}\`.`,
      );
  }
}

export interface CheckSpec {
  repo?: { owner: string; repo: string };
  recipe?: string;
  /** The launch line or KEY=VALUE words, for the shared grammar. */
  rest: string;
}

/**
 * `/hcp check [OWNER/REPO] [recipe=NAME] LAUNCH LINE | KEY=VALUE ...`: the Slack-only
 * prefix that names a repository and one of its recipes; the rest goes to the grammar.
 */
export function splitCheckText(text: string): CheckSpec | string {
  let rest = text.trim().replace(/^check\b/i, "").trim();
  const spec: CheckSpec = { rest: "" };
  const repo = /^([A-Za-z0-9-]{1,39})\/([A-Za-z0-9._-]{1,100})(?=\s|$)/.exec(rest);
  if (repo) {
    spec.repo = { owner: repo[1]!, repo: repo[2]! };
    rest = rest.slice(repo[0].length).trim();
  }
  const recipe = /(?:^|\s)recipe=(\S*)/.exec(rest);
  if (recipe) {
    const name = readRecipe(recipe[1] ?? "");
    if (!name.ok) return name.error;
    if (!spec.repo) return "recipe=NAME needs the repository that holds it: /hcp check OWNER/REPO recipe=NAME KEY=VALUE ...";
    spec.recipe = name.value;
    rest = `${rest.slice(0, recipe.index)} ${rest.slice(recipe.index + recipe[0].length)}`.trim();
  }
  spec.rest = rest;
  return spec;
}

// Recipe modules on the default branch (the same globs as the smoke pre-flight).
const RECIPE_GLOBS = ["src/megatron/bridge/recipes/**/*.py", "src/megatron/bridge/perf_recipes/**/*.py", "src/megatron/bridge/diffusion/recipes/**/*.py"];

async function readRecipeModules(octokit: BotOctokit, r: RepoRef): Promise<{ path: string; text: string }[]> {
  const { data: tree } = await octokit.rest.git.getTree({ owner: r.owner, repo: r.repo, tree_sha: r.defaultBranch, recursive: "true" });
  const inRecipes = compileGlobs(RECIPE_GLOBS);
  const paths = (tree.tree as { path?: string; type?: string }[]).filter((e) => e.type === "blob" && e.path && inRecipes(e.path)).map((e) => e.path!);
  const files: { path: string; text: string }[] = [];
  for (let i = 0; i < paths.length; i += 250) {
    const chunk = paths.slice(i, i + 250);
    const fields = chunk.map((p, j) => `f${j}: object(expression: ${JSON.stringify(`${r.defaultBranch}:${p}`)}) { ... on Blob { text isBinary } }`);
    const result = await octokit.graphql<{ repository: Record<string, { text: string | null; isBinary: boolean } | null> }>(
      `query { repository(owner: ${JSON.stringify(r.owner)}, name: ${JSON.stringify(r.repo)}) { ${fields.join(" ")} } }`,
    );
    chunk.forEach((p, j) => {
      const blob = result.repository[`f${j}`];
      if (blob?.text && !blob.isBinary) files.push({ path: p, text: blob.text });
    });
  }
  return files;
}
