// Issue (and pull request conversation) comments and their reactions.
import { getString } from "../json.ts";
import { nowIso, type IssueCommentState, type RepoState } from "../state.ts";
import { checkBodyLength, intParam, notFound, paginate, requireRepo, type Handler, type HandlerContext } from "./common.ts";

function keyOf(repo: RepoState): string {
  return `${repo.owner}/${repo.name}`.toLowerCase();
}

function requireComment(ctx: HandlerContext): { repo: RepoState; comment: IssueCommentState } {
  const repo = requireRepo(ctx);
  const comment = ctx.core.state.issueComments.get(intParam(ctx, "comment_id"));
  if (!comment || comment.repoKey !== keyOf(repo)) throw notFound(ctx);
  return { repo, comment };
}

const listComments: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const number = intParam(ctx, "issue_number");
  if (!ctx.core.state.issue(keyOf(repo), number)) throw notFound(ctx);
  const since = ctx.query.get("since");
  const all = [...ctx.core.state.issueComments.values()]
    .filter((c) => c.repoKey === keyOf(repo) && c.issueNumber === number && (since === null || c.updatedAt >= since))
    .sort((a, b) => a.id - b.id);
  const page = paginate(ctx, all);
  return { status: 200, headers: page.headers, body: page.items.map((c) => ctx.render.issueComment(repo, c)) };
};

const createComment: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const number = intParam(ctx, "issue_number");
  if (!ctx.core.state.issue(keyOf(repo), number)) throw notFound(ctx);
  const body = getString(ctx.body, "body") ?? "";
  checkBodyLength(ctx, body, "IssueComment");
  const now = nowIso();
  const comment: IssueCommentState = {
    id: ctx.core.state.nextId(), repoKey: keyOf(repo), issueNumber: number, body, user: ctx.core.bot, createdAt: now, updatedAt: now,
  };
  ctx.core.state.issueComments.set(comment.id, comment);
  const json = ctx.render.issueComment(repo, comment);
  return { status: 201, body: json, headers: { location: String(json.url) } };
};

const getComment: Handler = (ctx) => {
  const { repo, comment } = requireComment(ctx);
  return { status: 200, body: ctx.render.issueComment(repo, comment) };
};

const updateComment: Handler = (ctx) => {
  const { repo, comment } = requireComment(ctx);
  const body = getString(ctx.body, "body") ?? "";
  checkBodyLength(ctx, body, "IssueComment");
  comment.body = body;
  comment.updatedAt = nowIso();
  return { status: 200, body: ctx.render.issueComment(repo, comment) };
};

const deleteComment: Handler = (ctx) => {
  const { comment } = requireComment(ctx);
  ctx.core.state.issueComments.delete(comment.id);
  return { status: 204 };
};

/** 201 for a new reaction, 200 with the existing one when the same user reacts the same way. */
const createReaction: Handler = (ctx) => {
  const { comment } = requireComment(ctx);
  const content = getString(ctx.body, "content") ?? "";
  const state = ctx.core.state;
  const existing = [...state.reactions.values()].find((r) => r.commentId === comment.id && r.content === content && r.user.id === ctx.core.bot.id);
  if (existing) return { status: 200, body: ctx.render.reaction(existing) };
  const reaction = { id: state.nextId(), commentId: comment.id, content, user: ctx.core.bot, createdAt: nowIso() };
  state.reactions.set(reaction.id, reaction);
  return { status: 201, body: ctx.render.reaction(reaction) };
};

export const issueHandlers: Record<string, Handler> = {
  "issues/list-comments": listComments,
  "issues/create-comment": createComment,
  "issues/get-comment": getComment,
  "issues/update-comment": updateComment,
  "issues/delete-comment": deleteComment,
  "reactions/create-for-issue-comment": createReaction,
};
