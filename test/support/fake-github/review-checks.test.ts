import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OWNER, REPO, seededFake, statusOf, type Client } from "./testkit.ts";
import type { FakeGitHub } from "./server.ts";

let fake: FakeGitHub;
let octokit: Client;
const repo = { owner: OWNER, repo: REPO };
const HEAD = "b".repeat(40);
// new lines 10..14 on the right; old 10..13 on the left; line 11 removed, 11-12 added
const PATCH = ["@@ -10,4 +10,5 @@ def recipe():", "     a = 1", "-    b = 2", "+    b = 3", "+    c = 4", "     d = 5", "     e = 6", "@@ -40,2 +41,2 @@", "     x = 1", "-    y = 2", "+    y = 3"].join("\n");

beforeEach(async () => {
  ({ fake, octokit } = await seededFake());
  fake.addPullRequest({ ...repo, number: 5, head: { ref: "hcp", sha: HEAD }, user: "author", files: [{ filename: "recipes/llama3.py", patch: PATCH }] });
});
afterEach(async () => {
  await fake.close();
});

function review(comments: { path: string; line?: number; side?: "LEFT" | "RIGHT"; start_line?: number; start_side?: "LEFT" | "RIGHT"; body: string }[]) {
  return octokit.rest.pulls.createReview({ ...repo, pull_number: 5, event: "COMMENT", body: "HCP review", comments });
}

async function reviewError(comments: Parameters<typeof review>[0]): Promise<unknown> {
  try {
    await review(comments);
    return undefined;
  } catch (e) {
    return e !== null && typeof e === "object" && "response" in e ? (e.response as { status: number; data: unknown }) : e;
  }
}

describe("reviews", () => {
  it("accepts comments on diff lines of either side and multi-line ranges in one hunk", async () => {
    const { data } = await review([
      { path: "recipes/llama3.py", line: 12, side: "RIGHT", body: "```suggestion\n    c = 8\n```" },
      { path: "recipes/llama3.py", line: 11, side: "LEFT", body: "old b" },
      { path: "recipes/llama3.py", start_line: 10, line: 12, body: "range" },
      { path: "recipes/llama3.py", line: 42, body: "second hunk" },
    ]);
    expect(data.user?.login).toBe("hcp-bot[bot]");
    const comments = await octokit.rest.pulls.listReviewComments({ ...repo, pull_number: 5 });
    expect(comments.data.map((c) => [c.line, c.side, c.start_line, c.pull_request_review_id])).toEqual([
      [12, "RIGHT", null, data.id], [11, "LEFT", null, data.id], [12, "RIGHT", 10, data.id], [42, "RIGHT", null, data.id],
    ]);
    expect(comments.data[0]?.diff_hunk.split("\n").at(-1)).toBe("+    c = 4");
    expect(comments.data[0]?.commit_id).toBe(HEAD);
    const reviews = await octokit.rest.pulls.listReviews({ ...repo, pull_number: 5 });
    expect(reviews.data.map((r) => r.state)).toEqual(["COMMENTED"]);
    expect(fake.violations).toEqual([]);
  });

  it("refuses a comment outside the diff with GitHub's 422, and keeps nothing of that review", async () => {
    expect(await reviewError([{ path: "recipes/llama3.py", line: 12, body: "fine" }, { path: "recipes/llama3.py", line: 30, body: "outside" }])).toMatchObject({
      status: 422, data: { message: "Unprocessable Entity", errors: ["Line could not be resolved"] },
    });
    // new line 14 is in the diff, old line 14 is not (the hunk covers old 10-13)
    expect((await review([{ path: "recipes/llama3.py", line: 14, side: "RIGHT", body: "x" }])).status).toBe(200);
    expect(await reviewError([{ path: "recipes/llama3.py", line: 14, side: "LEFT", body: "x" }])).toMatchObject({ status: 422 });
    expect(await reviewError([{ path: "recipes/other.py", line: 12, body: "x" }])).toMatchObject({ status: 422, data: { errors: ["Path could not be resolved"] } });
    // a range may not span two hunks, and start_line must come first
    expect(await reviewError([{ path: "recipes/llama3.py", start_line: 12, line: 42, body: "x" }])).toMatchObject({ status: 422 });
    expect(await reviewError([{ path: "recipes/llama3.py", start_line: 13, line: 12, body: "x" }])).toMatchObject({ status: 422 });
    expect(await reviewError([{ path: "recipes/llama3.py", start_line: 3, line: 12, body: "x" }])).toMatchObject({ status: 422 });
    expect((await octokit.rest.pulls.listReviews({ ...repo, pull_number: 5 })).data).toHaveLength(1);
    expect((await octokit.rest.pulls.listReviewComments({ ...repo, pull_number: 5 })).data.map((c) => c.line)).toEqual([14]);
    // refusals are GitHub behaviour, not spec violations
    expect(fake.violations).toEqual([]);
  });

  it("refuses REQUEST_CHANGES without a body", async () => {
    expect(await statusOf(octokit.rest.pulls.createReview({ ...repo, pull_number: 5, event: "REQUEST_CHANGES" }))).toBe(422);
  });
});

describe("check runs", () => {
  const annotation = (i: number) => ({ path: "recipes/llama3.py", start_line: i + 1, end_line: i + 1, annotation_level: "warning" as const, message: `m${i}` });

  it("persists create + patch, accumulates annotations across PATCHes and filters by name", async () => {
    const created = await octokit.rest.checks.create({
      ...repo, name: "HCP", head_sha: HEAD, status: "in_progress",
      output: { title: "HCP", summary: "first", annotations: Array.from({ length: 50 }, (_, i) => annotation(i)) },
    });
    expect(created.status).toBe(201);
    expect(created.data.app?.slug).toBe("hcp-bot");
    expect(created.data.pull_requests.map((p) => p.number)).toEqual([5]);
    await octokit.rest.checks.update({ ...repo, check_run_id: created.data.id, conclusion: "failure", output: { title: "HCP", summary: "done", annotations: [annotation(60)] } });
    await octokit.rest.checks.create({ ...repo, name: "other", head_sha: HEAD });
    const got = await octokit.rest.checks.get({ ...repo, check_run_id: created.data.id });
    expect(got.data).toMatchObject({ status: "completed", conclusion: "failure", output: { summary: "done", annotations_count: 51 } });
    expect(got.data.completed_at).toBeTruthy();
    const annotations = await octokit.paginate(octokit.rest.checks.listAnnotations, { ...repo, check_run_id: created.data.id, per_page: 100 });
    expect(annotations.map((a) => a.message).at(-1)).toBe("m60");
    const list = await octokit.rest.checks.listForRef({ ...repo, ref: HEAD, check_name: "HCP" });
    expect(list.data.total_count).toBe(1);
    expect(list.data.check_runs[0]?.id).toBe(created.data.id);
    expect((await octokit.rest.checks.listForRef({ ...repo, ref: "hcp" })).data.total_count).toBe(2);
    expect(fake.violations).toEqual([]);
  });

  it("refuses more than 50 annotations per request (422) and a PATCH refused changes nothing", async () => {
    const tooMany = { title: "HCP", summary: "s", annotations: Array.from({ length: 51 }, (_, i) => annotation(i)) };
    expect(await statusOf(octokit.rest.checks.create({ ...repo, name: "HCP", head_sha: HEAD, output: tooMany }))).toBe(422);
    expect(fake.violations.map((v) => v.kind)).toEqual(["request-body"]);
    const { data } = await octokit.rest.checks.create({ ...repo, name: "HCP", head_sha: HEAD });
    expect(await statusOf(octokit.rest.checks.update({ ...repo, check_run_id: data.id, conclusion: "success", output: tooMany }))).toBe(422);
    expect((await octokit.rest.checks.get({ ...repo, check_run_id: data.id })).data.status).toBe("queued");
    expect(await statusOf(octokit.rest.checks.create({ ...repo, name: "HCP", head_sha: HEAD, output: { title: "t", summary: "x".repeat(65536) } }))).toBe(422);
  });

  it("refuses an unknown head_sha and `completed` without a conclusion, like GitHub", async () => {
    expect(await statusOf(octokit.rest.checks.create({ ...repo, name: "HCP", head_sha: "c".repeat(40) }))).toBe(422);
    expect(await statusOf(octokit.rest.checks.create({ ...repo, name: "HCP", head_sha: HEAD, status: "completed" }))).toBe(422);
    expect(fake.violations).toEqual([]);
  });
});

describe("issue comments", () => {
  it("creates, lists, updates, reacts and deletes, with the body limit", async () => {
    fake.addIssueComment({ ...repo, number: 5, body: "human says hi", user: "author" });
    const created = await octokit.rest.issues.createComment({ ...repo, issue_number: 5, body: "<!-- hcp-bot:summary -->\nv1" });
    expect(created.data.user?.login).toBe("hcp-bot[bot]");
    expect(created.data.html_url).toContain("/pull/5#issuecomment-");
    await octokit.rest.issues.updateComment({ ...repo, comment_id: created.data.id, body: "<!-- hcp-bot:summary -->\nv2" });
    const listed = await octokit.rest.issues.listComments({ ...repo, issue_number: 5 });
    expect(listed.data.map((c) => [c.user?.login, c.body])).toEqual([["author", "human says hi"], ["hcp-bot[bot]", "<!-- hcp-bot:summary -->\nv2"]]);
    const r1 = await octokit.rest.reactions.createForIssueComment({ ...repo, comment_id: listed.data[0]!.id, content: "eyes" });
    const r2 = await octokit.rest.reactions.createForIssueComment({ ...repo, comment_id: listed.data[0]!.id, content: "eyes" });
    expect([r1.status, r2.status, r2.data.id]).toEqual([201, 200, r1.data.id]);
    expect(await statusOf(octokit.rest.issues.updateComment({ ...repo, comment_id: created.data.id, body: "x".repeat(65537) }))).toBe(422);
    expect((await octokit.rest.issues.deleteComment({ ...repo, comment_id: created.data.id })).status).toBe(204);
    expect(await statusOf(octokit.rest.issues.getComment({ ...repo, comment_id: created.data.id }))).toBe(404);
    expect(await statusOf(octokit.rest.issues.createComment({ ...repo, issue_number: 404, body: "x" }))).toBe(404);
    expect(fake.violations).toEqual([]);
  });

  it("reports collaborator permissions the way GitHub does", async () => {
    fake.setPermission("maint", "maintain");
    fake.setPermission("reader", "read", `${OWNER}/${REPO}`);
    const maint = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: "maint" });
    expect([maint.data.permission, maint.data.role_name, maint.data.user?.permissions?.maintain]).toEqual(["write", "maintain", true]);
    const reader = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: "reader" });
    expect([reader.data.permission, reader.data.user?.permissions?.push]).toEqual(["read", false]);
    expect(fake.violations).toEqual([]);
  });
});
