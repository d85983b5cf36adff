// The Slack app end to end: signed slash commands to the real server (the same port as the
// GitHub webhooks), a fake GitHub validated against the OpenAPI description, a fake Slack
// Web API that checks every payload against Slack's limits, and a smoke run followed from
// `/hcp smoke` to the verdict in the channel message.
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WORKFLOW_TEMPLATE_VERSION } from "../../src/core/smoke/workflow.ts";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { postWholeThenRead } from "../support/raw-http.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { startFakeSlack, type FakeSlack } from "../support/fake-slack/index.ts";
import { appKeys, botSettings, completeSmokeRun, deliverAndSettle, PASSING_RUN_LOG, runnerFacts, SMOKE_RECIPE as RECIPE, smokeWorkflowFile, trainingLog } from "../support/bot-harness.ts";
import { slashCommandForm } from "../support/slack-form.ts";

const SECRET = "gh-secret";
const SLACK_SECRET = "slack-signing-secret";
const OWNER = "acme";
const REPO = "mb";
const OTHER = "other";
const INSTALLATION = 9;
const { publicKey } = appKeys;

const RECIPE_FILE = "src/megatron/bridge/recipes/llama/llama3.py";
const CONFIG = `smoke:
  quotas: {per_user_per_day: 1000, max_queued: 1000}
slack:
  users: {U0MAINT: maint, U0READER: reader, U0ADMIN: admin1}
  channels: [C0SMOKE, C0PERF]
  notify_channel: C0NOTIFY
`;
// The org-wide mapping, used by repositories whose own file has no slack.users.
const ORG_CONFIG = "slack:\n  users: {U0ORG: maint}\n";

const PASSING_LOG = trainingLog(PASSING_RUN_LOG);

let gh: FakeGitHub;
let slack: FakeSlack;
let bot: RunningServer;
let dataDir: string;
let prCounter = 300;
let port = 0;

/** Probot reads PORT=0 as "unset" and binds 3000; a port the OS says is free avoids clashes with other suites. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port: p } = s.address() as { port: number };
      s.close(() => resolve(p));
    });
  });
}

const HEALTH_TOKEN = "health-token-0123456789";
const health = async (url: string) => (await (await fetch(`${url}/healthz`, { headers: { authorization: `Bearer ${HEALTH_TOKEN}` } })).json()) as { slack: string; github: string };

// One port for the whole file, so a restarted server keeps the URL Slack would post to.
const settings = (extra: Record<string, string> = {}) =>
  botSettings({
    githubUrl: gh.url,
    appId: 77,
    secret: SECRET,
    dataDir,
    extra: { PORT: String(port), SLACK_SIGNING_SECRET: SLACK_SECRET, SLACK_BOT_TOKEN: "xoxb-test", SLACK_API_URL: slack.apiUrl, SLACK_TEAM_ID: "T0TEAM", HCP_HEALTH_TOKEN: HEALTH_TOKEN, ...extra },
  });

const startOptions = { sweepIntervalMs: 0, smoke: { runLookup: { attempts: 2, delayMs: 10 } } };

function sign(body: string, ts: number, secret = SLACK_SECRET): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex")}`;
}

interface CommandOptions {
  user?: string;
  /** The workspace the signed request comes from (default T0TEAM, the configured one). */
  team?: string;
  channel?: string;
  triggerId?: string;
  responseId?: string;
  headers?: Record<string, string>;
  /** Seconds added to now for the signed timestamp. */
  skew?: number;
  secret?: string;
  rawBody?: string;
  contentType?: string;
}

function formBody(text: string, o: CommandOptions, responseId: string): string {
  return slashCommandForm(text, {
    channel_id: o.channel ?? "C0SMOKE",
    user_id: o.user ?? "U0MAINT",
    team_id: o.team ?? "T0TEAM",
    response_url: slack.responseUrl(responseId),
    trigger_id: o.triggerId ?? `${Date.now()}.${Math.floor(Math.random() * 1e9)}.${randomUUID().replace(/-/g, "")}`,
  });
}

/** Posts a signed slash command; waits until the work after the ack is done. */
async function command(text: string, o: CommandOptions = {}) {
  const responseId = o.responseId ?? randomUUID();
  const body = o.rawBody ?? formBody(text, o, responseId);
  const ts = Math.floor(Date.now() / 1000) + (o.skew ?? 0);
  const started = performance.now();
  const res = await fetch(`${bot.url}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": o.contentType ?? "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": sign(body, ts, o.secret),
      ...o.headers,
    },
    body,
  });
  const ackMs = performance.now() - started;
  const raw = await res.text();
  await bot.idle();
  const json = raw.startsWith("{") ? (JSON.parse(raw) as { response_type?: string; text?: string; blocks?: unknown[]; error?: string }) : {};
  return { status: res.status, json, ackMs, responseId, body, replies: () => slack.responses(responseId), replyText: () => slack.responses(responseId).map((r) => JSON.stringify(r)).join("\n") };
}

const deliver = (event: string, payload: object) => deliverAndSettle(bot, SECRET, event, payload);

const repository = () => ({ id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main" });

function runPayload(action: string, run: { id: number; status: string; conclusion: string | null; display_title: string }) {
  return {
    action,
    installation: { id: INSTALLATION },
    repository: repository(),
    sender: { login: "github-actions[bot]", id: 41898282, type: "Bot" },
    workflow_run: { ...run, name: "hcp-smoke", html_url: `${gh.url}/${OWNER}/${REPO}/actions/runs/${run.id}` },
  };
}

function openPr(repo = REPO): { number: number; sha: string } {
  const number = ++prCounter;
  const sha = number.toString(16).padStart(40, "d");
  gh.addCommit({ owner: OWNER, repo, branch: `pr-${number}`, base: "main", sha, files: { [RECIPE_FILE]: RECIPE } });
  gh.addPullRequest({ owner: OWNER, repo, number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: RECIPE_FILE, contents: RECIPE, status: "modified" }] });
  return { number, sha };
}


const allText = (v: unknown) => JSON.stringify(v);

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 77, appSlug: "hcp-bot", appPublicKey: publicKey });
  slack = await startFakeSlack({ token: "xoxb-test" });
  gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
  gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: RECIPE, ".github/hcp-bot.yml": CONFIG } } });
  gh.addRepo({ owner: OWNER, repo: OTHER, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: RECIPE } } });
  gh.addRepo({ owner: OWNER, repo: ".github", defaultBranch: "main", installationId: INSTALLATION, files: { main: { ".github/hcp-bot.yml": ORG_CONFIG } } });
  gh.addWorkflow({ owner: OWNER, repo: REPO, path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke", content: smokeWorkflowFile() });
  gh.setPermission("maint", "write");
  gh.setPermission("admin1", "admin");
  gh.setPermission("reader", "read");
  gh.setPermission("author", "write");
  dataDir = mkdtempSync(join(tmpdir(), "hcp-slack-data-"));
  port = await freePort();
  bot = await startServer(settings(), startOptions);
});

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
  await slack?.close();
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
  expect(slack.violations).toEqual([]);
});

describe("the Slack endpoint", () => {
  it("is on the GitHub App's server and /healthz says Slack is on", async () => {
    const healthBody = await health(bot.url);
    expect(healthBody.slack).toBe("on");
  });

  it("answers /hcp help at once, ephemerally, with the Slack grammar", async () => {
    const r = await command("help");
    expect(r.status).toBe(200);
    expect(r.json.response_type).toBe("ephemeral");
    expect(allText(r.json.blocks)).toContain("/hcp smoke OWNER/REPO#PR");
    expect(r.ackMs).toBeLessThan(3000); // Slack's own limit for the ack
  });

  it("answers /hcp advise from any user (mapped or not) at most 10 times an hour each", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await command("advise cp=8 nodes=1024 gpus_per_node=64", { user: "U0STRANGER" });
      expect(r.json.text).toMatch(/^Recommended: /);
    }
    const past = await command("advise cp=2", { user: "U0STRANGER" });
    expect(past.status).toBe(200);
    expect(past.json.text).toMatch(/answered 10 `\/hcp advise` commands of yours in the last hour; ask again later/);
    expect(past.replies()).toEqual([]);
    // Another user has a limit of their own.
    expect((await command("advise cp=2", { user: "U0OTHER" })).json.text).toMatch(/^Recommended: /);
  });

  it("answers anything else with a helpful error", async () => {
    const r = await command("deploy everything");
    expect(r.status).toBe(200);
    expect(r.json.text).toMatch(/not an \/hcp command/);
    expect(r.json.text).toMatch(/\/hcp help/);
  });

  it("refuses forged, stale, future-dated and unsigned requests", async () => {
    expect((await command("help", { secret: "wrong-secret" })).status).toBe(401);
    // 30 s past the 5-minute window either way: the bot reads its clock a moment after the test.
    expect((await command("help", { skew: -330 })).status).toBe(401);
    expect((await command("help", { skew: +330 })).status).toBe(401);
    const res = await fetch(`${bot.url}/slack/events`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "command=%2Fhcp&text=help" });
    expect(res.status).toBe(401);
    // A valid signature over a different body is still forged.
    const good = await command("help");
    const tampered = await fetch(`${bot.url}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)), "x-slack-signature": sign(good.body, Math.floor(Date.now() / 1000)) },
      body: good.body.replace("help", "smoke"),
    });
    expect(tampered.status).toBe(401);
  });

  it("refuses malformed form bodies with 400 after verifying them", async () => {
    expect((await command("", { rawBody: "not a form at all" })).status).toBe(400);
    expect((await command("", { rawBody: "command=%2Fhcp&text=help" })).status).toBe(400); // no user, channel, response_url
    expect((await command("", { rawBody: new URLSearchParams({ payload: "{}" }).toString() })).status).toBe(400);
    expect((await command("help", { contentType: "application/json" })).status).toBe(400);
    const bad = formBody("help", {}, "x").replace(/response_url=[^&]+/, "response_url=javascript%3Aalert(1)");
    expect((await command("", { rawBody: bad })).status).toBe(400);
    const big = await command("", { rawBody: `text=${"a".repeat(70_000)}` });
    expect(big.status).toBe(413);
    // A client that writes the whole oversized body before it reads still reads the 413.
    for (let i = 0; i < 3; i++) expect(await postWholeThenRead({ url: `${bot.url}/slack/events`, headers: { "content-type": "application/x-www-form-urlencoded" }, prefix: "text=", bytes: 120 * 1024 })).toEqual({ status: 413 });
  });

  it("answers Slack's signed certificate check (ssl_check=1) with 200, and an unsigned one with 401", async () => {
    const check = await command("", { rawBody: "ssl_check=1&token=legacy-verification-token" });
    expect(check.status).toBe(200);
    expect(check.json).toEqual({});
    const unsigned = await fetch(`${bot.url}/slack/events`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "ssl_check=1" });
    expect(unsigned.status).toBe(401);
  });
});

describe("who may use /hcp from Slack", () => {
  it("tells an unmapped user how to get mapped, and dispatches nothing", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    const r = await command(`smoke ${OWNER}/${REPO}#${pr.number}`, { user: "U0STRANGER" });
    expect(r.status).toBe(200);
    expect(r.replyText()).toMatch(/not linked to a GitHub login/);
    expect(r.replyText()).toContain("U0STRANGER");
    expect(r.replyText()).toContain("slack.users");
    expect(gh.state.dispatches.length).toBe(before);
  });

  it("a signed request from another workspace cannot act as a mapped user (bare ids count in SLACK_TEAM_ID only)", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    // U0MAINT is mapped to maint in T0TEAM; the same user id in T0OTHER is somebody else.
    const r = await command(`smoke ${OWNER}/${REPO}#${pr.number}`, { team: "T0OTHER" });
    expect(r.replyText()).toMatch(/not linked to a GitHub login/);
    expect(r.replyText()).toContain("T0OTHER/U0MAINT");
    expect(gh.state.dispatches.length).toBe(before);
    const ok = await command(`smoke ${OWNER}/${REPO}#${pr.number}`);
    expect(ok.replyText()).not.toMatch(/not linked/);
    expect(gh.state.dispatches.length - before).toBe(1);
  });

  it("refuses a channel that is not on the allowlist", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    const r = await command(`smoke ${OWNER}/${REPO}#${pr.number}`, { channel: "C0RANDOM" });
    expect(r.replyText()).toMatch(/accepted only in <#C0SMOKE>, <#C0PERF>/);
    expect(gh.state.dispatches.length).toBe(before);
  });

  it("applies the GitHub permission check to the mapped login (read access is not enough)", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    const r = await command(`smoke ${OWNER}/${REPO}#${pr.number}`, { user: "U0READER" });
    expect(r.replyText()).toMatch(/No smoke run/);
    expect(r.replyText()).toMatch(/write/);
    expect(gh.state.dispatches.length).toBe(before);
  });

  it("falls back to the org's .github repository for the user mapping", async () => {
    const pr = openPr(OTHER);
    const r = await command(`status ${OWNER}/${OTHER}#${pr.number}`, { user: "U0ORG", channel: "C0ANY" });
    expect(r.replyText()).toMatch(/no smoke run requested/);
    const denied = await command(`status ${OWNER}/${OTHER}#${pr.number}`, { user: "U0MAINT" });
    expect(denied.replyText()).toMatch(/not linked/);
  });

  it("says when the app is not installed on the repository", async () => {
    const r = await command("status nobody/nothing#1");
    expect(r.replyText()).toMatch(/not installed on nobody\/nothing/);
  });
});

describe("/hcp status from Slack", () => {
  const WORKFLOW = ".github/workflows/hcp-smoke.yml";
  /** The section of the status message about the installed smoke workflow. */
  const workflowLine = (r: Awaited<ReturnType<typeof command>>) => {
    const blocks = (r.replies().at(-1)?.blocks ?? []) as Array<{ text?: { text?: string } }>;
    return blocks.map((b) => b.text?.text ?? "").find((t) => t.startsWith("*Smoke workflow:*"));
  };

  it("says which template version the installed smoke workflow is, with the upgrade command when it is older than the bot", async () => {
    const current = await command(`status ${OWNER}/${REPO}#${openPr().number}`);
    expect(workflowLine(current)).toBe(`*Smoke workflow:* \`${WORKFLOW}\` is template v${WORKFLOW_TEMPLATE_VERSION}, the version this hcp-bot renders`);
    expect(current.replyText()).not.toContain("init-workflow");

    // A workflow rendered before the template carried its version (v1), as GitHub's /hcp status reads it too.
    const legacy = "legacy-wf";
    gh.addRepo({ owner: OWNER, repo: legacy, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_FILE]: RECIPE } } });
    gh.addWorkflow({ owner: OWNER, repo: legacy, path: WORKFLOW, name: "hcp-smoke", content: readFileSync(join(import.meta.dirname, "..", "github", "fixtures", "hcp-smoke-six-inputs.yml"), "utf8") });
    const old = await command(`status ${OWNER}/${legacy}#${openPr(legacy).number}`, { user: "U0ORG", channel: "C0ANY" });
    expect(workflowLine(old)).toBe(`*Smoke workflow:* \`${WORKFLOW}\` is template v1, older than this hcp-bot's v${WORKFLOW_TEMPLATE_VERSION}: upgrade it with \`npx hcp-bot init-workflow --force\` and commit it to the default branch`);

    const none = await command(`status ${OWNER}/${OTHER}#${openPr(OTHER).number}`, { user: "U0ORG", channel: "C0ANY" });
    expect(workflowLine(none)).toBe(`*Smoke workflow:* none at \`${WORKFLOW}\` on \`main\`: add it with \`npx hcp-bot init-workflow\``);
  });

  it("still answers when the workflow cannot be read, leaving the workflow out", async () => {
    const pr = openPr();
    // Not a 404 (that would be "none installed") but an answer the bot cannot read the file from.
    gh.inject({ method: "GET", path: /\/repos\/acme\/mb\/contents\/.*hcp-smoke\.yml$/, status: 422, body: { message: "Validation Failed" } });
    const r = await command(`status ${OWNER}/${REPO}#${pr.number}`);
    expect(r.replyText()).toMatch(/no smoke run requested/);
    expect(workflowLine(r)).toBeUndefined();
    expect(gh.pendingInjections()).toEqual([]);
  });
});

describe("/hcp check", () => {
  it("lists findings and fixes for a broken launch line", async () => {
    const line = "torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama32_1b_pretrain_config model.context_parallel_size=4 model.cp_comm_type=a2a+p2p";
    const r = await command(`check ${line}`);
    expect(r.json.text).toMatch(/Checking that configuration/);
    const reply = r.replyText();
    expect(reply).toMatch(/HCP001/);
    expect(reply).toMatch(/hierarchical_context_parallel_sizes = \[a2a, p2p\]/); // the fix
  });

  it("passes a clean launch line, pasted in a code span", async () => {
    const line = "`torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama32_1b_pretrain_config model.context_parallel_size=4 model.cp_comm_type=a2a+p2p model.hierarchical_context_parallel_sizes=[2,2]`";
    const r = await command(`check ${line}`);
    expect(r.replyText()).toMatch(/No HCP errors or warnings/);
    expect(r.replyText()).not.toMatch(/HCP001/);
  });

  it("checks KEY=VALUE overrides against a recipe of an installed repository", async () => {
    const r = await command(`check ${OWNER}/${REPO} recipe=llama32_1b_pretrain_config model.context_parallel_size=4 model.cp_comm_type=a2a+p2p`);
    expect(r.replyText()).toMatch(/HCP001/);
    expect(r.replyText()).toContain("recipe llama32_1b_pretrain_config of acme/mb");
  });
});

describe("/hcp smoke from Slack", () => {
  it("dispatches, posts in the channel, and updates the message in place up to the verdict", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    const r = await command(`smoke ${OWNER}/${REPO}#${pr.number} cp=4 sizes=2,2`);
    expect(r.status).toBe(200);
    expect(r.json.response_type).toBe("ephemeral");
    expect(r.json.text).toMatch(/Smoke run on acme\/mb#\d+/);
    expect(r.json.text).toContain("cp=4");

    const sent = gh.state.dispatches.slice(before);
    expect(sent).toHaveLength(1);
    const inputs = sent[0]!.inputs as Record<string, string>;
    expect(inputs.sha).toBe(pr.sha);
    expect(r.replyText()).toMatch(/dispatched/);

    const post = slack.calls.find((c) => c.method === "chat.postMessage" && allText(c.body).includes(`#${pr.number}`))!;
    expect(post.body.channel).toBe("C0SMOKE");
    expect(allText(post.body.blocks)).toMatch(/queued/);
    expect(allText(post.body.blocks)).toContain(pr.sha.slice(0, 12));
    expect(allText(post.body.blocks)).toContain("<@U0MAINT>");
    const message = [...slack.messages.values()].find((m) => allText(m.blocks).includes(`#${pr.number}`))!;

    // The PR has its usual story too.
    expect(allText([...gh.state.checkRuns.values()])).toContain("HCP smoke");
    expect([...gh.state.issueComments.values()].some((c) => allText(c).includes("hcp-bot:smoke"))).toBe(true);

    const runId = sent[0]!.runId;
    const title = `hcp-smoke ${inputs.request_id} (PR #${pr.number}, llama32_1b_pretrain_config)`;
    gh.updateWorkflowRun(runId, { status: "in_progress" });
    await deliver("workflow_run", runPayload("in_progress", { id: runId, status: "in_progress", conclusion: null, display_title: title }));
    expect(allText(slack.messages.get(`${message.channel}:${message.ts}`)!.blocks)).toMatch(/running/);

    await completeSmokeRun(gh, { runId, requestId: inputs.request_id! }, { "smoke.log": PASSING_LOG, "verdict.json": runnerFacts() });
    await deliver("workflow_run", runPayload("completed", { id: runId, status: "completed", conclusion: "success", display_title: title }));
    const final = slack.messages.get(`${message.channel}:${message.ts}`)!;
    expect(final.updates).toBe(2);
    expect(final.text).toMatch(/passed/);
    const blocks = allText(final.blocks);
    expect(blocks).toMatch(/Verdict:\* pass/);
    expect(blocks).toMatch(/HIERARCHICAL_CONTEXT_PARALLEL_GROUP/); // the evidence excerpt
    expect(blocks).toContain(`/actions/runs/${runId}`);
    expect(blocks).toContain(`/${OWNER}/${REPO}/pull/${pr.number}`);
    expect(blocks).toMatch(/\/runs\/\d+/);
    expect(slack.calls.filter((c) => c.method === "chat.postMessage" && allText(c.body).includes(`#${pr.number}`))).toHaveLength(1);

    const status = await command(`status ${OWNER}/${REPO}#${pr.number}`);
    expect(status.replyText()).toMatch(/completed/);
    expect(status.replyText()).toMatch(/pass/);
  });

  it("never dispatches twice for a Slack retry, even after a restart", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    const triggerId = `trigger-${randomUUID()}`;
    const first = await command(`smoke ${OWNER}/${REPO}#${pr.number}`, { triggerId, responseId: "retry-1" });
    expect(first.status).toBe(200);
    const retry = await command(`smoke ${OWNER}/${REPO}#${pr.number}`, { triggerId, responseId: "retry-1", headers: { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } });
    expect(retry.status).toBe(200);
    expect(retry.json.text).toMatch(/already received/);
    expect(gh.state.dispatches.length).toBe(before + 1);

    await bot.stop();
    await new Promise((r) => setTimeout(r, 50));
    bot = await startServer(settings(), startOptions);
    const again = await command(`smoke ${OWNER}/${REPO}#${pr.number}`, { triggerId, responseId: "retry-1", headers: { "x-slack-retry-num": "2" } });
    expect(again.status).toBe(200);
    expect(gh.state.dispatches.length).toBe(before + 1);
  });

  it("cancels a run from Slack with the same permission check, and updates the channel message", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    await command(`smoke ${OWNER}/${REPO}#${pr.number}`);
    const runId = gh.state.dispatches[before]!.runId;
    const refused = await command(`cancel ${OWNER}/${REPO}#${pr.number}`, { user: "U0READER" });
    expect(refused.replyText()).toMatch(/needs write access/);
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/actions/runs/${runId}/cancel`))).toBe(false);
    const done = await command(`cancel ${OWNER}/${REPO}#${pr.number}`);
    expect(done.replyText()).toMatch(/Cancelled 1 smoke run/);
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/actions/runs/${runId}/cancel`))).toBe(true);
    const message = [...slack.messages.values()].find((m) => allText(m.blocks).includes(`#${pr.number}`))!;
    expect(allText(message.blocks)).toMatch(/cancelled/i);
  });

  it("answers a dry run with the plan and dispatches nothing", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    const r = await command(`smoke ${OWNER}/${REPO}#${pr.number} cp=4 sizes=2,2 --dry-run`);
    expect(r.json.text).toMatch(/Dry run/);
    expect(r.replyText()).toMatch(/nothing was dispatched/);
    expect(r.replyText()).toContain("--recipe llama32_1b_pretrain_config");
    expect(gh.state.dispatches.length).toBe(before);
  });

  it("escapes mention and broadcast injection in everything it echoes", async () => {
    const pr = openPr();
    const r = await command(`smoke ${OWNER}/${REPO}#${pr.number} recipe=<!channel> <@U0ADMIN> <#C0SMOKE> @here`);
    const everything = `${allText(r.json)}\n${r.replyText()}`;
    expect(everything).not.toMatch(/<!channel>|<!here>|<@U0ADMIN>|<#C0SMOKE>/);
    const check = await command("check torchrun run_recipe.py --recipe <!everyone> model.context_parallel_size=4");
    expect(`${allText(check.json)}\n${check.replyText()}`).not.toMatch(/<!everyone>/);
  });

  it("announces a run asked on GitHub in the repo's notify_channel and follows it", async () => {
    const pr = openPr();
    const before = gh.state.dispatches.length;
    await deliver("issue_comment", {
      action: "created",
      installation: { id: INSTALLATION },
      repository: repository(),
      sender: { login: "maint", id: 50, type: "User" },
      issue: { number: pr.number, pull_request: { url: `${gh.apiUrl}/repos/${OWNER}/${REPO}/pulls/${pr.number}` }, user: { login: "author" } },
      comment: { id: Math.floor(Math.random() * 1e9), body: "/hcp smoke", user: { login: "maint", id: 50, type: "User" } },
    });
    const sent = gh.state.dispatches.slice(before);
    expect(sent).toHaveLength(1);
    const post = slack.calls.find((c) => c.method === "chat.postMessage" && c.body.channel === "C0NOTIFY" && allText(c.body).includes(`#${pr.number}`));
    expect(post).toBeDefined();
    expect(allText(post!.body.blocks)).toContain("GitHub maint");
    const inputs = sent[0]!.inputs as Record<string, string>;
    await deliver("workflow_run", runPayload("in_progress", { id: sent[0]!.runId, status: "in_progress", conclusion: null, display_title: `hcp-smoke ${inputs.request_id}` }));
    const message = [...slack.messages.values()].find((m) => m.channel === "C0NOTIFY" && allText(m.blocks).includes(`#${pr.number}`))!;
    expect(message.updates).toBe(1);
  });
});

describe("without Slack settings", () => {
  it("runs the GitHub side and /healthz says Slack is off", async () => {
    const plain = await startServer(settings({ PORT: String(await freePort()), SLACK_SIGNING_SECRET: "", SLACK_BOT_TOKEN: "", SLACK_API_URL: "", HCP_DATA_DIR: mkdtempSync(join(tmpdir(), "hcp-noslack-")) }), startOptions);
    try {
      const healthBody = await health(plain.url);
      expect(healthBody.slack).toBe("off (SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN not set)");
      expect(healthBody.github).toBe("configured");
      expect((await fetch(`${plain.url}/slack/events`, { method: "POST", body: "" })).status).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});
