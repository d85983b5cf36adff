// The bot as a real server receiving signed webhooks over HTTP, pointed (GHE_HOST) at a
// fake GitHub on loopback that validates every request against GitHub's OpenAPI
// description and keeps state, so upserts and redeliveries can be seen.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { appKeys, botSettings, deliverAndSettle, pullRequestPayload } from "../support/bot-harness.ts";

const SECRET = "webhook-secret-for-tests";
const OWNER = "acme";
const REPO = "megatron-bridge";
const INSTALLATION = 7;
const { publicKey } = appKeys;

const RECIPE_PATH = "src/megatron/bridge/recipes/llama/h100/llama3.py";
const GOOD = `from megatron.bridge.recipes.common import _pretrain_common


def llama3_8b_pretrain_32gpu_h100_bf16_64k_config():
    cfg = _pretrain_common()
    cfg.dataset.seq_length = 65536
    cfg.model.seq_length = 65536
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.context_parallel_size = 4
    return cfg
`;
// Two findings on the changed lines: a2a+p2p without sizes (HCP001) and a sequence length CP cannot split (HCP007).
const BROKEN = GOOD.replace("    cfg.model.context_parallel_size = 4\n", '    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n')
  .replace(/65536/g, "65530");
const HALF_FIXED = BROKEN.replace(/65530/g, "65536");

let gh: FakeGitHub;
let bot: RunningServer;
let headCounter = 0;

function sha(): string {
  headCounter++;
  return headCounter.toString(16).padStart(40, "a");
}

async function deliver(event: string, payload: object, id: string = randomUUID()): Promise<{ status: number; id: string }> {
  return { status: await deliverAndSettle(bot, SECRET, event, payload, id), id };
}

function repository() {
  return { id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main", private: false };
}

function prPayload(action: string, number: number, head: string, draft = false) {
  return pullRequestPayload({ githubUrl: gh.url, owner: OWNER, repo: REPO, installation: INSTALLATION, action, number, head, draft });
}

/** A PR on the fake whose head holds `files` (path -> text); patches are derived from the base. */
function openPr(number: number, files: Record<string, string>, base: Record<string, string> = {}, draft = false): string {
  const head = sha();
  gh.addCommit({ owner: OWNER, repo: REPO, branch: `feature-${number}`, base: "main", sha: head, files });
  gh.addPullRequest({
    owner: OWNER,
    repo: REPO,
    number,
    draft,
    head: { sha: head, ref: `feature-${number}` },
    files: Object.entries(files).map(([filename, contents]) => ({ filename, contents, status: base[filename] !== undefined ? "modified" : "added" })),
  });
  return head;
}

function callsTo(method: string, pattern: RegExp, since = 0) {
  return gh.calls.slice(since).filter((c) => c.method === method && pattern.test(c.path));
}

function checkRuns(head: string) {
  return gh.calls.filter((c) => c.method === "POST" && c.path.endsWith("/check-runs") && (c.body as { head_sha?: string }).head_sha === head);
}

async function latestCheck(head: string) {
  const token = gh.installationToken(INSTALLATION);
  const res = await fetch(`${gh.apiUrl}/repos/${OWNER}/${REPO}/commits/${head}/check-runs?check_name=HCP%20review`, { headers: { authorization: `token ${token}` } });
  const data = (await res.json()) as { check_runs: Array<{ id: number; conclusion: string; output: { title: string; summary: string; annotations_count: number } }> };
  return data.check_runs[0]!;
}

async function issueComments(number: number) {
  const token = gh.installationToken(INSTALLATION);
  const res = await fetch(`${gh.apiUrl}/repos/${OWNER}/${REPO}/issues/${number}/comments?per_page=100`, { headers: { authorization: `token ${token}` } });
  return (await res.json()) as Array<{ id: number; body: string; user: { login: string } }>;
}

async function reviewComments(number: number) {
  const token = gh.installationToken(INSTALLATION);
  const res = await fetch(`${gh.apiUrl}/repos/${OWNER}/${REPO}/pulls/${number}/comments?per_page=100`, { headers: { authorization: `token ${token}` } });
  return (await res.json()) as Array<{ id: number; body: string; line: number; path: string }>;
}

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 4242, appSlug: "hcp-bot", appPublicKey: publicKey });
  gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
  gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_PATH]: GOOD, "README.md": "# repo\n" } } });
  bot = await startServer(botSettings({ githubUrl: gh.url, appId: 4242, secret: SECRET, extra: { HCP_HEALTH_TOKEN: HEALTH_TOKEN } }));
});

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
});

afterEach(() => {
  // The fake answers like GitHub; any request the bot made that GitHub would reject shows up here.
  expect(gh.violations).toEqual([]);
});

const HEALTH_TOKEN = "operator-health-token-42";

describe("pull request review", () => {
  it("answers /healthz with its status only; version, uptime and the store only to the operator's token", async () => {
    for (const authorization of [undefined, "Bearer wrong-token-0123456789", `Bearer ${HEALTH_TOKEN}x`]) {
      const res = await fetch(`${bot.url}/healthz`, authorization ? { headers: { authorization } } : {});
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "ok" }); // no store path, no counts
    }
    const res = await fetch(`${bot.url}/healthz`, { headers: { authorization: `Bearer ${HEALTH_TOKEN}` } });
    const body = (await res.json()) as { status: string; version: string; uptimeSeconds: number; github: string; store: { detail: string } };
    expect(body).toMatchObject({ status: "ok", github: "configured" });
    expect(body.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(body.store.detail).toBeTruthy();
  });

  it("rejects a webhook with a forged signature", async () => {
    const before = gh.calls.length;
    const res = await fetch(`${bot.url}/api/github/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": randomUUID(), "x-hub-signature-256": "sha256=" + "0".repeat(64) },
      body: JSON.stringify(prPayload("opened", 99, sha())),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(gh.calls.length).toBe(before);
  });

  it("passes a clean PR: a successful check run and no comment", async () => {
    const head = openPr(1, { [RECIPE_PATH]: GOOD.replace("65536", "131072").replace("65536", "131072") }, { [RECIPE_PATH]: GOOD });
    const r = await deliver("pull_request", prPayload("opened", 1, head));
    expect(r.status).toBe(200);
    const check = await latestCheck(head);
    expect(check.conclusion).toBe("success");
    expect(check.output.title).toMatch(/look right/);
    expect(await issueComments(1)).toEqual([]);
    expect(await reviewComments(1)).toEqual([]);
  }); // the first review loads the Python grammar

  it("a PR with a file it could not analyze is never green: a syntax error and an 800-deep file fail the check with the reason; the other file is still reviewed", async () => {
    const SYNTAX = "src/megatron/bridge/recipes/llama/h100/broken.py";
    const DEEP = "src/megatron/bridge/recipes/llama/h100/deep.py";
    const deep = `${Array.from({ length: 800 }, (_, i) => `${"    ".repeat(i)}if x:`).join("\n")}\n${"    ".repeat(800)}pass\n`;
    // A clean recipe beside a broken one: before, the check was "success ... 0 configuration(s)" for the broken file alone.
    const syntaxOnly = openPr(42, { [SYNTAX]: "def llama3_8b_pretrain_config(:\n    cfg = _pretrain_common()\n    return cfg\n" });
    await deliver("pull_request", prPayload("opened", 42, syntaxOnly));
    const broken = await latestCheck(syntaxOnly);
    expect(broken.conclusion).toBe("failure");
    expect(broken.output.title).toMatch(/^1 file\(s\) not fully analyzed/);
    expect(broken.output.summary).toMatch(/Python syntax error at line 1/);
    const said = (await issueComments(42)).find((c) => c.body.includes("hcp-bot:summary"));
    expect(said?.body).toMatch(/cannot pass/);

    const head = openPr(43, { [DEEP]: deep, [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 43, head));
    const check = await latestCheck(head);
    expect(check.conclusion).toBe("failure");
    expect(check.output.title).not.toMatch(/not done/);
    expect(check.output.summary).toMatch(/deep\.py.*not analyzed: too deeply nested/);
    expect(check.output.summary).toMatch(/HCP001/); // the other file's findings are not lost
    expect((await reviewComments(43)).some((c) => c.body.includes("HCP001"))).toBe(true);

    // 800 brackets nested in one expression (CPython stops at 200): the same, never "GitHub kept failing".
    const BRACKETS = "src/megatron/bridge/recipes/llama/h100/brackets.py";
    const nested = `def llama3_70b_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.train.extra = ${"(".repeat(400)}${"[".repeat(400)}1${"]".repeat(400)}${")".repeat(400)}\n    return cfg\n`;
    const brackets = openPr(44, { [BRACKETS]: nested, [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 44, brackets));
    const bracketCheck = await latestCheck(brackets);
    expect(bracketCheck.conclusion).toBe("failure");
    expect(bracketCheck.output.title).not.toMatch(/not done/);
    expect(bracketCheck.output.summary).toMatch(/brackets\.py.*not analyzed: too deeply nested \\\(line 3 opens bracket level 201; Python itself stops at 200/);
    expect(bracketCheck.output.summary).toMatch(/HCP001/);
    expect((await reviewComments(44)).some((c) => c.body.includes("HCP001"))).toBe(true);
  });

  it("a PR with 120 broken recipe files still gets its inline review: the body listing the findings over the comment limit is trimmed under GitHub's 65,536 characters", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`src/megatron/bridge/recipes/llama/h100/many_${i}.py`] = BROKEN.replace("llama3_8b_pretrain_32gpu_h100_bf16_64k_config", `llama3_8b_v${i}_pretrain_32gpu_h100_bf16_64k_config`);
    const head = openPr(45, files);
    await deliver("pull_request", prPayload("opened", 45, head));
    const posts = callsTo("POST", /\/pulls\/45\/reviews$/);
    expect(posts.map((c) => c.status)).toEqual([200]); // GitHub (the fake) answers 422 past 65,536 characters
    const body = (posts[0]!.body as { body: string; comments: unknown[] }).body;
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body).toMatch(/more finding\(s\) on changed lines/);
    expect(body).toMatch(/truncated: see the check run/);
    expect((await reviewComments(45)).length).toBe((posts[0]!.body as { comments: unknown[] }).comments.length);
    expect((await reviewComments(45)).length).toBeGreaterThan(0);
  });

  it("reviews a PR whose delivery is 6 MB (a huge PR body): a delivery GitHub sends is a durable job, not a 503", async () => {
    const head = openPr(41, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    const payload = prPayload("opened", 41, head);
    const big = { ...payload, pull_request: { ...payload.pull_request, body: "x".repeat(6 * 1024 * 1024) } };
    const r = await deliver("pull_request", big);
    expect(r.status).toBe(200);
    expect((await latestCheck(head)).conclusion).toBe("failure");
  });

  it("posts errors on changed lines as suggestions, a failing check and one summary", async () => {
    const head = openPr(2, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 2, head));
    const check = await latestCheck(head);
    expect(check.conclusion).toBe("failure");
    expect(check.output.annotations_count).toBeGreaterThanOrEqual(2);
    const created = gh.calls.find((c) => c.method === "POST" && c.path.endsWith("/check-runs") && (c.body as { head_sha?: string }).head_sha === head)!;
    expect((created.body as { actions?: { identifier: string }[] }).actions).toEqual([expect.objectContaining({ identifier: "hcp-smoke", label: "Smoke run" })]);
    const inline = await reviewComments(2);
    const hcp001 = inline.find((c) => c.body.includes("HCP001"))!;
    expect(hcp001.path).toBe(RECIPE_PATH);
    expect(hcp001.body).toContain('```suggestion\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n```');
    expect(inline.some((c) => c.body.includes("HCP007"))).toBe(true);
    const summary = (await issueComments(2)).filter((c) => c.body.includes("hcp-bot:summary"));
    expect(summary).toHaveLength(1);
    expect(summary[0]!.user.login).toBe("hcp-bot[bot]");
    expect(summary[0]!.body).toMatch(/HCP001/);
  });

  it("on a push that fixes one of two findings: updates the summary in place and repeats nothing", async () => {
    const first = openPr(3, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 3, first));
    const before = await reviewComments(3);
    const summaryBefore = (await issueComments(3)).find((c) => c.body.includes("hcp-bot:summary"))!;
    expect(summaryBefore.body).toMatch(/HCP007/);

    const second = sha();
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "feature-3", sha: second, files: { [RECIPE_PATH]: HALF_FIXED } });
    gh.addPullRequest({ owner: OWNER, repo: REPO, number: 3, head: { sha: second, ref: "feature-3" }, files: [{ filename: RECIPE_PATH, contents: HALF_FIXED, status: "modified" }] });
    await deliver("pull_request", prPayload("synchronize", 3, second));

    const after = await reviewComments(3);
    expect(after.length).toBe(before.length); // HCP001 was already commented; HCP007 is gone
    const comments = (await issueComments(3)).filter((c) => c.body.includes("hcp-bot:summary"));
    expect(comments).toHaveLength(1);
    expect(comments[0]!.id).toBe(summaryBefore.id);
    expect(comments[0]!.body).not.toMatch(/HCP007/);
    expect(comments[0]!.body).toMatch(/HCP001/);
    expect((await latestCheck(second)).conclusion).toBe("failure");
  });

  it("says so when the PR becomes clean", async () => {
    const first = openPr(4, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 4, first));
    const clean = sha();
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "feature-4", sha: clean, files: { [RECIPE_PATH]: GOOD } });
    gh.addPullRequest({ owner: OWNER, repo: REPO, number: 4, head: { sha: clean, ref: "feature-4" }, files: [{ filename: RECIPE_PATH, contents: GOOD, status: "modified" }] });
    await deliver("pull_request", prPayload("synchronize", 4, clean));
    const summary = (await issueComments(4)).filter((c) => c.body.includes("hcp-bot:summary"));
    expect(summary).toHaveLength(1);
    expect(summary[0]!.body).toMatch(/No HCP problems/);
    expect((await latestCheck(clean)).conclusion).toBe("success");
  });

  it("keeps findings outside the diff in the check run and the summary only", async () => {
    // The broken lines exist on main already; the PR only touches the docstring line.
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { "recipes/old.py": BROKEN } });
    const changed = BROKEN.replace("from megatron", "# touched\nfrom megatron");
    const head = sha();
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "feature-5", base: "main", sha: head, files: { "recipes/old.py": changed } });
    gh.addPullRequest({
      owner: OWNER,
      repo: REPO,
      number: 5,
      head: { sha: head, ref: "feature-5" },
      files: [{ filename: "recipes/old.py", contents: changed, status: "modified", patch: "@@ -1,3 +1,4 @@\n+# touched\n from megatron.bridge.recipes.common import _pretrain_common\n \n " }],
    });
    gh.setPermission("author", "write");
    const config = "paths: ['recipes/**/*.py', 'src/**/*.py']\n";
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": config } });
    await deliver("pull_request", prPayload("opened", 5, head));
    expect(await reviewComments(5)).toEqual([]);
    const check = await latestCheck(head);
    expect(check.conclusion).toBe("failure");
    expect(check.output.annotations_count).toBeGreaterThanOrEqual(2);
    expect((await issueComments(5)).some((c) => c.body.includes("HCP001"))).toBe(true);
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": null } });
  });

  it("does nothing twice for the same delivery", async () => {
    const head = openPr(6, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    const payload = prPayload("opened", 6, head);
    const { id } = await deliver("pull_request", payload);
    const mark = gh.calls.length;
    await deliver("pull_request", payload, id);
    expect(gh.calls.slice(mark)).toEqual([]);
    expect(checkRuns(head)).toHaveLength(1);
  });

  it("posts nothing twice when the same event arrives as a new delivery (e.g. after a restart)", async () => {
    const head = openPr(7, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 7, head));
    const mark = gh.calls.length;
    await deliver("pull_request", prPayload("opened", 7, head));
    const writes = gh.calls.slice(mark).filter((c) => c.method !== "GET" && !c.path.endsWith("/graphql") && !c.path.includes("access_tokens"));
    expect(writes).toEqual([]);
    expect((await issueComments(7)).filter((c) => c.body.includes("hcp-bot:summary"))).toHaveLength(1);
  });

  it("reviews a 120-file PR: paginated files, batched contents, annotations in batches of 50", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`src/megatron/bridge/recipes/fam/h100/m${i}.py`] = BROKEN.replace("llama3_8b", `m${i}`);
    const head = openPr(8, files);
    const mark = gh.calls.length;
    await deliver("pull_request", prPayload("opened", 8, head));
    const check = await latestCheck(head);
    expect(check.output.annotations_count).toBeGreaterThanOrEqual(240);
    expect(callsTo("GET", /\/pulls\/8\/files$/, mark)).toHaveLength(2);
    // 120 files + 2 pin files in one query, then one query for the modules they import (recipes/common.py, absent here).
    expect(callsTo("POST", /graphql$/, mark)).toHaveLength(2);
    const posted = callsTo("POST", /\/pulls\/8\/reviews$/, mark);
    expect(posted).toHaveLength(1);
    expect((posted[0]!.body as { comments: unknown[] }).comments).toHaveLength(30);
  });

  it("fails the check with the exact problem when .github/hcp-bot.yml is invalid", async () => {
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": "review:\n  mode: shout\n" } });
    const head = openPr(9, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 9, head));
    const check = await latestCheck(head);
    expect(check.conclusion).toBe("failure");
    expect(check.output.title).toMatch(/Invalid \.github\/hcp-bot\.yml/);
    expect(check.output.summary).toMatch(/review\.mode/);
    expect(await reviewComments(9)).toEqual([]);
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": null } });
  });

  it("reads [tool.hcp-bot] from the default branch's pyproject.toml when there is no .github/hcp-bot.yml", async () => {
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { "pyproject.toml": '[project]\nname = "mb"\n\n[tool.hcp-bot]\nreview.mode = "shout"\n' } });
    const head = openPr(109, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 109, head));
    const check = await latestCheck(head);
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/pyproject\.toml \[tool\.hcp-bot\] has 1 problem\(s\): review\.mode/);
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { "pyproject.toml": null } });
  });

  it("honours a # noqa on the reported line: no comment for it, the unused code reported as HCP100", async () => {
    const quiet = BROKEN.replace('cfg.model.cp_comm_type = "a2a+p2p"\n', 'cfg.model.cp_comm_type = "a2a+p2p"  # noqa: HCP001, HCP002\n');
    expect(quiet).not.toBe(BROKEN);
    const head = openPr(110, { [RECIPE_PATH]: quiet }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 110, head));
    const bodies = (await reviewComments(110)).map((c) => c.body);
    expect(bodies.some((b) => b.includes("**HCP001**"))).toBe(false);
    expect(bodies.some((b) => b.includes("**HCP100**"))).toBe(true);
    const noqa = openPr(111, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 111, noqa));
    expect((await reviewComments(111)).some((c) => c.body.includes("**HCP001**"))).toBe(true);
  });

  it("retries a 500 from GitHub and completes the review", async () => {
    const head = openPr(10, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    gh.inject({ method: "POST", path: /\/pulls\/10\/reviews$/, status: 500, body: { message: "Server Error" } });
    await deliver("pull_request", prPayload("opened", 10, head));
    expect(gh.pendingInjections()).toEqual([]);
    expect((await reviewComments(10)).length).toBeGreaterThan(0);
  });

  it("honours a secondary rate limit's retry-after", async () => {
    const head = openPr(11, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    gh.inject({ method: "POST", path: /\/issues\/11\/comments$/, status: 403, headers: { "retry-after": "1" }, body: { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." } });
    const t0 = Date.now();
    await deliver("pull_request", prPayload("opened", 11, head));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect((await issueComments(11)).filter((c) => c.body.includes("hcp-bot:summary"))).toHaveLength(1);
  });

  it("gives a draft the check run only, and the full review when it is ready", async () => {
    const head = openPr(12, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD }, true);
    await deliver("pull_request", prPayload("opened", 12, head, true));
    expect((await latestCheck(head)).conclusion).toBe("failure");
    expect(await reviewComments(12)).toEqual([]);
    expect(await issueComments(12)).toEqual([]);
    await deliver("pull_request", prPayload("ready_for_review", 12, head, false));
    expect((await reviewComments(12)).length).toBeGreaterThan(0);
    expect(checkRuns(head)).toHaveLength(1); // the same check run was updated, not duplicated
  });

  it("skips (not success) a PR that touches no recipe file", async () => {
    const head = openPr(13, { "README.md": "# new readme\n" }, { "README.md": "# repo\n" });
    await deliver("pull_request", prPayload("opened", 13, head));
    expect((await latestCheck(head)).conclusion).toBe("skipped");
  });

  it("re-runs the review when the check run is re-requested", async () => {
    const head = openPr(14, { [RECIPE_PATH]: BROKEN }, { [RECIPE_PATH]: GOOD });
    await deliver("pull_request", prPayload("opened", 14, head));
    const check = await latestCheck(head);
    const mark = gh.calls.length;
    await deliver("check_run", {
      action: "rerequested",
      installation: { id: INSTALLATION },
      repository: repository(),
      sender: { login: "author", id: 3, type: "User" },
      check_run: { id: check.id, name: "HCP review", head_sha: head, pull_requests: [{ number: 14, head: { sha: head, ref: "feature-14" }, base: { sha: "b".repeat(40), ref: "main" } }] },
    });
    expect(callsTo("GET", /\/pulls\/14\/files$/, mark)).toHaveLength(1);
  });

  it("judges a kwargs-style recipe with its builder from another module, read at the head SHA in the same batched GraphQL reads", async () => {
    const COMMON = "src/megatron/bridge/recipes/llama/common.py";
    const builder = `from megatron.bridge.recipes.common import _pretrain_common


def _llama3_common(context_parallel_size: int = 1, cp_comm_type=None, hierarchical_context_parallel_sizes=None, seq_length: int = 4096):
    cfg = _pretrain_common()
    cfg.model.context_parallel_size = context_parallel_size
    cfg.model.cp_comm_type = cp_comm_type
    cfg.model.hierarchical_context_parallel_sizes = hierarchical_context_parallel_sizes
    cfg.dataset.seq_length = seq_length
    cfg.model.seq_length = seq_length
    return cfg
`;
    const recipe = (extra: string) => `from megatron.bridge.recipes.llama.common import _llama3_common


def llama3_8b_64k_pretrain_config(**user_kwargs):
    recommended_kwargs = {"context_parallel_size": 4, "cp_comm_type": "a2a+p2p"${extra}, "seq_length": 65536}
    return _llama3_common(**{**recommended_kwargs, **user_kwargs})
`;
    const KWARGS = "src/megatron/bridge/recipes/llama/h100/llama3_kwargs.py";
    // The builder is on the default branch only; the PR does not touch it.
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { [COMMON]: builder } });
    const mark = gh.calls.length;
    const head = openPr(40, { [KWARGS]: recipe("") });
    await deliver("pull_request", prPayload("opened", 40, head));
    expect((await latestCheck(head)).conclusion).toBe("failure");
    const inline = await reviewComments(40);
    const hcp001 = inline.find((c) => c.body.includes("HCP001"))!;
    expect(hcp001.path).toBe(KWARGS);
    expect(hcp001.line).toBe(5); // the "a2a+p2p" in the kwargs dict, which the builder in common.py assigns
    // The imported module was read at the head SHA through GraphQL (no REST call per file).
    const reads = callsTo("POST", /graphql$/, mark).map((c) => JSON.stringify(c.body));
    expect(reads.some((q) => q.includes(`${head}:${COMMON}`))).toBe(true);
    expect(callsTo("GET", /\/contents\//, mark).filter((c) => c.path.includes("common.py"))).toEqual([]);

    // Counter-example: the same recipe with valid sizes is clean.
    const fixed = openPr(41, { [KWARGS]: recipe(', "hierarchical_context_parallel_sizes": [2, 2]') });
    await deliver("pull_request", prPayload("opened", 41, fixed));
    expect((await latestCheck(fixed)).conclusion).toBe("success");
  });

  it("judges a user's training script on hcp-bot's index of upstream recipes (Bridge 0.7.0) and names that version in the summary", async () => {
    // Issue 27 item 8: the script starts from an upstream recipe this repository does not hold.
    const SCRIPT = "examples/train_llama.py";
    const script = (extra: string) =>
      [
        "from megatron.bridge.recipes.llama import llama3_8b_pretrain_config",
        "from megatron.bridge.training.gpt_step import forward_step",
        "from megatron.bridge.training.pretrain import pretrain",
        "",
        'if __name__ == "__main__":',
        "    cfg = llama3_8b_pretrain_config()",
        `    cfg.model.cp_comm_type = "${extra}"`,
        "    pretrain(cfg, forward_step)",
        "",
      ].join("\n");
    const head = openPr(60, { [SCRIPT]: script("a2a+p2p") });
    await deliver("pull_request", prPayload("opened", 60, head));
    expect((await latestCheck(head)).conclusion).toBe("failure");
    const hcp001 = (await reviewComments(60)).find((c) => c.body.includes("HCP001"))!;
    expect([hcp001.path, hcp001.line]).toEqual([SCRIPT, 7]);
    // The fix comes from the indexed recipe's CP 2 (recipes/llama/h100/llama3.py at 067f987): no split fits, use p2p.
    expect(hcp001.body).toMatch(/No two-level split of context\\?_parallel\\?_size 2 fits/); // text from code is escaped for Markdown
    const summary = (await issueComments(60)).find((c) => c.body.includes("HCP review"))!.body;
    expect(summary).toMatch(/\*\*Base recipes\*\*[\s\S]*base-from-index: .*Megatron-Bridge 0\.7\.0 \\?\(067f987\\?\)/);
    expect(summary).not.toMatch(/Files the analyzer could not fully read/);

    // The same script with p2p is clean: the index's CP 2 with p2p is consistent.
    const fixed = openPr(61, { [SCRIPT]: script("p2p") });
    await deliver("pull_request", prPayload("opened", 61, fixed));
    expect((await latestCheck(fixed)).conclusion).toBe("success");
  });

  it("a perf launch line with --use_recipes: the 8192 mock dataset against a 4096 recipe is posted on the launch line, naming scripts/performance/run_recipe.py", async () => {
    // Issue 27.7: scripts/performance/run_recipe.py builds its mock dataset at --seq_length or 8192 (run_recipe.py:97-99, Bridge 067f987).
    const LIB = "src/megatron/bridge/recipes/fam/fam.py";
    const LAUNCH = "examples/fam/launch.sh";
    const lib = GOOD.replace("llama3_8b_pretrain_32gpu_h100_bf16_64k_config", "fam_8b_pretrain_config").replace(/65536/g, "4096");
    const line = "python scripts/performance/setup_experiment.py --use_recipes -m fam -mr fam_8b -g h100 -ng 16";
    const head = openPr(70, { [LIB]: lib, [LAUNCH]: `#!/bin/bash\n${line}\n` });
    await deliver("pull_request", prPayload("opened", 70, head));
    expect((await latestCheck(head)).conclusion).toBe("failure");
    const hcp008 = (await reviewComments(70)).find((c) => c.body.includes("HCP008"))!;
    expect([hcp008.path, hcp008.line]).toEqual([LAUNCH, 2]);
    const message = hcp008.body.split("```suggestion")[0]!;
    expect(message).toMatch(/scripts\/performance\/run\\?_recipe\.py/);
    expect(message).not.toMatch(/scripts\/training/);
    expect(hcp008.body).toContain("dataset.seq_length=4096\n```"); // the suggestion adds the Hydra override

    // With -sl 4096 the launcher sets both lengths: clean.
    const fixed = openPr(71, { [LIB]: lib, [LAUNCH]: `#!/bin/bash\n${line} -sl 4096\n` });
    await deliver("pull_request", prPayload("opened", 71, fixed));
    expect((await latestCheck(fixed)).conclusion).toBe("success");
  });
});
