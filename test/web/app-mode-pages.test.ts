// `hcp-bot serve` started as the GitHub App (app credentials, the compiled binary, a fake
// GitHub on loopback) with HCP_PUBLIC_URL set: `/` is the landing page linking the
// playground, the run history when it is on and the rule pages; a signed pull-request
// delivery gets a review whose comment and check-run table link the rule's page at
// HCP_PUBLIC_URL, the link answers that page from this very server, and `hcp-bot lint
// --format sarif` under the same setting points helpUri there too.
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_CSP } from "../../src/web/server/headers.ts";
import { appKeys, botEnv, hcpRecipe, pullRequestPayload } from "../support/bot-harness.ts";
import { hcpBot, startHcpBot, type Started } from "../support/cli.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const SECRET = "app-mode-pages-secret";
const APP_ID = 5150;
const OWNER = "acme";
const REPO = "mb";
const INSTALLATION = 11;
const RECIPE_PATH = "src/megatron/bridge/recipes/llama/llama3.py";
/** a2a+p2p without hierarchical_context_parallel_sizes: HCP001. */
const BROKEN = hcpRecipe("llama3_8b", { sizes: false });

/** A port nobody listens on now: HCP_PUBLIC_URL must name the server before it starts. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts `hcp-bot serve` in app mode and resolves once it listens. */
async function serveApp(gh: FakeGitHub, port: number, extra: Record<string, string>): Promise<Started> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...botEnv({ githubUrl: gh.url, appId: APP_ID, secret: SECRET }), LOG_LEVEL: "info" as const, LOG_FORMAT: "json" as const, PORT: String(port), ...extra };
  const server = startHcpBot(["serve"], { env });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within ${PATIENCE_MS} ms:\n${out}`)), PATIENCE_MS);
    const look = (d: Buffer | string) => {
      out += d.toString();
      if (/listening on port \d+/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    server.child.stderr!.on("data", look);
    server.child.stdout!.on("data", look);
    server.child.once("exit", (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return server;
}

async function until<T>(what: string, check: () => T | undefined): Promise<T> {
  for (const deadline = Date.now() + PATIENCE_MS; ; ) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let gh: FakeGitHub;
let server: Started;
let base = "";

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: APP_ID, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
  gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { "README.md": "# repo\n" } } });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = await serveApp(gh, port, { HCP_PUBLIC_URL: base });
});

afterAll(async () => {
  server?.child.kill("SIGTERM");
  await gh?.close();
});

describe("hcp-bot serve as the GitHub App", () => {
  it("answers / with the landing page: the playground, the rule pages, no run history while it is off", async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(PAGE_CSP);
    const text = await res.text();
    expect(text).toContain('<a href="/playground">Playground</a>');
    expect(text).toContain('<a href="/docs/rules">Rules</a>');
    expect(text).not.toContain('<a href="/runs">Smoke runs</a>:');
    // Each page it links answers on this server.
    for (const path of ["/playground", "/docs/rules", "/web/style.css"]) expect((await fetch(`${base}${path}`)).status, path).toBe(200);
  });

  it("links the run history on the landing page when it is on (GitHub sign-in configured)", async () => {
    const port = await freePort();
    const other = await serveApp(gh, port, { HCP_RUNS_ACCESS: "github", GITHUB_CLIENT_ID: "Iv1.pages", GITHUB_CLIENT_SECRET: "client-secret-pages", HCP_SESSION_SECRET: "s".repeat(40) });
    try {
      const text = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      expect(text).toContain('<a href="/runs">Smoke runs</a>:');
      expect(text).toContain('<a href="/docs/rules">Rules</a>');
    } finally {
      other.child.kill("SIGTERM");
    }
  });

  it("reviews a pull request with links to the rule's page at HCP_PUBLIC_URL, which this server answers", async () => {
    const head = "d".repeat(40);
    gh.addCommit({ owner: OWNER, repo: REPO, branch: "feature-1", base: "main", sha: head, files: { [RECIPE_PATH]: BROKEN } });
    gh.addPullRequest({ owner: OWNER, repo: REPO, number: 1, head: { sha: head, ref: "feature-1" }, files: [{ filename: RECIPE_PATH, contents: BROKEN, status: "added" }] });
    const body = JSON.stringify(pullRequestPayload({ githubUrl: gh.url, owner: OWNER, repo: REPO, installation: INSTALLATION, action: "opened", number: 1, head }));
    const res = await fetch(`${base}/api/github/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": randomUUID(), "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}` },
      body,
    });
    expect(res.status).toBeLessThan(300);
    const link = `${base}/docs/rules/HCP001`;
    const comment = await until("the HCP001 inline comment", () => [...gh.state.reviewComments.values()].find((c) => c.pullNumber === 1 && c.body.includes("**HCP001**")));
    expect(comment.body).toContain(`[HCP001 documentation](${link})`);
    const check = await until("the completed check run", () => [...gh.state.checkRuns.values()].find((c) => c.headSha === head && c.status === "completed"));
    expect(check.output.summary).toContain(`[HCP001](${link})`);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(PAGE_CSP);
    expect(await page.text()).toContain("<h1>HCP001: a2a-p2p-without-sizes</h1>");
  });

  it("hcp-bot lint --format sarif under the same HCP_PUBLIC_URL gives each rule that page as helpUri", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-sarif-links-"));
    writeFileSync(join(dir, "llama3.py"), BROKEN);
    const run = await hcpBot(["lint", join(dir, "llama3.py"), "--format", "sarif"], { env: { ...process.env, HCP_PUBLIC_URL: base, HCP_DOCS_URL: "" } });
    const sarif = JSON.parse(run.stdout) as { runs: { tool: { driver: { rules: { id: string; helpUri?: string }[] } } }[] };
    const rules = sarif.runs[0]!.tool.driver.rules;
    expect(rules.find((r) => r.id === "HCP001")?.helpUri).toBe(`${base}/docs/rules/HCP001`);
    for (const r of rules) {
      const res = await fetch(r.helpUri!);
      expect(res.status, r.id).toBe(200);
      await res.body?.cancel();
    }
  });
});
