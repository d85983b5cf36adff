import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { INSTALLATION_ID, OWNER, REPO, client, seededFake, statusOf, type Client } from "./testkit.ts";
import type { FakeGitHub } from "./server.ts";

let fake: FakeGitHub;
let octokit: Client;
let token: string;
const repo = { owner: OWNER, repo: REPO };

beforeEach(async () => {
  ({ fake, octokit, token } = await seededFake());
});
afterEach(async () => {
  await fake.close();
});

function seedPr(files: { filename: string; patch?: string; contents?: string; status?: "added" | "modified" | "removed" }[], number = 1) {
  return fake.addPullRequest({ ...repo, number, head: { ref: "feature", sha: "a".repeat(40) }, user: "author", files });
}

describe("pull request files", () => {
  it("paginates 250 files with Link headers, 100 per page at most", async () => {
    seedPr(Array.from({ length: 250 }, (_, i) => ({ filename: `recipes/r${i}.py`, contents: `x = ${i}\n`, status: "added" as const })));
    const first = await octokit.rest.pulls.listFiles({ ...repo, pull_number: 1, per_page: 500 });
    expect(first.data).toHaveLength(100);
    expect(first.headers.link).toContain('rel="next"');
    expect(first.headers.link).toContain("page=3");
    expect(first.headers.link).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/api\/v3\/repos\//);
    const all = await octokit.paginate(octokit.rest.pulls.listFiles, { ...repo, pull_number: 1, per_page: 100 });
    expect(all.map((f) => f.filename)).toEqual(Array.from({ length: 250 }, (_, i) => `recipes/r${i}.py`));
    expect(all[3]?.patch).toBe("@@ -0,0 +1,1 @@\n+x = 3");
    expect(all[3]?.additions).toBe(1);
    expect(fake.calls.filter((c) => c.operationId === "pulls/list-files")).toHaveLength(4);
    expect(fake.violations).toEqual([]);
  });

  it("stops at GitHub's 3000-file cap", async () => {
    seedPr(Array.from({ length: 3005 }, (_, i) => ({ filename: `f${i}.txt`, patch: "@@ -1 +1 @@\n-a\n+b" })));
    const all = await octokit.paginate(octokit.rest.pulls.listFiles, { ...repo, pull_number: 1, per_page: 100 });
    expect(all).toHaveLength(3000);
    expect(fake.violations).toEqual([]);
  });

  it("serves the pull request itself, shaped like GitHub's", async () => {
    seedPr([{ filename: "recipes/llama3.py", contents: "def recipe():\n    cfg = 2\n    return cfg\n" }]);
    const { data } = await octokit.rest.pulls.get({ ...repo, pull_number: 1 });
    expect(data.head.sha).toBe("a".repeat(40));
    expect(data.base.ref).toBe("main");
    expect(data.user.login).toBe("author");
    expect(data.changed_files).toBe(1);
    const files = await octokit.rest.pulls.listFiles({ ...repo, pull_number: 1 });
    expect(files.data[0]?.status).toBe("modified");
    expect(files.data[0]?.patch).toContain("-    cfg = 1\n+    cfg = 2");
    expect(fake.violations).toEqual([]);
    expect(await statusOf(octokit.rest.pulls.get({ ...repo, pull_number: 99 }))).toBe(404);
  });
});

describe("contents and git data", () => {
  it("returns base64 content at a ref and 404 when absent", async () => {
    seedPr([{ filename: "recipes/new.py", contents: "cp = 2\n", status: "added" }]);
    const { data } = await octokit.rest.repos.getContent({ ...repo, path: "recipes/new.py", ref: "a".repeat(40) });
    if (Array.isArray(data) || data.type !== "file") throw new Error("expected a file");
    expect(Buffer.from(data.content, "base64").toString()).toBe("cp = 2\n");
    // the head tree also carries the unchanged base files
    const readme = await octokit.rest.repos.getContent({ ...repo, path: "README.md", ref: "feature" });
    expect(Array.isArray(readme.data)).toBe(false);
    expect(await statusOf(octokit.rest.repos.getContent({ ...repo, path: "recipes/new.py", ref: "main" }))).toBe(404);
    expect(await statusOf(octokit.rest.repos.getContent({ ...repo, path: "nope.txt" }))).toBe(404);
    const dir = await octokit.rest.repos.getContent({ ...repo, path: "recipes" });
    expect(Array.isArray(dir.data) ? dir.data.map((e) => e.path) : []).toEqual(["recipes/llama3.py"]);
    const raw = await octokit.rest.repos.getContent({ ...repo, path: "README.md", mediaType: { format: "raw" } });
    expect(String(raw.data)).toBe("# bridge\n");
    expect(fake.violations).toEqual([]);
  });

  it("lists trees, blobs and refs", async () => {
    const tree = await octokit.rest.git.getTree({ ...repo, tree_sha: "main", recursive: "1" });
    expect(tree.data.tree.map((e) => `${e.type}:${e.path}`).sort()).toEqual(["blob:README.md", "blob:recipes/llama3.py", "tree:recipes"]);
    const blobEntry = tree.data.tree.find((e) => e.path === "README.md");
    const blob = await octokit.rest.git.getBlob({ ...repo, file_sha: blobEntry?.sha ?? "" });
    expect(Buffer.from(blob.data.content, "base64").toString()).toBe("# bridge\n");
    const sub = await octokit.rest.git.getTree({ ...repo, tree_sha: tree.data.tree.find((e) => e.path === "recipes")?.sha ?? "" });
    expect(sub.data.tree.map((e) => e.path)).toEqual(["llama3.py"]);
    const ref = await octokit.rest.git.getRef({ ...repo, ref: "heads/main" });
    expect(ref.data.object.sha).toMatch(/^[0-9a-f]{40}$/);
    const matching = await octokit.rest.git.listMatchingRefs({ ...repo, ref: "heads/ma" });
    expect(matching.data.map((r) => r.ref)).toEqual(["refs/heads/main"]);
    expect(await statusOf(octokit.rest.git.getRef({ ...repo, ref: "heads/nope" }))).toBe(404);
    expect(fake.violations).toEqual([]);
  });
});

describe("spec referee", () => {
  it("answers 422 like GitHub for a body that breaks the schema, and records a violation", async () => {
    const res = await fetch(`${fake.apiUrl}/repos/${OWNER}/${REPO}/check-runs`, {
      method: "POST", headers: { authorization: `token ${token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "hcp" }),
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { message: string; errors: { field: string }[]; documentation_url: string };
    expect(body.message).toBe("Invalid request.");
    expect(body.errors[0]?.field).toBe("head_sha");
    expect(body.documentation_url).toContain("checks/create");
    expect(fake.violations).toHaveLength(1);
    expect(fake.violations[0]).toMatchObject({ kind: "request-body", operationId: "checks/create" });
  });

  it("answers 404 for a route GitHub does not have, and records a violation", async () => {
    expect(await statusOf(octokit.request("GET /repos/{owner}/{repo}/hcp-settings", repo))).toBe(404);
    expect(fake.violations).toEqual([expect.objectContaining({ kind: "unknown-route", path: `/repos/${OWNER}/${REPO}/hcp-settings` })]);
  });

  it("requires authorization on every route and rejects unknown tokens", async () => {
    const bare = await fetch(`${fake.url}/repos/${OWNER}/${REPO}`);
    expect(bare.status).toBe(401);
    expect(await statusOf(client(fake, "ghs_forged").rest.repos.get(repo))).toBe(401);
    const gql = await fetch(`${fake.url}/graphql`, { method: "POST", body: "{}" });
    expect(gql.status).toBe(401);
  });

  it("hides repositories of other installations from an installation token", async () => {
    fake.addInstallation({ id: 8, account: "someone-else" });
    fake.addRepo({ owner: "someone-else", repo: "private-stuff" });
    expect(await statusOf(octokit.rest.repos.get({ owner: "someone-else", repo: "private-stuff" }))).toBe(404);
    const other = client(fake, fake.installationToken(8));
    expect((await other.rest.repos.get({ owner: "someone-else", repo: "private-stuff" })).data.full_name).toBe("someone-else/private-stuff");
  });

  it("sends GitHub's request-id and rate-limit headers", async () => {
    const first = await octokit.rest.repos.get(repo);
    const second = await octokit.rest.repos.get(repo);
    expect(first.headers["x-github-request-id"]).toBeTruthy();
    expect(first.headers["x-ratelimit-limit"]).toBe("5000");
    expect(Number(first.headers["x-ratelimit-remaining"]) - Number(second.headers["x-ratelimit-remaining"])).toBe(1);
    expect(first.data.default_branch).toBe("main");
    expect(fake.violations).toEqual([]);
  });
});

describe("failure injection", () => {
  it("injects one 500 on the review POST, then the next call succeeds", async () => {
    seedPr([{ filename: "recipes/new.py", contents: "cp = 2\n", status: "added" }]);
    fake.inject({ method: "POST", path: /\/pulls\/1\/reviews$/, status: 500 });
    const review = { ...repo, pull_number: 1, event: "COMMENT" as const, body: "HCP findings" };
    expect(await statusOf(octokit.rest.pulls.createReview(review))).toBe(500);
    expect(fake.pendingInjections()).toHaveLength(0);
    const ok = await octokit.rest.pulls.createReview(review);
    expect(ok.data.state).toBe("COMMENTED");
    expect(fake.calls.filter((c) => c.path.endsWith("/reviews")).map((c) => [c.status, c.injected])).toEqual([[500, true], [200, false]]);
    expect(fake.violations).toEqual([]);
  });

  it("injects a secondary rate limit with retry-after, consumed in order", async () => {
    fake.inject({
      path: /\/issues\/1\/comments$/, status: 403, times: 2, headers: { "retry-after": "1" },
      body: { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", documentation_url: "https://docs.github.com/rest" },
    });
    fake.inject({ path: /\/issues\/1\/comments$/, status: 502 });
    fake.addIssue({ ...repo, number: 1 });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${fake.apiUrl}/repos/${OWNER}/${REPO}/issues/1/comments`, { headers: { authorization: `token ${token}` } });
      expect(res.status).toBe(403);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(((await res.json()) as { message: string }).message).toContain("secondary rate limit");
    }
    expect(await statusOf(octokit.rest.issues.listComments({ ...repo, issue_number: 1 }))).toBe(502);
    expect((await octokit.rest.issues.listComments({ ...repo, issue_number: 1 })).status).toBe(200);
  });

  it("lets Probot's throttling plugin wait out retry-after and succeed", async () => {
    fake.addIssue({ ...repo, number: 1 });
    fake.inject({ method: "POST", path: /\/issues\/1\/comments$/, status: 403, headers: { "retry-after": "1" }, body: { message: "You have exceeded a secondary rate limit", documentation_url: "https://docs.github.com/rest" } });
    const retrying = client(fake, token, { throttle: { enabled: true, onSecondaryRateLimit: () => true, onRateLimit: () => true } });
    const started = Date.now();
    const res = await retrying.rest.issues.createComment({ ...repo, issue_number: 1, body: "hi" });
    expect(res.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(fake.calls.filter((c) => c.method === "POST").map((c) => c.status)).toEqual([403, 201]);
  });
});

describe("installation auth through Probot", () => {
  it("exchanges the app JWT for an installation token and uses it", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const { privateKey, publicKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048, privateKeyEncoding: { type: "pkcs1", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" },
    });
    await fake.close();
    const { startFakeGitHub } = await import("./server.ts");
    fake = await startFakeGitHub({ appId: 42, appPublicKey: publicKey });
    fake.addInstallation({ id: INSTALLATION_ID, account: OWNER });
    fake.addRepo({ ...repo });
    const { Probot } = await import("probot");
    const probot = new Probot({ appId: 42, privateKey, baseUrl: fake.apiUrl, logLevel: "warn" });
    const app = await probot.auth();
    const inst = await app.rest.apps.getRepoInstallation(repo);
    expect(inst.data.id).toBe(INSTALLATION_ID);
    const installed = await probot.auth(INSTALLATION_ID);
    const { data } = await installed.rest.repos.get(repo);
    expect(data.full_name).toBe(`${OWNER}/${REPO}`);
    expect(fake.calls.map((c) => c.operationId)).toEqual(["apps/get-repo-installation", "apps/create-installation-access-token", "repos/get"]);
    expect(fake.violations).toEqual([]);
    // an installation token cannot call app endpoints, and a JWT signed by another key is refused
    // (Octokit switches to the JWT for app routes by itself, so use fetch)
    const asInstallation = await fetch(`${fake.apiUrl}/repos/${OWNER}/${REPO}/installation`, { headers: { authorization: `token ${fake.installationToken(INSTALLATION_ID)}` } });
    expect(asInstallation.status).toBe(401);
    const other = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs1", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    // the way the deployed app finds it: GHE_HOST + GHE_PROTOCOL=http -> http://HOST/api/v3
    const { createProbot } = await import("probot");
    const fromEnv = createProbot({ env: { GHE_HOST: fake.url.replace("http://", ""), GHE_PROTOCOL: "http", APP_ID: "42", PRIVATE_KEY: privateKey, WEBHOOK_SECRET: "s", LOG_LEVEL: "warn" } });
    expect((await (await fromEnv.auth(INSTALLATION_ID)).rest.repos.get(repo)).data.default_branch).toBe("main");
    expect(fake.calls.at(-1)).toMatchObject({ path: `/repos/${OWNER}/${REPO}`, status: 200 });
    const forged = new Probot({ appId: 42, privateKey: other.privateKey, baseUrl: fake.apiUrl, logLevel: "warn" });
    expect(await statusOf((await forged.auth()).rest.apps.getRepoInstallation(repo))).toBe(401);
  });
});
