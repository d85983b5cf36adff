// A real browser for the page tests: Debian's Chromium (the `chromium` apt package, which
// .ci/run installs) driven by playwright-core, which never downloads a browser of its own.
// Without Chromium the browser suites are skipped with a message saying how to get it,
// except under CI, where a missing browser fails the run.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];

export const CHROMIUM = CANDIDATES.find((p): p is string => !!p && existsSync(p));
export const SCREENSHOTS = join(import.meta.dirname, "..", "..", "test-results", "screenshots");

export const NO_BROWSER_MESSAGE =
  "Chromium not found (looked for $CHROMIUM_PATH, /usr/bin/chromium): the browser tests are skipped. Install it with `apt-get install -y chromium` (.ci/run does).";

if (!CHROMIUM) {
  if (process.env.CI) throw new Error(NO_BROWSER_MESSAGE.replace("are skipped", "cannot run"));
  console.warn(NO_BROWSER_MESSAGE);
}

export function launchBrowser(): Promise<Browser> {
  // --no-sandbox: the tests run as root (CI containers), where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

export interface PageProbe {
  page: Page;
  /**
   * Console errors (CSP violations among them), page errors, and scripts, styles, images or
   * WebAssembly that failed to load. A page answered 401 or 404 on purpose is not one.
   */
  problems: string[];
}

/**
 * Runs `fn` on a fresh page; on failure a full-page screenshot goes to
 * test-results/screenshots/NAME.png before the error is rethrown.
 */
export async function onPage(browser: Browser, name: string, fn: (probe: PageProbe) => Promise<void>): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    // Chromium logs every 4xx, documents included; sub-resources are checked below instead.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of")) problems.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && r.request().resourceType() !== "document") problems.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  try {
    await fn({ page, problems });
  } catch (error) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const file = join(SCREENSHOTS, `${name.replace(/[^\w-]+/g, "-")}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    if (error instanceof Error) error.message += `\n(screenshot: ${file})`;
    throw error;
  } finally {
    await context.close();
  }
}

/** Signs in to the bot's /runs pages through the fake GitHub's OAuth pages, as a person would. */
export async function signInWithGitHub(page: Page, botUrl: string, login: string, start = "/runs"): Promise<void> {
  await page.goto(`${botUrl}${start}`);
  await page.click("a.signin");
  await page.waitForURL(/\/login\/oauth\/authorize/);
  await page.fill("#login_field", login);
  await page.click("button[name=authorize]");
  await page.waitForURL((u) => u.pathname.startsWith("/runs"));
}
