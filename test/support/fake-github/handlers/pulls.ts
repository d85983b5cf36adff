// Pull requests, their files, reviews and review comments.
import { diffHunkUpTo, findDiffLine, findPosition, type PatchLine, type Side } from "../diff.ts";
import { getArray, getNumber, getString, isObject, type JsonObject } from "../json.ts";
import { nowIso, type PullFileState, type PullState, type RepoState, type ReviewCommentState, type ReviewState } from "../state.ts";
import {
  checkBodyLength, intParam, invalid, invalidSimple, notFound, paginate, requireRepo, type Handler, type HandlerContext,
} from "./common.ts";

/** GitHub lists at most 3000 files of a pull request. */
export const MAX_PULL_FILES = 3000;

function requirePull(ctx: HandlerContext): { repo: RepoState; pr: PullState } {
  const repo = requireRepo(ctx);
  const pr = ctx.core.state.pull(`${repo.owner}/${repo.name}`.toLowerCase(), intParam(ctx, "pull_number"));
  if (!pr) throw notFound(ctx);
  return { repo, pr };
}

const getPull: Handler = (ctx) => {
  const { repo, pr } = requirePull(ctx);
  return { status: 200, body: ctx.render.pull(repo, pr) };
};

const listFiles: Handler = (ctx) => {
  const { repo, pr } = requirePull(ctx);
  const page = paginate(ctx, pr.files.slice(0, MAX_PULL_FILES));
  return { status: 200, headers: page.headers, body: page.items.map((f) => ctx.render.diffEntry(repo, pr, f)) };
};

interface CommentAnchor {
  readonly line: number | null;
  readonly side: Side;
  readonly startLine: number | null;
  readonly startSide: Side | null;
  readonly target: PatchLine;
  readonly position: number;
}

type AnchorResult = { ok: true; anchor: CommentAnchor } | { ok: false; error: string };

function asSide(value: string | undefined, fallback: Side): Side | undefined {
  if (value === undefined) return fallback;
  return value === "LEFT" || value === "RIGHT" ? value : undefined;
}

/**
 * Where a draft comment lands in the diff, or why GitHub would refuse it:
 * the line (and start_line) must be a line of the patch on that side, and a
 * multi-line range must stay inside one hunk.
 */
function anchorComment(file: PullFileState, c: JsonObject): AnchorResult {
  const position = getNumber(c, "position");
  const line = getNumber(c, "line");
  if (line === undefined && position !== undefined) {
    const target = findPosition(file.parsed, position);
    if (!target) return { ok: false, error: "Position could not be resolved" };
    const side: Side = target.kind === "del" ? "LEFT" : "RIGHT";
    const l = side === "LEFT" ? target.oldLine : target.newLine;
    return { ok: true, anchor: { line: l ?? null, side, startLine: null, startSide: null, target, position } };
  }
  if (line === undefined) return { ok: false, error: "Line could not be resolved" };
  const side = asSide(getString(c, "side"), "RIGHT");
  if (!side) return { ok: false, error: "Side must be LEFT or RIGHT" };
  const target = findDiffLine(file.parsed, side, line);
  if (!target) return { ok: false, error: "Line could not be resolved" };
  const startLine = getNumber(c, "start_line");
  if (startLine === undefined) return { ok: true, anchor: { line, side, startLine: null, startSide: null, target, position: target.position } };
  const startSide = asSide(getString(c, "start_side"), side);
  if (!startSide) return { ok: false, error: "Start side must be LEFT or RIGHT" };
  const start = findDiffLine(file.parsed, startSide, startLine);
  if (!start) return { ok: false, error: "Start line could not be resolved" };
  if (start.position >= target.position) return { ok: false, error: "start_line must precede the end line" };
  if (start.hunk !== target.hunk) return { ok: false, error: "start_line must be part of the same hunk as the line" };
  return { ok: true, anchor: { line, side, startLine, startSide, target, position: target.position } };
}

function reviewStateOf(event: string | undefined): ReviewState["state"] {
  if (event === "APPROVE") return "APPROVED";
  if (event === "REQUEST_CHANGES") return "CHANGES_REQUESTED";
  if (event === "COMMENT") return "COMMENTED";
  return "PENDING";
}

function knownCommit(ctx: HandlerContext, pr: PullState, sha: string): boolean {
  return sha === pr.head.sha || sha === pr.base.sha || ctx.core.state.commits.has(sha);
}

const createReview: Handler = (ctx) => {
  const { repo, pr } = requirePull(ctx);
  const state = ctx.core.state;
  const event = getString(ctx.body, "event");
  const body = getString(ctx.body, "body") ?? "";
  const drafts = (getArray(ctx.body, "comments") ?? []).filter(isObject);
  const commitId = getString(ctx.body, "commit_id") ?? pr.head.sha;
  if (!knownCommit(ctx, pr, commitId)) throw invalidSimple(ctx, ["Commit ID could not be resolved"]);
  if (event === "REQUEST_CHANGES" && body.trim() === "") throw invalidSimple(ctx, ["Review body is required when requesting changes"]);
  if (event === "COMMENT" && body.trim() === "" && drafts.length === 0) throw invalidSimple(ctx, ["Review body is required"]);
  if (body.length > 65536) throw invalidSimple(ctx, ["Body is too long (maximum is 65536 characters)"]);
  if (event === "APPROVE" || event === "REQUEST_CHANGES") {
    if (pr.user.login.toLowerCase() === ctx.core.bot.login.toLowerCase()) {
      throw invalidSimple(ctx, [`Can not ${event === "APPROVE" ? "approve" : "request changes on"} your own pull request`]);
    }
  }
  // all-or-nothing: GitHub refuses the whole review when one comment cannot be placed
  const anchored = drafts.map((c) => {
    const path = getString(c, "path") ?? "";
    const file = pr.files.find((f) => f.filename === path);
    if (!file) throw invalidSimple(ctx, ["Path could not be resolved"]);
    const result = anchorComment(file, c);
    if (!result.ok) throw invalidSimple(ctx, [result.error]);
    const text = getString(c, "body") ?? "";
    if (text.length > 65536) throw invalidSimple(ctx, ["Body is too long (maximum is 65536 characters)"]);
    return { file, anchor: result.anchor, body: text };
  });
  const review: ReviewState = {
    id: state.nextId(), repoKey: pr.repoKey, pullNumber: pr.number, body, state: reviewStateOf(event), commitId,
    user: ctx.core.bot, submittedAt: nowIso(),
  };
  state.reviews.set(review.id, review);
  for (const { file, anchor, body: text } of anchored) {
    const comment: ReviewCommentState = {
      id: state.nextId(), reviewId: review.id, repoKey: pr.repoKey, pullNumber: pr.number, path: file.filename, body: text,
      commitId, line: anchor.line, side: anchor.side, startLine: anchor.startLine, startSide: anchor.startSide,
      position: anchor.position, diffHunk: diffHunkUpTo(file.parsed, anchor.target), user: ctx.core.bot, createdAt: review.submittedAt,
    };
    state.reviewComments.set(comment.id, comment);
  }
  return { status: 200, body: ctx.render.review(repo, review) };
};

/** The single-comment endpoint reports placement errors in the `validation-error` shape. */
const createReviewComment: Handler = (ctx) => {
  const { repo, pr } = requirePull(ctx);
  const state = ctx.core.state;
  const path = getString(ctx.body, "path") ?? "";
  const text = getString(ctx.body, "body") ?? "";
  const commitId = getString(ctx.body, "commit_id") ?? "";
  checkBodyLength(ctx, text, "PullRequestReviewComment");
  if (!knownCommit(ctx, pr, commitId)) {
    throw invalid(ctx, "Validation Failed", [{ resource: "PullRequestReviewComment", code: "invalid", field: "commit_id" }]);
  }
  const file = pr.files.find((f) => f.filename === path);
  const result = file ? anchorComment(file, ctx.body) : { ok: false as const, error: "path" };
  if (!file || !result.ok) {
    const field = file ? "pull_request_review_thread.line" : "pull_request_review_thread.path";
    throw invalid(ctx, "Validation Failed", [{ resource: "PullRequestReviewComment", code: "custom", field, message: `${field} must be part of the diff` }]);
  }
  const review: ReviewState = {
    id: state.nextId(), repoKey: pr.repoKey, pullNumber: pr.number, body: "", state: "COMMENTED", commitId, user: ctx.core.bot, submittedAt: nowIso(),
  };
  state.reviews.set(review.id, review);
  const a = result.anchor;
  const comment: ReviewCommentState = {
    id: state.nextId(), reviewId: review.id, repoKey: pr.repoKey, pullNumber: pr.number, path, body: text, commitId,
    line: a.line, side: a.side, startLine: a.startLine, startSide: a.startSide, position: a.position,
    diffHunk: diffHunkUpTo(file.parsed, a.target), user: ctx.core.bot, createdAt: review.submittedAt,
  };
  state.reviewComments.set(comment.id, comment);
  return { status: 201, body: ctx.render.reviewComment(repo, comment) };
};

const listReviews: Handler = (ctx) => {
  const { repo, pr } = requirePull(ctx);
  const all = [...ctx.core.state.reviews.values()].filter((r) => r.repoKey === pr.repoKey && r.pullNumber === pr.number);
  const page = paginate(ctx, all);
  return { status: 200, headers: page.headers, body: page.items.map((r) => ctx.render.review(repo, r)) };
};

const listReviewComments: Handler = (ctx) => {
  const { repo, pr } = requirePull(ctx);
  const all = [...ctx.core.state.reviewComments.values()].filter((c) => c.repoKey === pr.repoKey && c.pullNumber === pr.number);
  const page = paginate(ctx, all);
  return { status: 200, headers: page.headers, body: page.items.map((c) => ctx.render.reviewComment(repo, c)) };
};

export const pullHandlers: Record<string, Handler> = {
  "pulls/get": getPull,
  "pulls/list-files": listFiles,
  "pulls/create-review": createReview,
  "pulls/create-review-comment": createReviewComment,
  "pulls/list-reviews": listReviews,
  "pulls/list-review-comments": listReviewComments,
};
