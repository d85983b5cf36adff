// The smoke-run history in a real browser (Chromium): runs made by the smoke flow through
// the real server and the fake GitHub (comment webhook, dispatch, run, log artifact,
// verdict; one asked from the check run's button, one from a signed Slack command), into
// the SQLite store; sign-in through the fake GitHub's OAuth pages; a user
// sees the runs of the repositories they can read, and nothing of a private one they cannot.
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { appKeys, botSettings, PASSING_RUN_LOG, probeKeyOf, runnerFacts, trainingLog } from "../support/bot-harness.ts";
import { CHROMIUM, launchBrowser, onPage, SCREENSHOTS, signInWithGitHub } from "../support/browser.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { startFakeSlack, type FakeSlack } from "../support/fake-slack/index.ts";
import { slashCommandForm } from "../support/slack-form.ts";
import { addSmokeRepo, SmokeFlow, type FlowRepo } from "../support/smoke-flow.ts";

const SECRET = "runs-secret";
const SLACK_SECRET = "runs-slack-signing-secret";
const CLIENT = { clientId: "Iv1.runs-test", clientSecret: "client-secret-for-tests-0123456789" };
const PUBLIC: FlowRepo = { owner: "acme", repo: "mb", installation: 9 };
const PRIVATE: FlowRepo = { owner: "acme", repo: "secret-models", installation: 9 };

let gh: FakeGitHub;
let slack: FakeSlack;
let bot: RunningServer;
let browser: Browser;
let store: SqliteStore;
let flow: SmokeFlow;
let clock = Date.parse("2026-11-30T10:00:00Z");
const ids: Record<string, string> = {};
/** The real signed CP=4 [2, 2] probe log with two training steps that log their throughput, as logger.log_throughput=true does. */
const PASSING_LOG = trainingLog(PASSING_RUN_LOG).replace(/elapsed time per iteration \(ms\): 1234\.5 \|/g, "elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 412.3 |");

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 78, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: 9, account: "acme", accountType: "Organization" });
  addSmokeRepo(gh, PUBLIC);
  addSmokeRepo(gh, { ...PRIVATE, private: true });
  gh.addOAuthApp(CLIENT);
  // Slack user U0MAINT of workspace T0TEAM is maint on GitHub (the org-wide mapping).
  gh.addRepo({ owner: "acme", repo: ".github", defaultBranch: "main", installationId: 9, files: { main: { ".github/hcp-bot.yml": "slack:\n  users: {T0TEAM/U0MAINT: maint}\n" } } });
  slack = await startFakeSlack({ token: "xoxb-runs" });
  gh.setPermission("maint", "write", "acme/mb");
  gh.setPermission("maint", "write", "acme/secret-models");
  gh.setPermission("author", "write", "acme/mb");
  gh.setPermission("author", "write", "acme/secret-models");
  gh.setPermission("outsider", "read", "acme/mb"); // and no role at all on acme/secret-models
  const settings = botSettings({
    githubUrl: gh.url,
    appId: 78,
    secret: SECRET,
    dataDir: mkdtempSync(join(tmpdir(), "hcp-runs-")),
    extra: {
      HCP_RUNS_ACCESS: "github",
      GITHUB_CLIENT_ID: CLIENT.clientId,
      GITHUB_CLIENT_SECRET: CLIENT.clientSecret,
      SLACK_SIGNING_SECRET: SLACK_SECRET,
      SLACK_BOT_TOKEN: "xoxb-runs",
      SLACK_API_URL: slack.apiUrl,
    },
  });
  // One clock for the store and the smoke flow, so the request's times and its trail agree.
  store = SqliteStore.open(settings.dataDir, { now: () => new Date(clock) });
  bot = await startServer(settings, { store, sweepIntervalMs: 0, smoke: { now: () => new Date(clock), runLookup: { attempts: 2, delayMs: 10 } } });
  flow = new SmokeFlow({ gh, bot: () => bot, secret: SECRET });

  // Four requests, as production makes them: a pass, a run with HCP silently off, a refusal, and one in the private repository.
  const tick = (minutes: number) => () => (clock += minutes * 60_000);
  // The oldest: a run asked from the HCP review check run's button, dispatched, not yet picked up.
  const buttonPr = flow.openPr(PUBLIC);
  const dispatched = gh.state.dispatches.length;
  await flow.deliver("check_run", {
    action: "requested_action",
    installation: { id: PUBLIC.installation },
    repository: flow.repository(PUBLIC),
    sender: { login: "maint", id: 51, type: "User" },
    requested_action: { identifier: "hcp-smoke" },
    check_run: { id: 1, name: "HCP review", head_sha: buttonPr.sha, pull_requests: [{ number: buttonPr.number, head: { sha: buttonPr.sha, ref: `pr-${buttonPr.number}` }, base: { sha: "b".repeat(40), ref: "main" } }] },
  });
  ids.button = (gh.state.dispatches[dispatched]!.inputs as Record<string, string>).request_id!;
  clock += 60_000;
  // Then one asked from Slack with a signed /hcp smoke.
  const slackPr = flow.openPr(PUBLIC);
  const form = slashCommandForm(`smoke acme/mb#${slackPr.number}`, { user_id: "U0MAINT", channel_id: "C0SMOKE", response_url: slack.responseUrl(), trigger_id: `t.${randomUUID()}` });
  const ts = Math.floor(Date.now() / 1000);
  const ack = await fetch(`${bot.url}/slack/events`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(ts), "x-slack-signature": `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${ts}:${form}`).digest("hex")}` },
    body: form,
  });
  expect(ack.status).toBe(200);
  await ack.text();
  await bot.idle();
  ids.slack = (gh.state.dispatches.find((d) => d.inputs.sha === slackPr.sha)!.inputs as Record<string, string>).request_id!;
  clock += 60_000;
  const pass = await flow.smokeOn(PUBLIC, "maint");
  await flow.runToEnd(PUBLIC, pass.runId!, pass.id!, { "smoke.log": PASSING_LOG, "verdict.json": runnerFacts({ throughput: { gpu: "H100" } }) }, { whileRunning: tick(3) });
  ids.pass = pass.id!;
  clock += 60_000;
  const flat = await flow.smokeOn(PUBLIC, "maint");
  await flow.runToEnd(PUBLIC, flat.runId!, flat.id!, { "smoke.log": trainingLog("real-probe/s2_gloo_cp4_flat.v2.log"), "verdict.json": runnerFacts({ probeKey: probeKeyOf("s2_gloo_cp4_flat.v2.log") }) }, { whileRunning: tick(2) });
  ids.flat = flat.id!;
  clock += 60_000;
  await flow.smokeOn(PUBLIC, "outsider"); // read access only: refused
  clock += 60_000;
  const secret = await flow.smokeOn(PRIVATE, "maint");
  await flow.runToEnd(PRIVATE, secret.runId!, secret.id!, { "smoke.log": trainingLog(PASSING_RUN_LOG), "verdict.json": runnerFacts() }, { whileRunning: tick(4) });
  ids.secret = secret.id!;
  if (CHROMIUM) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await bot?.stop();
  await store?.close();
  await gh?.close();
  await slack?.close();
});

/** Signs in through the fake GitHub's OAuth pages, as a person would. */
const signIn = (page: Page, login: string, start = "/runs") => signInWithGitHub(page, bot.url, login, start);

const rowRepos = (page: Page) => page.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-repo")));

describe.skipIf(!CHROMIUM)("/runs in Chromium", () => {
  it("asks for sign-in, then lists every run the user can read, newest first, with verdict, evidence, TFLOP/s and GPU minutes", async () => {
    await onPage(browser, "runs-maint", async ({ page, problems }) => {
      await page.goto(`${bot.url}/runs`);
      expect(await page.textContent("h1")).toBe("Sign in to see the smoke runs");
      await signIn(page, "maint");
      expect(await page.textContent("header .who")).toContain("Signed in as maint");
      expect(await rowRepos(page)).toEqual(["acme/secret-models", "acme/mb", "acme/mb", "acme/mb", "acme/mb", "acme/mb"]);
      expect((await page.locator(`tr[data-id="${ids.button}"] td`).allTextContents()).slice(3, 6)).toEqual(["maint", "check-run button", "dispatched"]);
      expect((await page.locator(`tr[data-id="${ids.slack}"] td`).allTextContents()).slice(3, 6)).toEqual(["maint", "Slack", "dispatched"]);
      const pass = page.locator(`tr[data-id="${ids.pass}"]`);
      const cells = await pass.locator("td").allTextContents();
      expect(cells.slice(1, 7)).toEqual(["acme/mb", expect.stringMatching(/^#\d+$/), "maint", "PR comment", "completed", "pass"]);
      expect(cells[8]).toMatch(/^HCP on: 4 probe report\(s\)/); // the signed reports of the real CP=4 run
      expect(cells[9]).toBe("412.3");
      expect(cells[10]).toBe("12.0"); // 4 GPUs × 3 minutes between the runner starting and the run finishing
      const links = await pass.locator("td:last-child a").evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute("href")]));
      expect(links.map((l) => l[0])).toEqual(["PR", "check run", "Actions run"]);
      expect(links[0]![1]).toMatch(new RegExp(`^${gh.url}/acme/mb/pull/\\d+$`));
      expect(links[1]![1]).toMatch(new RegExp(`^${gh.url}/acme/mb/runs/\\d+$`));
      expect(links[2]![1]).toMatch(/\/actions\/runs\/\d+$/);
      const flat = await page.locator(`tr[data-id="${ids.flat}"] td`).allTextContents();
      expect(flat[6]).toBe("hcp-inactive");
      expect(flat[7]).toMatch(/^hcp-flat: /);
      expect(flat[8]).toMatch(/^HCP off/);
      const refused = page.locator("tr", { hasText: "outsider" });
      expect(await refused.locator("td.state").textContent()).toBe("refused");
      await page.setViewportSize({ width: 1440, height: 700 });
      await page.screenshot({ path: join(SCREENSHOTS, "..", "pages", "runs.png"), fullPage: true });

      // Filters: repository, state, requester.
      await page.selectOption("select[name=state]", "refused");
      await page.click("form.filters button");
      expect(await rowRepos(page)).toEqual(["acme/mb"]);
      expect(new URL(page.url()).searchParams.get("state")).toBe("refused");
      await page.goto(`${bot.url}/runs?repo=acme/secret-models`);
      expect(await rowRepos(page)).toEqual(["acme/secret-models"]);
      await page.goto(`${bot.url}/runs?requester=outsider`);
      expect(await page.locator("table.runs tbody tr td:nth-child(4)").allTextContents()).toEqual(["outsider"]);

      // Cookies: the session is HttpOnly and SameSite, and no page carries the token.
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.name === "hcp_session")!;
      expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" });
      expect(await page.evaluate(() => document.cookie)).toBe("");
      const token = [...gh.state.tokens.values()].find((t) => t.user === "maint")!.token;
      expect(await page.content()).not.toContain(token);
      expect(session.value).not.toContain(token);
      expect(problems).toEqual([]);
    });
  });

  it("shows one run: the verdict as in the check run, the evidence lines and the audit trail", async () => {
    await onPage(browser, "runs-detail", async ({ page, problems }) => {
      await signIn(page, "maint", `/runs/${ids.pass}`);
      expect(new URL(page.url()).pathname).toBe(`/runs/${ids.pass}`);
      // The check run's own text, as the fake GitHub holds it, and the page's.
      const check = [...gh.state.checkRuns.values()].find((c) => c.externalId?.split(" ")[0] === ids.pass)!;
      expect(await page.textContent("#check-run h3")).toBe("✅ Smoke run passed");
      expect(check.output.title).toBe("Smoke run passed");
      expect(check.output.summary).toContain("HCP smoke run: PASS");
      expect(await page.textContent("#check-run")).toContain("HCP smoke run: PASS");
      expect(await page.textContent("#evidence pre")).toMatch(/HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0/);
      const trail = await page.locator("#audit li").allTextContents();
      expect(trail[0]).toMatch(/maint asked \(PR comment\) for llama32_1b_pretrain_config at/);
      expect(trail.some((t) => /dispatched to the GPU runner; bound to Actions run \d+/.test(t))).toBe(true);
      expect(trail.some((t) => /audit: smoke allowed by maint, run \d+/.test(t))).toBe(true);
      expect(trail.some((t) => /audit: verdict allowed by maint, run \d+, verdict pass/.test(t))).toBe(true);
      expect(trail.at(-1)).toMatch(/completed: verdict pass|audit: verdict/);
      expect(await page.locator("#ab-comparison").count()).toBe(0); // no compare=: no A/B section (test/web/ab-slot.browser.test.ts)
      await page.screenshot({ path: join(SCREENSHOTS, "..", "pages", "run.png"), fullPage: true });
      // Sign out: a same-site form with the session's CSRF token.
      await page.click("header .who button");
      await page.waitForURL(`${bot.url}/runs`);
      expect(await page.textContent("h1")).toBe("Sign in to see the smoke runs");
      expect(problems).toEqual([]);
    });
  });

  it("shows a signed-in user without access to a private repository nothing of its runs", async () => {
    await onPage(browser, "runs-outsider", async ({ page, problems }) => {
      await signIn(page, "outsider");
      expect(await rowRepos(page)).toEqual(["acme/mb", "acme/mb", "acme/mb", "acme/mb", "acme/mb"]);
      const html = await page.content();
      expect(html).not.toContain("secret-models");
      expect(html).not.toContain(ids.secret);
      await page.goto(`${bot.url}/runs?repo=acme/secret-models`);
      expect(await page.locator("#no-runs").count()).toBe(1);
      expect(await page.content()).not.toContain("acme/secret-models</option>");
      const direct = await page.goto(`${bot.url}/runs/${ids.secret}`);
      expect(direct?.status()).toBe(404);
      const missing = await page.goto(`${bot.url}/runs/no-such-run`);
      expect(missing?.status()).toBe(404);
      // The same page for "not yours" and "not there": nothing confirms the private run exists.
      expect((await page.textContent("main"))!.replace("no-such-run", "X")).toBe((await (async () => {
        await page.goto(`${bot.url}/runs/${ids.secret}`);
        return (await page.textContent("main"))!.replace(ids.secret!, "X");
      })()));
      expect(problems).toEqual([]);
    });
  });
});
