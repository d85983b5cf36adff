// The playground's "Rank layout" section in a real browser: the hcp018 example's fix
// proposes sizes, and the page draws that layout's groups (the same text grid as
// `hcp-bot advise`), with nothing added to the page but text.
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rankGrid } from "../../src/core/advise/ranks.ts";
import { CHROMIUM, launchBrowser, onPage } from "../support/browser.ts";
import { type Started } from "../support/cli.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { servePages } from "../support/setup-mode.ts";

let server: Started;
let base = "";
let browser: Browser;

beforeAll(async () => {
  ({ server, base } = await servePages("layout"));
  if (CHROMIUM) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
});

describe.skipIf(!CHROMIUM)("the playground's rank layout", () => {
  it("draws the groups of the sizes hcp018's fix proposes", async () => {
    await onPage(browser, "playground-layout", async ({ page, problems }) => {
      await page.goto(`${base}/playground?example=hcp018`);
      await page.waitForSelector("body[data-ready=true]", { timeout: PATIENCE_MS });
      await page.waitForSelector("#results pre.layout-grid", { timeout: PATIENCE_MS });
      const heading = (await page.locator("#results pre.layout-grid").first().evaluate((el) => el.previousElementSibling?.textContent)) ?? "";
      const m = /a2a (\d+) × p2p (\d+), TP (\d+), 8-GPU NVLink domains/.exec(heading);
      expect(m, heading).not.toBeNull();
      const [a2a, p2p, tp] = [Number(m![1]), Number(m![2]), Number(m![3])];
      expect(tp).toBe(2);
      expect(tp * a2a).toBeLessThanOrEqual(8); // the proposal keeps the a2a level inside a node
      const grid = (await page.textContent("#results pre.layout-grid")) ?? "";
      const groups = rankGrid({ tp, cp: a2a * p2p, sizes: [a2a, p2p] });
      expect(grid).toContain(`a0 [${groups.levels[0]![0]!.join(", ")}]`);
      expect(grid).toContain(`p0 [${groups.levels[1]![0]!.join(", ")}]`);
      expect(grid).toMatch(/^node 1 +GPU/m);
      expect(await page.locator("#results svg, #results img, #results script").count()).toBe(0);
      expect(problems).toEqual([]);
    });
  });
});
