// The playground in a real browser (Chromium), served by `hcp-bot serve` exactly as
// `npm start` runs it without credentials: linked from Probot's setup page, findings for a
// broken recipe and none for a clean one, the suggestion diff equal to the CLI's fix, and
// bad input (5 MB, binary, deep nesting) answered with a message while the page stays
// responsive. Every request the page makes is recorded: none leaves the server's origin,
// none carries the pasted text.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Edit } from "../../src/core/model/source.ts";
import { ANALYSIS_TIMEOUT_MS } from "../../src/web/playground/input.ts";
import { CHROMIUM, launchBrowser, onPage, SCREENSHOTS } from "../support/browser.ts";
import { hcpBot, root, type Started } from "../support/cli.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { servePages } from "../support/setup-mode.ts";

const EXAMPLES = join(root, "fixtures", "playground");

let server: Started;
let base = "";
let browser: Browser;

beforeAll(async () => {
  ({ server, base } = await servePages("playground"));
  if (CHROMIUM) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
});

/** Opens a playground URL and waits for the page script; records every request the page makes. */
async function open(page: Page, path: string): Promise<{ requests: { url: string; method: string; body: string | null }[] }> {
  const requests: { url: string; method: string; body: string | null }[] = [];
  page.on("request", (r) => requests.push({ url: r.url(), method: r.method(), body: r.postData() }));
  await page.goto(`${base}${path}`);
  await page.waitForSelector("body[data-ready=true]", { timeout: PATIENCE_MS });
  return { requests };
}

/** The editor's editable element (CodeMirror's, inside the #source host's shadow root: Playwright's selectors pierce it). */
const EDITOR = "#source .cm-content";

/** The editor's text, line by line as CodeMirror draws it. */
async function editorText(page: Page): Promise<string> {
  return (await page.locator(`${EDITOR} .cm-line`).allTextContents()).join("\n");
}

/**
 * Replaces the editor's text as a user does: Ctrl+A in the editor, then a paste (a real
 * ClipboardEvent, as the browser fires it for Ctrl+V, which CodeMirror reads).
 */
async function pasteIntoEditor(page: Page, text: string): Promise<void> {
  await page.click(EDITOR);
  await page.keyboard.press("Control+A");
  await page.locator(EDITOR).evaluate((el, t) => {
    const data = new DataTransfer();
    data.setData("text/plain", t);
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

async function waitFor(what: string, done: () => boolean, timeoutMs = PATIENCE_MS): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !done(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function settled(page: Page): Promise<string> {
  await page.waitForFunction(() => document.getElementById("status")?.dataset.state !== "busy", undefined, { timeout: PATIENCE_MS });
  return (await page.textContent("#status")) ?? "";
}

/** What the CLI's fix makes of the file: its edits applied, last first. */
function applyEdits(text: string, edits: readonly Edit[]): string {
  return [...edits].sort((a, b) => b.range.start.offset - a.range.start.offset).reduce((t, e) => t.slice(0, e.range.start.offset) + e.newText + t.slice(e.range.end.offset), text);
}

describe.skipIf(!CHROMIUM)("the playground in Chromium", () => {
  it("is linked from the setup page and served with a strict Content-Security-Policy", async () => {
    const setup = await (await fetch(`${base}/probot`)).text();
    expect(setup).toContain('href="/playground"');
    const res = await fetch(`${base}/playground`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(csp).not.toMatch(/'unsafe-inline'|'unsafe-eval'|https?:|\*/);
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*src="\/playground\/page\.js")/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect((await fetch(`${base}/playground/worker.js`)).headers.get("content-type")).toMatch(/javascript/);
    expect((await fetch(`${base}/playground/tree-sitter-python.wasm`)).headers.get("content-type")).toBe("application/wasm");
    expect((await fetch(`${base}/playground/../package.json`)).status).not.toBe(200);
  });

  it("renders hcp001's finding as the PR review would, with a suggestion equal to the CLI's fix", async () => {
    await onPage(browser, "playground-hcp001", async ({ page, problems }) => {
      const { requests } = await open(page, "/playground?example=hcp001");
      expect(await settled(page)).toMatch(/^1 error\(s\), 0 warning\(s\)/);
      expect(await page.textContent("#privacy")).toMatch(/^Nothing leaves this page\. What you paste is analyzed here, in your browser/);
      expect(await page.textContent("#check .conclusion")).toMatch(/^Failure: 1 error/);
      const comments = page.locator("#inline article.comment");
      expect(await comments.count()).toBe(1);
      expect(await comments.first().getAttribute("data-rule")).toBe("HCP001");
      expect(await comments.first().textContent()).toContain("hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'");
      // The rule docs, as `hcp-bot explain` prints them.
      const explain = await hcpBot(["explain", "HCP001"]);
      expect((await page.textContent("#rules pre.explain"))?.trim()).toBe(explain.stdout.trim());
      // The summary comment's table.
      expect(await page.locator("#summary table tbody tr").count()).toBe(1);
      expect(await page.textContent("#summary table tbody tr")).toContain("HCP001");

      // The suggestion diff against `hcp-bot lint --format json`.
      const text = readFileSync(join(EXAMPLES, "hcp001.py"), "utf8");
      const dir = mkdtempSync(join(tmpdir(), "hcp-cli-"));
      writeFileSync(join(dir, "recipe.py"), text);
      const cli = await hcpBot(["lint", join(dir, "recipe.py"), "--format", "json"]);
      const findings = (JSON.parse(cli.stdout) as { findings: { ruleId: string; fix?: { edits: Edit[] } }[] }).findings;
      expect(findings.map((f) => f.ruleId)).toEqual(["HCP001"]);
      const fixed = applyEdits(text, findings[0]!.fix!.edits);
      const box = page.locator(".suggestion");
      const start = Number(await box.getAttribute("data-start-line"));
      const end = Number(await box.getAttribute("data-end-line"));
      const removed = await box.locator(".diff-line.del .txt").allTextContents();
      const added = await box.locator(".diff-line.add .txt").allTextContents();
      const lines = text.split("\n");
      expect(removed).toEqual(lines.slice(start - 1, end));
      expect([...lines.slice(0, start - 1), ...added, ...lines.slice(end)].join("\n")).toBe(fixed);
      expect(added.join("\n")).toContain("hierarchical_context_parallel_sizes = [2, 2]");

      await page.screenshot({ path: join(SCREENSHOTS, "..", "pages", "playground.png"), fullPage: true });
      expect(problems).toEqual([]);
      const origins = new Set(requests.map((r) => new URL(r.url).origin));
      expect([...origins]).toEqual([base]);
      expect(requests.every((r) => r.method === "GET")).toBe(true);
    });
  });

  it("shows no findings for the clean example and none for what a user types in", async () => {
    await onPage(browser, "playground-clean", async ({ page, problems }) => {
      const { requests } = await open(page, "/playground?example=clean");
      expect(await settled(page)).toMatch(/^0 error\(s\), 0 warning\(s\), 0 note\(s\) in 1 configuration/);
      expect(await page.textContent("#check .conclusion")).toMatch(/^Success: HCP settings look right/);
      expect(await page.locator("#inline article.comment").count()).toBe(0);
      expect(await page.textContent("#summary")).toContain("No summary comment");

      // Typed text: a YAML override whose sizes do not multiply to CP, with markup in a value.
      const typed = "model:\n  context_parallel_size: 8\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n  name: <img src=x onerror=alert(1)>\n";
      await pasteIntoEditor(page, typed);
      await page.waitForFunction(() => document.querySelector("#inline article.comment[data-rule=HCP002]") !== null, undefined, { timeout: PATIENCE_MS });
      expect(await page.inputValue("#kind")).toBe("auto");
      expect(await page.textContent("#status")).toContain("read as yaml override file");
      expect(await page.locator("#results img").count()).toBe(0);
      expect(requests.some((r) => (r.body ?? "").includes("context_parallel_size") || r.url.includes("context_parallel_size"))).toBe(false);
      expect(problems).toEqual([]);
    });
  });

  it("judges a pasted training script on the server's index of upstream recipes, fetched without the text, and names the Bridge version", async () => {
    await onPage(browser, "playground-upstream-index", async ({ page, problems }) => {
      const { requests } = await open(page, "/playground?example=clean");
      await settled(page);
      // Issue 27 item 8: a user's script that starts from an upstream recipe (CP 2 in Bridge 0.7.0's recipes/llama/h100/llama3.py).
      const script = 'from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\n\nif __name__ == "__main__":\n    cfg = llama3_8b_pretrain_config()\n    cfg.model.cp_comm_type = "a2a+p2p"\n';
      await pasteIntoEditor(page, script);
      await page.waitForFunction(() => document.querySelector("#inline article.comment[data-rule=HCP001]") !== null, undefined, { timeout: PATIENCE_MS });
      expect(await page.textContent("#inline article.comment[data-rule=HCP001]")).toMatch(/No two-level split of context_parallel_size 2 fits/);
      expect(await page.textContent("#results")).toMatch(/base-from-index: .*Megatron-Bridge 0\.7\.0 \(067f987\)/);
      const fetched = requests.filter((r) => r.url.endsWith("/playground/megatron-bridge-recipes.json"));
      expect(fetched.map((r) => r.method)).toEqual(["GET"]);
      expect(requests.some((r) => (r.body ?? "").includes("cp_comm_type") || r.url.includes("cp_comm_type"))).toBe(false);
      expect(problems).toEqual([]);
    });
  });

  it("stops an analysis that outlasts its time limit, stays responsive, and reviews the next edit in a fresh worker", async () => {
    await onPage(browser, "playground-worker-timeout", async ({ page, problems }) => {
      // The worker's grammar download stalls (a dead proxy, a hung connection): its analysis
      // never answers. The page must give up after ANALYSIS_TIMEOUT_MS, replace the worker,
      // and the replacement must serve the next edit.
      const held: Route[] = [];
      let stall = true;
      const grammarFetches: number[] = [];
      await page.route("**/playground/tree-sitter-python.wasm", async (route) => {
        grammarFetches.push(Date.now());
        if (stall) held.push(route);
        else await route.continue();
      });
      await open(page, "/playground");
      await pasteIntoEditor(page, readFileSync(join(EXAMPLES, "hcp001.py"), "utf8"));
      await page.waitForFunction(() => document.getElementById("status")?.dataset.state === "busy", undefined, { timeout: PATIENCE_MS });
      const busySince = Date.now();
      // The worker asks for the grammar as it starts (on a loaded machine, maybe only now).
      await waitFor("the worker to ask for the grammar", () => grammarFetches.length >= 1);
      // While the worker hangs, the page's own thread answers at once.
      const t0 = Date.now();
      expect(await page.evaluate(() => document.getElementById("source")?.shadowRoot?.querySelector(".cm-content") instanceof HTMLElement)).toBe(true);
      expect(Date.now() - t0).toBeLessThan(ANALYSIS_TIMEOUT_MS / 2); // a blocked page would answer only after the timeout

      await page.waitForFunction(() => document.getElementById("status")?.dataset.state === "error", undefined, { timeout: PATIENCE_MS });
      expect(Date.now() - busySince).toBeGreaterThanOrEqual(ANALYSIS_TIMEOUT_MS - 1000);
      expect(await page.textContent("#status")).toBe(`The analysis took longer than ${ANALYSIS_TIMEOUT_MS / 1000} s and was stopped. Try a smaller piece of the file.`);
      expect(await page.getAttribute("#status", "role")).toBe("alert");
      expect(await page.locator("#results > *").count()).toBe(0);
      // A fresh worker was started: it asks for the grammar again.
      await waitFor("a fresh worker to ask for the grammar after the timeout", () => grammarFetches.length >= 2);

      // The network is back: the held downloads go on (the stopped worker's has nobody left
      // to read it; the fresh worker's completes), and the next edit is reviewed.
      stall = false;
      for (const route of held.splice(0)) await route.continue().catch(() => undefined);
      await pasteIntoEditor(page, readFileSync(join(EXAMPLES, "clean.py"), "utf8"));
      await page.waitForFunction(() => document.getElementById("status")?.dataset.state === "ok", undefined, { timeout: PATIENCE_MS });
      expect(await page.textContent("#status")).toMatch(/^0 error\(s\), 0 warning\(s\), 0 note\(s\)/);
      expect(await page.locator("#inline article.comment").count()).toBe(0);
      expect(problems).toEqual([]);
    });
  });

  it("answers a 5 MB paste, a binary file and deeply nested code with a message, and stays responsive", async () => {
    await onPage(browser, "playground-bad-input", async ({ page, problems }) => {
      await open(page, "/playground");
      const huge = "x = 1\n".repeat(Math.ceil((5 * 1024 * 1024) / 6));
      // A real paste event, as the browser fires it for Ctrl+V.
      const inserted = await page.evaluate((t) => {
        const area = document.getElementById("source")!.shadowRoot!.querySelector<HTMLElement>(".cm-content")!;
        area.focus();
        const data = new DataTransfer();
        data.setData("text/plain", t);
        const event = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
        area.dispatchEvent(event);
        return !event.defaultPrevented;
      }, huge);
      expect(inserted).toBe(false);
      await page.waitForFunction(() => document.getElementById("status")?.dataset.state === "error", undefined, { timeout: PATIENCE_MS });
      expect(await page.textContent("#status")).toMatch(/^The pasted text is 5\.2 MB; the playground analyzes up to 1\.0 MB\. Run `npx hcp-bot lint FILE`/);
      expect(await page.getAttribute("#status", "role")).toBe("alert");
      expect(await editorText(page)).toBe("");
      // Responsive: the page answers script at once and the next edit is reviewed.
      const t0 = Date.now();
      expect(await page.evaluate(() => 1 + 1)).toBe(2);
      expect(Date.now() - t0).toBeLessThan(ANALYSIS_TIMEOUT_MS / 2); // a blocked page would answer only after the timeout

      await page.setInputFiles("#file", { name: "weights.py", mimeType: "application/octet-stream", buffer: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0xff, 0xfe, 0x00, 0x01, 0x02]) });
      await page.waitForFunction(() => /binary data/.test(document.getElementById("status")?.textContent ?? ""), undefined, { timeout: PATIENCE_MS });
      expect(await page.textContent("#status")).toMatch(/^weights\.py: This is binary data \(it contains NUL bytes\)/);

      const deep = `X = ${"(".repeat(190)}1${")".repeat(190)}\n\ndef deep_config():\n    cfg = _pretrain_common()\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    cfg.model.tensor_model_parallel_size = ${"[".repeat(190)}${"]".repeat(190)}\n    return cfg\n`;
      const before = await page.textContent("#status");
      await pasteIntoEditor(page, deep);
      await page.waitForFunction((old) => document.getElementById("status")?.textContent !== old, before, { timeout: PATIENCE_MS });
      const status = await settled(page);
      // 190 nested parentheses (Python stops at 200) before the recipe: the recipe after them is still judged.
      expect(status).toMatch(/^1 error\(s\), 0 warning\(s\)/);
      expect(await page.locator("#inline article.comment[data-rule=HCP001]").count()).toBe(1);
      expect(await page.evaluate(() => document.title)).toBe("hcp-bot playground");

      // Enter in the GPUs field reviews again (no form post, which the CSP would refuse).
      await page.fill("#gpus", "4");
      await page.press("#gpus", "Enter");
      await page.selectOption("#example", "hcp001");
      await page.waitForFunction(() => document.querySelector("#inline article.comment[data-rule=HCP001]") !== null, undefined, { timeout: PATIENCE_MS });
      expect(problems).toEqual([]);
    });
  });
});
