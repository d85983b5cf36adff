// The A/B comparison on /runs/ID in a real browser (Chromium): A/B runs made by the smoke flow
// through the real server and the fake GitHub (comment webhook with compare=p2p, dispatch, one
// artifact with both legs' real logs, verdict) into the SQLite store, then the page as a
// signed-in maintainer sees it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { abArtifact } from "../support/ab-logs.ts";
import { appKeys, botSettings } from "../support/bot-harness.ts";
import { CHROMIUM, launchBrowser, onPage, SCREENSHOTS, signInWithGitHub } from "../support/browser.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { addSmokeRepo, SmokeFlow, type FlowRepo } from "../support/smoke-flow.ts";

const SECRET = "ab-web-secret";
const CLIENT = { clientId: "Iv1.ab-test", clientSecret: "client-secret-for-ab-tests-0123456789" };
const REPO: FlowRepo = { owner: "acme", repo: "mb", installation: 9 };
/** What a crashing p2p leg printed, hostile on purpose: it must stay text. */
const HOSTILE = [
  "[rank0]: Traceback (most recent call last):",
  '[rank0]:   File "/opt/megatron-bridge/scripts/training/run_recipe.py", line 97, in <module>',
  "[rank0]:     main()",
  '[rank0]: RuntimeError: <img src=x onerror="document.title=\'owned\'"> **bold** [link](https://evil.invalid)',
].join("\n");

let gh: FakeGitHub;
let bot: RunningServer;
let browser: Browser;
let store: SqliteStore;
const ids: Record<string, string> = {};

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 80, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: REPO.installation, account: "acme", accountType: "Organization" });
  addSmokeRepo(gh, REPO);
  gh.addOAuthApp(CLIENT);
  gh.setPermission("maint", "write", "acme/mb");
  gh.setPermission("author", "write", "acme/mb");
  const settings = botSettings({
    githubUrl: gh.url,
    appId: 80,
    secret: SECRET,
    dataDir: mkdtempSync(join(tmpdir(), "hcp-ab-web-")),
    extra: { HCP_RUNS_ACCESS: "github", GITHUB_CLIENT_ID: CLIENT.clientId, GITHUB_CLIENT_SECRET: CLIENT.clientSecret },
  });
  store = SqliteStore.open(settings.dataDir);
  bot = await startServer(settings, { store, sweepIntervalMs: 0, smoke: { runLookup: { attempts: 2, delayMs: 10 } } });
  const flow = new SmokeFlow({ gh, bot: () => bot, secret: SECRET });
  const ab = async (name: string, files: Record<string, string> | undefined) => {
    const sent = await flow.smokeOn(REPO, "maint", "/hcp smoke compare=p2p");
    ids[name] = sent.id!;
    if (files) await flow.runToEnd(REPO, sent.runId!, sent.id!, files);
  };
  await ab("faster", abArtifact({ ms: [5200, 1000], lmLoss: [11.7712, 11.5021] }, { ms: [5400, 1180], lmLoss: [11.7712, 11.5022] }));
  await ab("implausible", abArtifact({ ms: [2000, 350], lmLoss: [11.7712, 11.5021] }, { ms: [2100, 1190], lmLoss: [11.7712, 11.5022] }));
  await ab("refFailed", abArtifact({ ms: [5000, 1000], lmLoss: [11.7712, 11.5021] }, { failed: true, tail: HOSTILE }));
  await ab("pending", undefined);
  if (CHROMIUM) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await bot?.stop();
  await store?.close();
  await gh?.close();
});

const signIn = (page: Page, start: string) => signInWithGitHub(page, bot.url, "maint", start);

const legCells = (page: Page, leg: string) => page.locator(`#ab-comparison tr[data-leg="${leg}"] td`).allTextContents();

describe.skipIf(!CHROMIUM)("the A/B comparison on /runs/ID in Chromium", () => {
  it("shows the ratio, both legs and the loss per iteration for an A/B run where HCP is faster", async () => {
    await onPage(browser, "ab-faster", async ({ page, problems }) => {
      await signIn(page, `/runs/${ids.faster}`);
      expect(await page.textContent("#ab-comparison h2")).toBe("A/B comparison");
      expect(await page.textContent("#ab-comparison .ab-summary strong")).toBe("HCP 1.18x the p2p throughput");
      expect(await legCells(page, "HCP")).toEqual(["a2a+p2p (HCP)", "pass", "HCP on [2, 2]: 4 signed probe report(s)", "245.0", "1000.0"]);
      expect(await legCells(page, "Reference")).toEqual(["p2p", "pass", "flat CP: 4 signed probe report(s) without hierarchical levels", "207.6", "1180.0"]);
      const losses = await page.locator("#ab-comparison table.ab-losses tbody tr").evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)));
      expect(losses).toEqual([["1", "11.7712", "11.7712", "0.00 %"], ["2", "11.5021", "11.5022", "0.00 %"]]);
      expect(await page.locator("#ab-comparison .ab-flags").count()).toBe(0);
      expect(await page.textContent("#check-run h3")).toContain("Smoke run passed · HCP 1.18x the p2p throughput");
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.locator("#ab-comparison").screenshot({ path: join(SCREENSHOTS, "..", "pages", "ab.png") });
      expect(problems).toEqual([]);
    });
  });

  it("flags the implausible speedup (AB001) and shows the bound", async () => {
    await onPage(browser, "ab-implausible", async ({ page, problems }) => {
      await signIn(page, `/runs/${ids.implausible}`);
      expect(await page.locator("#ab-comparison .ab-summary.flagged").count()).toBe(1);
      expect(await page.textContent('#ab-comparison li[data-flag="AB001"]')).toMatch(/HCP 3\.40x the p2p throughput, beyond the 1\.65x/);
      expect(await page.textContent("#ab-comparison")).toMatch(/f = 0\.5 .* r = 0\.6667 .* CP 4 \[2, 2\]/);
      expect(await page.textContent(".facts .verdict-hcp-inactive")).toBe("hcp-inactive");
      expect(problems).toEqual([]);
    });
  });

  it("says why the comparison is missing when the reference leg failed, with the log's text kept as text", async () => {
    await onPage(browser, "ab-ref-failed", async ({ page, problems }) => {
      await signIn(page, `/runs/${ids.refFailed}`);
      expect(await page.getAttribute("#ab-comparison .ab-summary", "data-ab")).toBe("missing");
      expect(await page.textContent("#ab-comparison .ab-summary strong")).toMatch(/^No p2p comparison: the p2p reference leg failed \(/);
      expect(await legCells(page, "HCP")).toEqual(expect.arrayContaining(["pass"]));
      expect(await page.textContent(".facts dd .verdict-pass")).toBe("pass");
      // The crash text is in the page as text: no img element, no link, the title untouched.
      expect(await page.locator("#ab-comparison img, #ab-comparison a").count()).toBe(0);
      expect(await page.title()).not.toBe("owned");
      const why = (await store.getSmokeRequest(ids.refFailed!))!.comparison!.why!;
      expect(why).toContain('<img src=x onerror="document.title');
      expect(await page.textContent("#ab-comparison .ab-summary")).toContain('<img src=x onerror="document.title');
      expect(problems).toEqual([]);
    });
  });

  it("says a comparison is still to come for an A/B run in progress", async () => {
    await onPage(browser, "ab-pending", async ({ page, problems }) => {
      await signIn(page, `/runs/${ids.pending}`);
      expect(await page.textContent('#ab-comparison [data-ab="pending"]')).toMatch(/A\/B run against p2p: no comparison yet \(it comes when the run finishes\)/);
      expect(problems).toEqual([]);
    });
  });
});
