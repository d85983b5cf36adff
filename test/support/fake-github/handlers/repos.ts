// Apps, repositories, contents and git data.
import { getArray, getObject } from "../json.ts";
import { blobSha, randomToken, toBuffer, type PermissionLevel, type RepoState, type Tree } from "../state.ts";
import { HttpError, intParam, notFound, paginate, requireRepo, type Handler, type HandlerContext } from "./common.ts";

const TOKEN_TTL_MS = 3600_000;

const createInstallationToken: Handler = (ctx) => {
  const id = intParam(ctx, "installation_id");
  const inst = ctx.core.state.installations.get(id);
  if (!inst) throw notFound(ctx);
  const token = randomToken("ghs_");
  const expiresAt = Date.now() + TOKEN_TTL_MS;
  ctx.core.state.tokens.set(token, { token, installationId: id, expiresAt });
  const requested = getObject(ctx.body, "permissions");
  const permissions = requested ?? inst.permissions;
  const names = getArray(ctx.body, "repositories");
  return {
    status: 201,
    body: {
      token, expires_at: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, "Z"), permissions,
      repository_selection: names ? "selected" : inst.repositorySelection,
    },
  };
};

const getRepoInstallation: Handler = (ctx) => {
  const repo = ctx.core.state.repo(ctx.params.owner ?? "", ctx.params.repo ?? "");
  const inst = repo?.installationId === undefined ? undefined : ctx.core.state.installations.get(repo.installationId);
  if (!inst) throw notFound(ctx);
  return { status: 200, body: ctx.render.installation(inst) };
};

const getInstallation: Handler = (ctx) => {
  const inst = ctx.core.state.installations.get(intParam(ctx, "installation_id"));
  if (!inst) throw notFound(ctx);
  return { status: 200, body: ctx.render.installation(inst) };
};

const getApp: Handler = (ctx) => ({ status: 200, body: ctx.render.integration() });

const getRepo: Handler = (ctx) => ({ status: 200, body: ctx.render.fullRepository(requireRepo(ctx)) });

function treeAt(ctx: HandlerContext, repo: RepoState, ref: string | undefined): { sha: string; tree: Tree } {
  const sha = ctx.core.state.resolveRef(repo, ref);
  const tree = sha === undefined ? undefined : ctx.core.state.commits.get(sha);
  if (sha === undefined || !tree) {
    throw new HttpError(404, { message: `No commit found for the ref ${ref ?? repo.defaultBranch}`, documentation_url: ctx.docUrl, status: "404" });
  }
  return { sha, tree };
}

/** Immediate children of `dir` in a flat path->content tree. */
function childrenOf(tree: Tree, dir: string): Map<string, "file" | "dir"> {
  const prefix = dir === "" ? "" : `${dir}/`;
  const out = new Map<string, "file" | "dir">();
  for (const p of tree.keys()) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const slash = rest.indexOf("/");
    out.set(prefix + (slash < 0 ? rest : rest.slice(0, slash)), slash < 0 ? "file" : "dir");
  }
  return out;
}

function wantsRaw(ctx: HandlerContext): boolean {
  const accept = String(ctx.headers.accept ?? "");
  return accept.includes("application/vnd.github.raw") || accept.includes("application/vnd.github.v3.raw");
}

const getContent: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const ref = ctx.query.get("ref") ?? undefined;
  const { sha, tree } = treeAt(ctx, repo, ref);
  const path = (ctx.params.path ?? "").replace(/^\/+|\/+$/g, "");
  const refName = ref ?? repo.defaultBranch;
  const content = tree.get(path);
  if (content !== undefined) {
    if (wantsRaw(ctx)) return { status: 200, raw: { contentType: "application/vnd.github.raw; charset=utf-8", data: toBuffer(content) } };
    return { status: 200, body: ctx.render.contentFile(repo, path, content, refName) };
  }
  const children = childrenOf(tree, path);
  if (children.size === 0) throw notFound(ctx);
  const entries = [...children.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([p, type]) => {
    const c = tree.get(p);
    return type === "file" && c !== undefined
      ? ctx.render.contentEntry(repo, p, "file", blobSha(c), toBuffer(c).length, refName)
      : ctx.render.contentEntry(repo, p, "dir", ctx.core.state.treeOid(sha, p), 0, refName);
  });
  return { status: 200, body: entries };
};

const getTree: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const state = ctx.core.state;
  const treeSha = ctx.params.tree_sha ?? "";
  const indexed = state.treeIndex.get(treeSha);
  const commit = indexed?.commit ?? state.resolveRef(repo, treeSha);
  const tree = commit === undefined ? undefined : state.commits.get(commit);
  if (commit === undefined || !tree) throw notFound(ctx);
  const dir = indexed?.dir ?? "";
  const recursive = ctx.query.has("recursive");
  const prefix = dir === "" ? "" : `${dir}/`;
  const items: { path: string; type: "file" | "dir" }[] = [];
  const walk = (d: string): void => {
    for (const [p, type] of childrenOf(tree, d)) {
      items.push({ path: p, type });
      if (recursive && type === "dir") walk(p);
    }
  };
  walk(dir);
  const api = `${ctx.render.api}/repos/${repo.owner}/${repo.name}/git`;
  const sha = state.treeOid(commit, dir);
  const entries = items.map(({ path, type }) => {
    const rel = path.slice(prefix.length);
    const c = tree.get(path);
    if (type === "file" && c !== undefined) {
      const s = blobSha(c);
      return { path: rel, mode: "100644", type: "blob", sha: s, size: toBuffer(c).length, url: `${api}/blobs/${s}` };
    }
    const s = state.treeOid(commit, path);
    return { path: rel, mode: "040000", type: "tree", sha: s, url: `${api}/trees/${s}` };
  });
  return { status: 200, body: { sha, url: `${api}/trees/${sha}`, tree: entries, truncated: false } };
};

const getBlob: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const sha = ctx.params.file_sha ?? "";
  const content = ctx.core.state.blobs.get(sha);
  if (content === undefined) throw notFound(ctx);
  return { status: 200, body: ctx.render.blob(repo, sha, content) };
};

const getRef: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const ref = (ctx.params.ref ?? "").replace(/^refs\//, "");
  const sha = repo.refs.get(ref);
  if (sha === undefined) throw notFound(ctx);
  return { status: 200, body: ctx.render.gitRef(repo, ref, sha) };
};

const listMatchingRefs: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const prefix = (ctx.params.ref ?? "").replace(/^refs\//, "");
  const refs = [...repo.refs.entries()].filter(([r]) => r.startsWith(prefix)).sort(([a], [b]) => a.localeCompare(b));
  const page = paginate(ctx, refs);
  return { status: 200, headers: page.headers, body: page.items.map(([r, sha]) => ctx.render.gitRef(repo, r, sha)) };
};

// GitHub's `permission` field predates custom roles: maintain reads "write", triage reads "read".
const LEGACY_PERMISSION: Record<PermissionLevel, string> = {
  admin: "admin", maintain: "write", write: "write", triage: "read", read: "read", none: "none",
};
const RANK: PermissionLevel[] = ["none", "read", "triage", "write", "maintain", "admin"];

const getCollaboratorPermission: Handler = (ctx) => {
  const repo = requireRepo(ctx);
  const login = ctx.params.username ?? "";
  const level = ctx.core.state.permissionOf(repo, login) ?? (repo.private ? "none" : "read");
  const rank = RANK.indexOf(level);
  const user = ctx.render.user(ctx.core.state.user(login));
  return {
    status: 200,
    body: {
      permission: LEGACY_PERMISSION[level], role_name: level,
      user: {
        ...user, role_name: level,
        permissions: { pull: rank >= 1, triage: rank >= 2, push: rank >= 3, maintain: rank >= 4, admin: rank >= 5 },
      },
    },
  };
};

const getAuthenticatedUser: Handler = (ctx) => {
  if (ctx.auth.user === undefined) throw new HttpError(403, { message: "Resource not accessible by integration", documentation_url: ctx.docUrl, status: "403" });
  return { status: 200, body: ctx.render.publicUser(ctx.core.state.user(ctx.auth.user)) };
};

export const repoHandlers: Record<string, Handler> = {
  "users/get-authenticated": getAuthenticatedUser,
  "apps/create-installation-access-token": createInstallationToken,
  "apps/get-repo-installation": getRepoInstallation,
  "apps/get-installation": getInstallation,
  "apps/get-authenticated": getApp,
  "repos/get": getRepo,
  "repos/get-content": getContent,
  "git/get-tree": getTree,
  "git/get-blob": getBlob,
  "git/get-ref": getRef,
  "git/list-matching-refs": listMatchingRefs,
  "repos/get-collaborator-permission-level": getCollaboratorPermission,
};

