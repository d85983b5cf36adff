import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OWNER, REPO, seededFake, statusOf, type Client } from "./testkit.ts";
import type { FakeGitHub } from "./server.ts";
import { readStoredZip, storedZip } from "./zip.ts";
import { parsePatch, findDiffLine, unifiedDiff } from "./diff.ts";
import { parseQuery } from "./graphql.ts";
import { loadGitHubSpec } from "./spec.ts";

let fake: FakeGitHub;
let octokit: Client;
let token: string;
const repo = { owner: OWNER, repo: REPO };
const HEAD = "d".repeat(40);

beforeEach(async () => {
  ({ fake, octokit, token } = await seededFake());
  fake.addPullRequest({
    ...repo, number: 9, head: { ref: "feat", sha: HEAD },
    files: [{ filename: "recipes/a.py", contents: "cp = 2\n", status: "added" }, { filename: "bin/blob.bin", contents: new Uint8Array([0, 1, 2]), status: "added" }],
  });
});
afterEach(async () => {
  await fake.close();
});

describe("GraphQL batched file contents", () => {
  it("answers aliased object(expression:) lookups, with variables, under /api/graphql", async () => {
    const query = `query ($owner: String!, $name: String!) {
      repository(owner: $owner, name: $name) {
        f0: object(expression: "${HEAD}:recipes/a.py") { __typename ... on Blob { text byteSize isBinary } }
        f1: object(expression: "${HEAD}:README.md") { ... on Blob { text } }
        f2: object(expression: "${HEAD}:missing.py") { ... on Blob { text } }
        f3: object(expression: "${HEAD}:bin/blob.bin") { ... on Blob { text isBinary byteSize } }
        f4: object(expression: "main:recipes") { __typename ... on Tree { entries { name type } } }
      }
    }`;
    const data = await octokit.graphql<{ repository: Record<string, unknown> }>(query, { owner: OWNER, name: REPO });
    expect(data.repository).toEqual({
      f0: { __typename: "Blob", text: "cp = 2\n", byteSize: 7, isBinary: false },
      f1: { text: "# bridge\n" },
      f2: null,
      f3: { text: null, isBinary: true, byteSize: 3 },
      f4: { __typename: "Tree", entries: [{ name: "llama3.py", type: "blob" }] },
    });
    expect(fake.calls.at(-1)).toMatchObject({ path: "/api/graphql", operationId: "graphql", status: 200 });
  });

  it("refuses unknown fields and too many objects, and reports a missing repository", async () => {
    const ask = (query: string) => fetch(`${fake.url}/graphql`, { method: "POST", headers: { authorization: `bearer ${token}` }, body: JSON.stringify({ query }) }).then((r) => r.json() as Promise<{ data?: unknown; errors?: { message: string }[] }>);
    expect((await ask(`{ repository(owner: "${OWNER}", name: "${REPO}") { object(expression: "main:README.md") { ... on Blob { color } } } }`)).errors?.[0]?.message).toBe("Field 'color' doesn't exist on type 'Blob'");
    const many = Array.from({ length: 501 }, (_, i) => `f${i}: object(expression: "main:README.md") { oid }`).join(" ");
    expect((await ask(`{ repository(owner: "${OWNER}", name: "${REPO}") { ${many} } }`)).errors?.[0]?.message).toContain("exceeds max complexity of 500");
    const missing = await ask(`{ repository(owner: "${OWNER}", name: "nope") { nameWithOwner } }`);
    expect(missing).toMatchObject({ data: { repository: null }, errors: [{ type: "NOT_FOUND" }] });
  });

  it("parses aliases, inline fragments, variables and comments", () => {
    const sel = parseQuery(`query Q($a: String! = "x") { # c\n r: repository(owner: $a, name: "n") { ... on Repository { id } } }`);
    expect(sel).toMatchObject([{ kind: "field", alias: "r", name: "repository", args: { owner: { kind: "var", name: "a" } }, selections: [{ kind: "fragment", typeName: "Repository" }] }]);
  });
});

describe("actions", () => {
  it("dispatches with return_run_details, then serves the run, jobs, logs, artifacts and cancel", async () => {
    fake.addWorkflow({ ...repo, id: 77, path: ".github/workflows/hcp-smoke.yml", inputs: { sha: { required: true }, recipe: {} } });
    const dispatched = await octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      ...repo, workflow_id: "hcp-smoke.yml", ref: "main", inputs: { sha: HEAD, recipe: "llama3" }, return_run_details: true,
    });
    expect(dispatched.status).toBe(200);
    const runId = (dispatched.data as { workflow_run_id: number }).workflow_run_id;
    expect(fake.state.dispatches).toEqual([expect.objectContaining({ workflowId: 77, ref: "main", inputs: { sha: HEAD, recipe: "llama3" }, runId })]);
    const run = await octokit.rest.actions.getWorkflowRun({ ...repo, run_id: runId });
    expect(run.data).toMatchObject({ id: runId, status: "queued", event: "workflow_dispatch", head_branch: "main" });

    const job = fake.addJob({ runId, name: "smoke", log: "step 2 | loss 1.0\n" });
    fake.addArtifact({ runId, name: "smoke-log", files: { "smoke.log": "hello\n", "verdict.json": "{}" } });
    const jobs = await octokit.rest.actions.listJobsForWorkflowRun({ ...repo, run_id: runId });
    expect(jobs.data.jobs.map((j) => j.id)).toEqual([job.id]);
    const log = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ ...repo, job_id: job.id });
    expect(String(log.data)).toBe("step 2 | loss 1.0\n");
    const artifacts = await octokit.rest.actions.listWorkflowRunArtifacts({ ...repo, run_id: runId, name: "smoke-log" });
    expect(artifacts.data.total_count).toBe(1);
    const zip = await octokit.rest.actions.downloadArtifact({ ...repo, artifact_id: artifacts.data.artifacts[0]!.id, archive_format: "zip" });
    expect(readStoredZip(new Uint8Array(zip.data as ArrayBuffer))).toEqual({ "smoke.log": "hello\n", "verdict.json": "{}" });

    expect((await octokit.rest.actions.cancelWorkflowRun({ ...repo, run_id: runId })).status).toBe(202);
    expect((await octokit.rest.actions.getWorkflowRun({ ...repo, run_id: runId })).data.conclusion).toBe("cancelled");
    expect(await statusOf(octokit.rest.actions.cancelWorkflowRun({ ...repo, run_id: runId }))).toBe(409);
    expect(fake.violations).toEqual([]);
  });

  it("answers 204 without return_run_details and refuses unknown refs and undeclared inputs", async () => {
    fake.addWorkflow({ ...repo, id: 78, path: ".github/workflows/w.yml", inputs: { sha: { required: true } } });
    const plain = await octokit.rest.actions.createWorkflowDispatch({ ...repo, workflow_id: 78, ref: "main", inputs: { sha: HEAD } });
    expect(plain.status).toBe(204);
    expect(await statusOf(octokit.rest.actions.createWorkflowDispatch({ ...repo, workflow_id: 78, ref: "nope", inputs: { sha: HEAD } }))).toBe(422);
    expect(await statusOf(octokit.rest.actions.createWorkflowDispatch({ ...repo, workflow_id: 78, ref: "main", inputs: { sha: HEAD, evil: "1" } }))).toBe(422);
    expect(await statusOf(octokit.rest.actions.createWorkflowDispatch({ ...repo, workflow_id: 78, ref: "main" }))).toBe(422);
    expect(await statusOf(octokit.rest.actions.createWorkflowDispatch({ ...repo, workflow_id: 999, ref: "main" }))).toBe(404);
    expect(fake.state.dispatches).toHaveLength(1);
  });
});

describe("building blocks", () => {
  it("routes to the template with the most literal segments; {path} and {ref} may hold slashes", () => {
    const spec = loadGitHubSpec();
    expect(spec.match("GET", "/repos/o/r/commits/abc/check-runs")?.op.operationId).toBe("checks/list-for-ref");
    expect(spec.match("GET", "/repos/o/r/commits/abc")?.op.operationId).toBe("repos/get-commit");
    expect(spec.match("GET", "/repos/o/r/contents/a/b/c.py")?.params.path).toBe("a/b/c.py");
    expect(spec.match("GET", "/repos/o/r/git/ref/heads/feature/x")?.params.ref).toBe("heads/feature/x");
    expect(spec.match("GET", "/repos/o/r/pulls/1/files")?.op.operationId).toBe("pulls/list-files");
    expect(spec.match("GET", "/repos/o/r/nothing-here")).toBeUndefined();
  });

  it("knows which lines a patch makes commentable on each side", () => {
    const p = parsePatch("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c");
    expect([p.additions, p.deletions]).toEqual([1, 1]);
    expect(findDiffLine(p, "RIGHT", 2)?.kind).toBe("add");
    expect(findDiffLine(p, "LEFT", 2)?.kind).toBe("del");
    expect(findDiffLine(p, "RIGHT", 4)).toBeUndefined();
    expect(unifiedDiff("a\nb\nc\n", "a\nB\nc\n")).toBe("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c");
    expect(unifiedDiff("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\nX\n")).toBe("@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+X");
  });

  it("writes zips that unzip back (stored, crc32)", () => {
    const zip = storedZip({ "a.txt": "A", "dir/b.txt": "bee" });
    expect(zip.readUInt32LE(0)).toBe(0x04034b50);
    expect(readStoredZip(zip)).toEqual({ "a.txt": "A", "dir/b.txt": "bee" });
  });

});
