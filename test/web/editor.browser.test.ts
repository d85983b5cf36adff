// The playground's editor and its links in a real browser (Chromium), served by `hcp-bot
// serve`: a finding is an underline and a gutter mark with its message on hover, "Apply fix"
// makes the text the CLI's fix makes, typing re-analyzes, and a copied link (the text in the
// URL fragment, which no request carries) reproduces the finding in a fresh page.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Edit } from "../../src/core/model/source.ts";
import { CHROMIUM, launchBrowser, onPage } from "../support/browser.ts";
import { hcpBot, root, type Started } from "../support/cli.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { servePages } from "../support/setup-mode.ts";

const EXAMPLES = join(root, "fixtures", "playground");
const EDITOR = "#source .cm-content";

let server: Started;
let base = "";
let browser: Browser;

beforeAll(async () => {
  ({ server, base } = await servePages("editor"));
  if (CHROMIUM) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
});

async function open(page: Page, path: string): Promise<{ url: string; body: string | null }[]> {
  const requests: { url: string; body: string | null }[] = [];
  page.on("request", (r) => requests.push({ url: r.url(), body: r.postData() }));
  await page.goto(`${base}${path}`);
  await page.waitForSelector("body[data-ready=true]", { timeout: PATIENCE_MS });
  return requests;
}

async function settled(page: Page): Promise<string> {
  await page.waitForFunction(() => document.getElementById("status")?.dataset.state === "ok", undefined, { timeout: PATIENCE_MS });
  return (await page.textContent("#status")) ?? "";
}

async function editorText(page: Page): Promise<string> {
  return (await page.locator(`${EDITOR} .cm-line`).allTextContents()).join("\n");
}

async function pasteIntoEditor(page: Page, text: string): Promise<void> {
  await page.click(EDITOR);
  await page.keyboard.press("Control+A");
  await page.locator(EDITOR).evaluate((el, t) => {
    const data = new DataTransfer();
    data.setData("text/plain", t);
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

function applyEdits(text: string, edits: readonly Edit[]): string {
  return [...edits].sort((a, b) => b.range.start.offset - a.range.start.offset).reduce((t, e) => t.slice(0, e.range.start.offset) + e.newText + t.slice(e.range.end.offset), text);
}

describe.skipIf(!CHROMIUM)("the playground's editor in Chromium", () => {
  it("marks hcp001's finding in the text and the gutter, says it on hover, and applies the CLI's fix in one click", async () => {
    await onPage(browser, "editor-hcp001", async ({ page, problems }) => {
      await open(page, "/playground?example=hcp001");
      expect(await settled(page)).toMatch(/^1 error\(s\)/);
      const text = readFileSync(join(EXAMPLES, "hcp001.py"), "utf8");
      expect(await editorText(page)).toBe(text);
      // Line numbers and Python highlighting (the keyword `def` in its own styled span).
      expect(await page.locator("#source .cm-lineNumbers .cm-gutterElement").filter({ hasText: /^14$/ }).count()).toBe(1);
      expect(await page.locator(`${EDITOR} span`).filter({ hasText: /^def$/ }).count()).toBeGreaterThan(0);

      const mark = page.locator(`${EDITOR} .cm-lintRange-error`);
      expect(await mark.count()).toBe(1);
      const line = text.split("\n").findIndex((l) => l.includes("cp_comm_type")) + 1;
      expect(await mark.evaluate((el) => el.closest(".cm-line")?.textContent)).toBe(text.split("\n")[line - 1]);
      expect(await page.locator("#source .cm-gutter-lint .cm-lint-marker-error").count()).toBe(1);
      // The mark is drawn with CSS (the CSP refuses lint's data: images): a wavy underline in the error colour.
      expect(await mark.evaluate((el) => getComputedStyle(el).textDecorationStyle)).toBe("wavy");

      await mark.hover();
      const tooltip = page.locator("#source .cm-tooltip-lint");
      await tooltip.waitFor({ timeout: PATIENCE_MS });
      expect(await tooltip.textContent()).toMatch(/^Error HCP001: model\.cp_comm_type is 'a2a\+p2p'/);

      const cli = await hcpBot(["lint", join(EXAMPLES, "hcp001.py"), "--format", "json"]);
      const findings = (JSON.parse(cli.stdout) as { findings: { fix?: { edits: Edit[] } }[] }).findings;
      const fixed = applyEdits(text, findings[0]!.fix!.edits);
      await tooltip.getByRole("button", { name: "Apply fix" }).click();
      expect(await editorText(page)).toBe(fixed);
      // The edit is re-analyzed: the fixed text has no finding left, and no mark.
      await page.waitForFunction(() => /^0 error\(s\), 0 warning\(s\)/.test(document.getElementById("status")?.textContent ?? ""), undefined, { timeout: PATIENCE_MS });
      expect(await mark.count()).toBe(0);
      expect(await page.inputValue("#example")).toBe("");

      // Typing (keys, not a paste) is analyzed as you type: a CP the sizes do not multiply to.
      await page.locator(`${EDITOR} .cm-line`).filter({ hasText: "context_parallel_size = 4" }).click();
      await page.keyboard.press("End");
      await page.keyboard.press("Backspace");
      await page.keyboard.type("8");
      await page.waitForFunction(() => document.querySelector("#inline article.comment[data-rule=HCP002]") !== null, undefined, { timeout: PATIENCE_MS });
      expect(await page.locator(`${EDITOR} .cm-lintRange-error`).count()).toBeGreaterThan(0);
      expect(problems).toEqual([]);
    });
  });

  it("puts the text and settings in the link's fragment, which no request carries, and the link reproduces the finding", async () => {
    const typed = "model:\n  context_parallel_size: 8\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n";
    let link = "";
    await onPage(browser, "editor-share-make", async ({ page, problems }) => {
      const requests = await open(page, "/playground?example=clean");
      await settled(page);
      await pasteIntoEditor(page, typed);
      await page.waitForFunction(() => document.querySelector("#inline article.comment[data-rule=HCP002]") !== null, undefined, { timeout: PATIENCE_MS });
      await page.selectOption("#kind", "yaml");
      await page.fill("#gpus", "4");
      await page.press("#gpus", "Enter");
      await settled(page);
      await page.click("#copy-link");
      await page.waitForFunction(() => (document.getElementById("link-status")?.textContent ?? "") !== "", undefined, { timeout: PATIENCE_MS });
      expect(await page.textContent("#link-status")).toMatch(/^(Link copied|Copy the link from the address bar)/);
      link = page.url();
      const url = new URL(link);
      expect(url.searchParams.has("example")).toBe(false);
      expect(url.hash).toMatch(/^#code=[A-Za-z0-9_-]+$/);
      expect(requests.some((r) => r.url.includes("code=") || r.url.includes("context_parallel_size") || (r.body ?? "").includes("context_parallel_size"))).toBe(false);
      expect(problems).toEqual([]);
    });
    await onPage(browser, "editor-share-open", async ({ page, problems }) => {
      const requests = await open(page, new URL(link).pathname + new URL(link).search + new URL(link).hash);
      await settled(page);
      expect(await editorText(page)).toBe(typed);
      expect(await page.inputValue("#kind")).toBe("yaml");
      expect(await page.inputValue("#gpus")).toBe("4");
      expect(await page.locator("#inline article.comment[data-rule=HCP002]").count()).toBe(1);
      expect(await page.locator(`${EDITOR} .cm-lintRange-error`).count()).toBeGreaterThan(0);
      expect(requests.some((r) => r.url.includes("code="))).toBe(false);
      expect(problems).toEqual([]);
    });
    await onPage(browser, "editor-share-damaged", async ({ page }) => {
      await open(page, `/playground#code=${new URL(link).hash.slice(6, 30)}`);
      await page.waitForFunction(() => document.getElementById("status")?.dataset.state === "error", undefined, { timeout: PATIENCE_MS });
      expect(await page.textContent("#status")).toMatch(/^This link's text could not be read/);
    });
  });
});
