// The playground links each finding to its rule's page on the same server (the inline
// comment's documentation link, the Rule column of the check run's and the summary's table,
// the rule section), and following the link in Chromium opens that page, styled, with no
// CSP violation and no request to another origin. Served by `hcp-bot serve` as `npm start` runs it.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launchBrowser, onPage } from "../support/browser.ts";
import type { Started } from "../support/cli.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { servePages } from "../support/setup-mode.ts";

let server: Started;
let base = "";
let browser: Browser;

beforeAll(async () => {
  ({ server, base } = await servePages("rule-links"));
  if (CHROMIUM) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
});

describe.skipIf(!CHROMIUM)("rule links in the playground", () => {
  it("link each finding to its rule's page on this server, and the page opens there", async () => {
    await onPage(browser, "playground-rule-links", async ({ page, problems }) => {
      const origins = new Set<string>();
      page.on("request", (r) => origins.add(new URL(r.url()).origin));
      await page.goto(`${base}/playground?example=hcp001`);
      await page.waitForSelector("body[data-ready=true]", { timeout: PATIENCE_MS });
      await page.waitForSelector("#inline article.comment", { timeout: PATIENCE_MS });
      const comment = page.locator('#inline article.comment[data-rule="HCP001"] a[href="/docs/rules/HCP001"]');
      expect(await comment.textContent()).toBe("HCP001 documentation");
      expect(await page.locator('#check table a[href="/docs/rules/HCP001"]').textContent()).toBe("HCP001");
      expect(await page.locator('#summary table a[href="/docs/rules/HCP001"]').textContent()).toBe("HCP001");
      expect(await page.locator('#rules a.rule-page[href="/docs/rules/HCP001"]').count()).toBe(1);

      await Promise.all([page.waitForURL(`${base}/docs/rules/HCP001`, { timeout: PATIENCE_MS }), comment.click()]);
      expect(await page.textContent("h1")).toBe("HCP001: a2a-p2p-without-sizes");
      expect(await page.textContent("pre.code")).toContain('cfg.model.cp_comm_type = "a2a+p2p"');
      // The style sheet applied (CSP allows 'self' styles): the page's main column is bounded.
      expect(await page.evaluate(() => getComputedStyle(document.querySelector("main")!).maxWidth)).toBe("1100px");
      await page.click('a[href="/docs/rules"][rel]');
      await page.waitForURL(`${base}/docs/rules`, { timeout: PATIENCE_MS });
      expect(await page.locator('table a[href^="/docs/rules/HCP"]').count()).toBeGreaterThan(20);
      expect(problems).toEqual([]);
      expect([...origins]).toEqual([base]);
    });
  });
});
