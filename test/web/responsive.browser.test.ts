// The playground on every screen and without a mouse, in a real browser (Chromium): at 375
// and 1280 px nothing is wider than the viewport (screenshots of both go to test-results/screenshots, or to docs/ with HCP_UPDATE_SCREENSHOTS=1), the
// severity is a word in its colour, keyboard focus moves in reading order and is visible,
// axe-core finds no serious or critical violation, and with JavaScript off the page says
// what it needs and where the same checks run.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launchBrowser, onPage, SCREENSHOTS } from "../support/browser.ts";
import { root, type Started } from "../support/cli.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { servePages } from "../support/setup-mode.ts";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
// The pictures in docs/ are rewritten only when asked (HCP_UPDATE_SCREENSHOTS=1), so a test run
// leaves the checkout as it was; every run writes them under test-results/screenshots.
const PICTURES = process.env.HCP_UPDATE_SCREENSHOTS === "1" ? join(root, "docs") : SCREENSHOTS;
const WIDTHS = [375, 1280] as const;

let server: Started;
let base = "";
let browser: Browser;

beforeAll(async () => {
  ({ server, base } = await servePages("responsive"));
  if (CHROMIUM) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
});

async function openReviewed(page: Page, width: number, example = "hcp001"): Promise<void> {
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${base}/playground?example=${example}`);
  await page.waitForSelector("body[data-ready=true]", { timeout: PATIENCE_MS });
  await page.waitForFunction(() => document.getElementById("status")?.dataset.state === "ok" && document.querySelector("#check") !== null, undefined, { timeout: PATIENCE_MS });
}

/** What has keyboard focus, looking into the editor's shadow root. */
function focused(page: Page): Promise<{ id: string; outline: string }> {
  return page.evaluate(() => {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    if (!el) return { id: "", outline: "none" };
    const editor = el.closest(".cm-editor");
    // The editor shows focus on its frame (.cm-focused), the other controls on themselves.
    const style = getComputedStyle(editor ?? el);
    const id = editor ? "editor" : el.id || `${el.tagName.toLowerCase()}:${(el.textContent ?? "").trim().slice(0, 20)}`;
    return { id, outline: `${style.outlineStyle} ${style.outlineWidth}` };
  });
}

describe.skipIf(!CHROMIUM)("the playground on every screen", () => {
  for (const width of WIDTHS) {
    it(`lays out within ${width} px, with the review ${width >= 1280 ? "beside" : "below"} the editor`, async () => {
      await onPage(browser, `responsive-${width}`, async ({ page, problems }) => {
        await openReviewed(page, width);
        const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }));
        expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
        const editor = (await page.locator("#source").boundingBox())!;
        const review = (await page.locator("#results").boundingBox())!;
        expect(editor.x + editor.width).toBeLessThanOrEqual(width);
        if (width >= 1280) expect(review.x).toBeGreaterThanOrEqual(editor.x + editor.width);
        else expect(review.y).toBeGreaterThanOrEqual(editor.y + editor.height);
        // The findings table's Finding column is on screen, not scrolled out of sight in its box.
        const finding = (await page.locator("#summary tbody td:last-child").boundingBox())!;
        expect(finding.x).toBeGreaterThanOrEqual(0);
        expect(finding.x + finding.width).toBeLessThanOrEqual(review.x + review.width);
        expect(await page.locator("#summary tbody td:last-child").evaluate((el) => el.closest(".table-wrap")!.scrollWidth <= el.closest(".table-wrap")!.clientWidth)).toBe(true);
        await page.screenshot({ path: join(PICTURES, width >= 1280 ? "playground.png" : `playground-${width}.png`), fullPage: true });
        expect(problems).toEqual([]);
      });
    });
  }

  it("says the severity in words and in its colour", async () => {
    await onPage(browser, "responsive-severity", async ({ page }) => {
      await openReviewed(page, 1280);
      const cell = page.locator("#summary td.sev-error");
      expect(await cell.count()).toBe(1);
      expect(await cell.textContent()).toMatch(/error$/);
      expect(await cell.evaluate((el) => getComputedStyle(el).color)).toBe("rgb(209, 36, 47)");
      const badge = page.locator("#inline article.comment.comment-error .comment-head .sev");
      expect(await badge.textContent()).toBe("Error");
      expect(await badge.evaluate((el) => getComputedStyle(el).color)).toBe("rgb(209, 36, 47)");
    });
  });

  it("moves keyboard focus in reading order, shows it, and lets Tab leave the editor", async () => {
    await onPage(browser, "responsive-keyboard", async ({ page, problems }) => {
      await openReviewed(page, 1280);
      const order: string[] = [];
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press("Tab");
        const f = await focused(page);
        order.push(f.id);
        expect(f.outline, `focus on ${f.id} is visible`).toMatch(/^(solid|auto) [1-9]/);
      }
      const controls = ["example", "kind", "gpus", "file", "analyze", "copy-link", "editor"];
      const at = controls.map((id) => order.indexOf(id));
      expect(at.every((i) => i >= 0), order.join(", ")).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      // Tab goes on past the editor (into the review), not into an indent.
      expect(order[at[at.length - 1]! + 1]).not.toBe("editor");
      expect(order.slice(0, at[0]!)).toEqual(["a:hcp-bot", "a:Playground", "a:Smoke runs", "a:Rules"]);
      // The findings and their fixes without a mouse: Ctrl+Shift+M in the editor opens CodeMirror's list of them.
      await page.locator("#source .cm-content").focus();
      await page.keyboard.press("Control+Shift+M");
      const panel = page.locator("#source .cm-panel-lint");
      await panel.waitFor({ timeout: PATIENCE_MS });
      expect(await panel.locator("li").first().textContent()).toMatch(/^Error HCP001: /);
      expect(await panel.getByRole("button", { name: "Apply fix" }).count()).toBe(1);
      expect(problems).toEqual([]);
    });
  });

  for (const width of WIDTHS) {
    it(`has no serious or critical axe-core violation at ${width} px`, async () => {
      // axe is injected as an inline script, which the page's CSP refuses: this context alone bypasses it.
      const context = await browser.newContext({ bypassCSP: true });
      try {
        const page = await context.newPage();
        await openReviewed(page, width);
        await page.addScriptTag({ content: AXE });
        const violations = await page.evaluate(async () => {
          const result = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown }[] }[] }> } }).axe.run();
          return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 3) }));
        });
        expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }

  it("says what it needs and where the same checks run when JavaScript is off", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 375, height: 800 } });
    try {
      const page = await context.newPage();
      await page.goto(`${base}/playground`);
      const notice = page.locator("#noscript");
      expect(await notice.isVisible()).toBe(true);
      expect(await notice.textContent()).toMatch(/needs JavaScript[\s\S]*npx hcp-bot lint FILE/);
      expect(await page.locator("#controls").isVisible()).toBe(false);
      expect(await page.locator("#status").isVisible()).toBe(false);
    } finally {
      await context.close();
    }
  });
});
