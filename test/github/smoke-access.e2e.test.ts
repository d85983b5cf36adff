// `/hcp smoke` end to end: who may spend GPU time (roles, bots, hidden commands, one run per
// PR, quotas per installation, forks and copy-pr-bot).
import { describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/index.ts";
import { startServer } from "../../src/server/server.ts";
import { botSettings, deliverAndSettle, smokeWorkflowFile } from "../support/bot-harness.ts";
import { instantClock } from "../support/bot-harness.ts";
import {
  CONFIG, OWNER, RECIPE, RECIPE_FILE, REPO, SECRET, bot, commentPayload, comments, dataDir, deliver, dispatches, gh, openPr, repository, restart, useSmokeE2E,
} from "../support/smoke-e2e.ts";

useSmokeE2E();

describe("who may spend GPU time", () => {
  it.each([
    ["reader", false],
    ["triager", false],
    ["maint", true],
    ["team-maintainer", true],
    ["admin1", true],
  ])("%s -> dispatched %s", async (login, allowed) => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", login));
    expect(dispatches().length - before).toBe(allowed ? 1 : 0);
    if (!allowed) {
      const reply = (await comments(pr.number)).at(-1)!;
      expect(reply.body).toMatch(new RegExp(`@${login} no smoke run: .*needs write access`));
    }
  });

  it("refuses when GitHub cannot say what the commenter may do (fails closed)", async () => {
    const pr = openPr();
    const before = dispatches().length;
    gh.inject({ method: "GET", path: /\/collaborators\/maint\/permission$/, status: 502, times: 13, body: { message: "Bad Gateway" } });
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    expect(dispatches().length).toBe(before);
    // The reason names the person without pinging them again (a zero-width space follows the @).
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/could not read @\u200bmaint's permission/);
  });

  it("ignores bots, edited comments and commands inside code blocks", async () => {
    const pr = openPr();
    const mark = gh.calls.length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "renovate[bot]", { type: "Bot" }));
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint", { action: "edited" }));
    await deliver("issue_comment", commentPayload(pr.number, "Try this:\n```\n/hcp smoke\n```\n> /hcp smoke", "maint"));
    expect(gh.calls.slice(mark).filter((c) => c.method !== "GET" && !c.path.includes("access_tokens"))).toEqual([]);
  });

  it("never dispatches a command GitHub would not show: a collapsed <details>, an <img alt>, a <div hidden>", async () => {
    const pr = openPr();
    const before = dispatches().length;
    for (const body of [
      "Logs below.\n\n<details>\n<summary>full log</summary>\n\n/hcp smoke\n\n</details>",
      '<img alt="diagram\n/hcp smoke\n" src="https://example.invalid/x.png">',
      "<div hidden>\n\n/hcp smoke\n\n</div>",
    ]) {
      await deliver("issue_comment", commentPayload(pr.number, body, "maint"));
    }
    expect(dispatches().length).toBe(before);
    await deliver("issue_comment", commentPayload(pr.number, "<details><summary>x</summary>\n\nnothing\n\n</details>\n\n/hcp smoke", "maint"));
    expect(dispatches().length - before).toBe(1); // visible text still counts
  });

  it("runs one smoke per PR at a time, and never dispatches the same comment twice, even after a restart", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const payload = commentPayload(pr.number, "/hcp smoke", "maint", { commentId: 7001 });
    await deliver("issue_comment", payload);
    await deliver("issue_comment", payload); // GitHub redelivery: same comment, new delivery id
    await restart(); // only the SQLite file remembers
    await deliver("issue_comment", payload);
    expect(dispatches().length - before).toBe(1);
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "admin1"));
    expect(dispatches().length - before).toBe(1);
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/already under way/);
    const store = SqliteStore.open(dataDir);
    const audit = await store.auditLog({ repo: `${OWNER}/${REPO}`, limit: 50 });
    await store.close();
    expect(audit.filter((a) => a.pr === pr.number).map((a) => a.decision)).toEqual(expect.arrayContaining(["allowed", "denied"]));
  });

  it("quotas are per installation and repository: another installation's runs and requests do not count; only the operator's cap spans them", async () => {
    // This file's installation has many runs active and many requests by maint (its quotas are generous).
    const store = SqliteStore.open(dataDir);
    const active = await store.countActive();
    await store.close();
    expect(active).toBeGreaterThan(2);
    const other = { id: 2001, name: "mb2", full_name: "globex/mb2", owner: { login: "globex", id: 3, type: "Organization" }, default_branch: "main" };
    gh.addInstallation({ id: 10, account: "globex", accountType: "Organization" });
    gh.addRepo({ owner: "globex", repo: "mb2", defaultBranch: "main", files: { main: { [RECIPE_FILE]: RECIPE, ".github/hcp-bot.yml": "smoke:\n  quotas: {per_user_per_day: 1, max_queued: 1}\n" } } });
    gh.addWorkflow({ owner: "globex", repo: "mb2", path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke", content: smokeWorkflowFile() });
    const prOn = (number: number) => {
      const sha = number.toString(16).padStart(40, "c");
      gh.addCommit({ owner: "globex", repo: "mb2", branch: `pr-${number}`, base: "main", sha, files: { [RECIPE_FILE]: RECIPE } });
      gh.addPullRequest({ owner: "globex", repo: "mb2", number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: RECIPE_FILE, contents: RECIPE, status: "modified" }] });
    };
    const ask = (number: number, url: string) =>
      deliverAndSettle({ url, idle: () => bot.idle() }, SECRET, "issue_comment", { ...commentPayload(number, "/hcp smoke", "maint"), installation: { id: 10 }, repository: other });
    prOn(1);
    const before = dispatches().length;
    await ask(1, bot.url);
    expect(dispatches().length - before).toBe(1); // its own cap (1) and maint's own quota there (1) were free
    prOn(2);
    await ask(2, bot.url); // now they are used up: its own limits hold
    expect(dispatches().length - before).toBe(1);

    // The operator's cap (HCP_SMOKE_MAX_ACTIVE) counts every installation's active runs.
    const capped = await startServer(botSettings({ githubUrl: gh.url, appId: 77, secret: SECRET, dataDir, extra: { HCP_SMOKE_MAX_ACTIVE: "2" } }), { sweepIntervalMs: 0, clock: instantClock, smoke: { runLookup: { attempts: 2, delayMs: 10 } } });
    try {
      const pr = openPr();
      await deliverAndSettle(capped, SECRET, "issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
      expect(dispatches().length - before).toBe(1);
      expect((await comments(pr.number)).at(-1)!.body).toMatch(/the operator's limit is 2/);
    } finally {
      await capped.stop();
    }
  });

  it("runs a fork's PR (even by a writer) only once copy-pr-bot mirrored the pinned SHA, when required", async () => {
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": `${CONFIG}  require_copy_pr_bot: true\n` } });
    try {
      const pr = openPr({ author: "maint", fork: "maint/mb" });
      const before = dispatches().length;
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "admin1"));
      expect(dispatches().length).toBe(before);
      expect((await comments(pr.number)).at(-1)!.body).toMatch(/comes from a fork/);
      gh.addCommit({ owner: OWNER, repo: REPO, branch: `pull-request/${pr.number}`, base: `pr-${pr.number}`, sha: pr.sha, files: {} });
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "admin1"));
      expect(dispatches().length - before).toBe(1);
    } finally {
      gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": CONFIG } });
    }
  });

  it("runs a fork's PR without copy-pr-bot when not required, because an allowed person asked", async () => {
    const pr = openPr({ author: "outsider", fork: "outsider/mb" });
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    expect(dispatches().length - before).toBe(1);
  });

  it("runs an untrusted author's PR only once copy-pr-bot mirrored the pinned SHA, when required", async () => {
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": `${CONFIG}  require_copy_pr_bot: true\n` } });
    try {
      const pr = openPr({ author: "outsider" });
      const before = dispatches().length;
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
      expect(dispatches().length).toBe(before);
      expect((await comments(pr.number)).at(-1)!.body).toMatch(new RegExp(`/ok to test ${pr.sha}`));
      gh.addCommit({ owner: OWNER, repo: REPO, branch: `pull-request/${pr.number}`, base: `pr-${pr.number}`, sha: pr.sha, files: {} });
      await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
      expect(dispatches().length - before).toBe(1);
    } finally {
      gh.addCommit({ owner: OWNER, repo: REPO, branch: "main", base: "main", files: { ".github/hcp-bot.yml": CONFIG } });
    }
  });
});
