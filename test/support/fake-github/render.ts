// GitHub-shaped JSON: every object starts from the spec's `components.examples`
// (so it carries every field clients may read) and is overridden from state.
// response validation in server.ts keeps these honest.
import type { GitHubSpec } from "./spec.ts";
import { isObject, type JsonObject } from "./json.ts";
import {
  blobSha, toBuffer, type ArtifactState, type CheckRunState, type FakeState, type InstallationState,
  type IssueCommentState, type JobState, type PullFileState, type PullState, type ReactionState, type RepoState,
  type ReviewCommentState, type ReviewState, type UserRef, type WorkflowRunState, type FileContent,
} from "./state.ts";

// repositories the examples are written about; rewritten to the resource's repository
const EXAMPLE_REPOS = ["octocat/Hello-World", "github/hello-world", "octo-org/octo-docs", "octo-org/octo-repo", "octocat/example"];

function nodeId(type: string, id: number | string): string {
  return Buffer.from(`${type}:${id}`).toString("base64").replace(/=+$/, "");
}

function asObject(value: unknown): JsonObject {
  if (!isObject(value)) throw new Error("example is not an object");
  return value;
}

export class Renderer {
  constructor(
    private readonly spec: GitHubSpec,
    private readonly state: FakeState,
    /** API root as the client called it, e.g. http://127.0.0.1:PORT/api/v3 */
    readonly api: string,
    readonly web: string,
    private readonly app: { id: number; slug: string; owner: UserRef },
  ) {}

  /** An example with its hosts and repository names pointed at the fake. */
  private example(name: string, repo?: RepoState): JsonObject {
    let text = JSON.stringify(this.spec.example(name));
    text = text.replaceAll("https://api.github.com", this.api).replaceAll("https://github.com", this.web);
    if (repo) for (const r of EXAMPLE_REPOS) text = text.replaceAll(`/${r}/`, `/${repo.owner}/${repo.name}/`).replaceAll(`/${r}"`, `/${repo.owner}/${repo.name}"`);
    return asObject(JSON.parse(text));
  }
  /** A fork's head side: the same repository object under the fork's owner and name. */
  private forkSide(head: JsonObject, fork: string | undefined): JsonObject {
    if (!fork) return head;
    const [owner, name] = fork.split("/") as [string, string];
    const repo = head.repo as JsonObject;
    return {
      ...head,
      label: `${owner}:${String(head.ref)}`,
      repo: { ...repo, name, full_name: fork, fork: true, owner: { ...(repo.owner as JsonObject), login: owner } },
    };
  }


  private repoApi(repo: RepoState): string {
    return `${this.api}/repos/${repo.owner}/${repo.name}`;
  }

  private repoWeb(repo: RepoState): string {
    return `${this.web}/${repo.owner}/${repo.name}`;
  }

  user(u: UserRef): JsonObject {
    const base = asObject(this.spec.example("pull-request")).user;
    // logins like "app[bot]" must be percent-encoded inside URLs (format: uri)
    const text = JSON.stringify(base).replaceAll("octocat", encodeURIComponent(u.login))
      .replaceAll("https://api.github.com", this.api).replaceAll("https://github.com", this.web);
    const out = asObject(JSON.parse(text));
    return { ...out, login: u.login, id: u.id, node_id: nodeId(u.type, u.id), type: u.type };
  }

  /** `public-user`, as GET /user answers for a user token. */
  publicUser(u: UserRef): JsonObject {
    return {
      ...this.user(u), user_view_type: "public", name: null, company: null, blog: "", location: null, email: null, hireable: null, bio: null,
      public_repos: 0, public_gists: 0, followers: 0, following: 0, created_at: "2020-01-01T00:00:00Z", updated_at: "2020-01-01T00:00:00Z",
    };
  }

  /** The `repository` schema (PR head/base repo, run repositories). */
  repository(repo: RepoState): JsonObject {
    const base = asObject(this.example("pull-request", repo).head);
    const owner = this.state.user(repo.owner);
    return {
      ...asObject(base.repo), id: repo.id, node_id: nodeId("Repository", repo.id), name: repo.name,
      full_name: `${repo.owner}/${repo.name}`, owner: this.user(owner), private: repo.private,
      default_branch: repo.defaultBranch, url: this.repoApi(repo), html_url: this.repoWeb(repo),
      visibility: repo.private ? "private" : "public",
    };
  }

  fullRepository(repo: RepoState): JsonObject {
    const ex = this.example("full-repository-default-response", repo);
    // the example's parent/source lack fields their schema requires; they are optional
    delete ex.parent;
    delete ex.source;
    delete ex.template_repository;
    return {
      ...ex, id: repo.id, node_id: nodeId("Repository", repo.id), name: repo.name, full_name: `${repo.owner}/${repo.name}`,
      owner: this.user(this.state.user(repo.owner)), private: repo.private, visibility: repo.private ? "private" : "public",
      default_branch: repo.defaultBranch, url: this.repoApi(repo), html_url: this.repoWeb(repo), fork: false, language: null,
    };
  }

  pull(repo: RepoState, pr: PullState): JsonObject {
    const ex = this.example("pull-request", repo);
    const additions = pr.files.reduce((n, f) => n + f.parsed.additions, 0);
    const deletions = pr.files.reduce((n, f) => n + f.parsed.deletions, 0);
    const repoJson = this.repository(repo);
    const owner = this.user(this.state.user(repo.owner));
    const side = (s: { sha: string; ref: string }, user: JsonObject): JsonObject => ({
      label: `${repo.owner}:${s.ref}`, ref: s.ref, sha: s.sha, user, repo: repoJson,
    });
    return {
      ...ex, id: pr.id, node_id: nodeId("PullRequest", pr.id), number: pr.number, state: pr.state, title: pr.title,
      body: pr.body, user: this.user(pr.user), draft: pr.draft, merged: pr.merged, locked: false,
      url: `${this.repoApi(repo)}/pulls/${pr.number}`, html_url: `${this.repoWeb(repo)}/pull/${pr.number}`,
      issue_url: `${this.repoApi(repo)}/issues/${pr.number}`, labels: [], milestone: null, assignee: null, assignees: [],
      requested_reviewers: [], requested_teams: [], merged_by: null, merged_at: null, closed_at: null, auto_merge: null,
      created_at: pr.createdAt, updated_at: pr.createdAt, head: this.forkSide(side(pr.head, this.user(pr.user)), pr.headRepo), base: side(pr.base, owner),
      additions, deletions, changed_files: pr.files.length, commits: 1, mergeable: null, mergeable_state: "unknown",
      comments: [...this.state.issueComments.values()].filter((c) => c.repoKey === pr.repoKey && c.issueNumber === pr.number).length,
      review_comments: [...this.state.reviewComments.values()].filter((c) => c.repoKey === pr.repoKey && c.pullNumber === pr.number).length,
    };
  }

  diffEntry(repo: RepoState, pr: PullState, file: PullFileState): JsonObject {
    const content = this.state.commits.get(pr.head.sha)?.get(file.filename);
    const sha = content === undefined ? null : blobSha(content);
    const out: JsonObject = {
      sha, filename: file.filename, status: file.status, additions: file.parsed.additions,
      deletions: file.parsed.deletions, changes: file.parsed.additions + file.parsed.deletions,
      blob_url: `${this.repoWeb(repo)}/blob/${pr.head.sha}/${encodeURI(file.filename)}`,
      raw_url: `${this.repoWeb(repo)}/raw/${pr.head.sha}/${encodeURI(file.filename)}`,
      contents_url: `${this.repoApi(repo)}/contents/${encodeURI(file.filename)}?ref=${pr.head.sha}`,
    };
    // GitHub omits `patch` for binary files and diffs too large to show
    if (file.patch !== undefined) out.patch = file.patch;
    if (file.previousFilename !== undefined) out.previous_filename = file.previousFilename;
    return out;
  }

  contentFile(repo: RepoState, path: string, content: FileContent, ref: string): JsonObject {
    const bytes = toBuffer(content);
    const sha = blobSha(content);
    // GitHub wraps base64 at 60 columns; files over 1 MB come back with encoding "none"
    const tooLarge = bytes.length > 1024 * 1024;
    const b64 = tooLarge ? "" : (bytes.toString("base64").match(/.{1,60}/g) ?? []).join("\n") + (bytes.length ? "\n" : "");
    return { ...this.contentEntry(repo, path, "file", sha, bytes.length, ref), encoding: tooLarge ? "none" : "base64", content: b64 };
  }

  contentEntry(repo: RepoState, path: string, type: "file" | "dir", sha: string, size: number, ref: string): JsonObject {
    const url = `${this.repoApi(repo)}/contents/${encodeURI(path)}?ref=${encodeURIComponent(ref)}`;
    const git = `${this.repoApi(repo)}/git/${type === "file" ? "blobs" : "trees"}/${sha}`;
    const html = `${this.repoWeb(repo)}/${type === "file" ? "blob" : "tree"}/${ref}/${encodeURI(path)}`;
    return {
      type, size, name: path.split("/").at(-1) ?? path, path, sha, url, git_url: git, html_url: html,
      download_url: type === "file" ? `${this.web}/_fake/raw/${repo.owner}/${repo.name}/${ref}/${encodeURI(path)}` : null,
      _links: { self: url, git, html },
    };
  }

  blob(repo: RepoState, sha: string, content: FileContent): JsonObject {
    const bytes = toBuffer(content);
    return { sha, node_id: nodeId("Blob", sha), size: bytes.length, url: `${this.repoApi(repo)}/git/blobs/${sha}`, content: bytes.toString("base64"), encoding: "base64" };
  }

  gitRef(repo: RepoState, ref: string, sha: string): JsonObject {
    return {
      ref: `refs/${ref}`, node_id: nodeId("Ref", `${repo.id}:${ref}`), url: `${this.repoApi(repo)}/git/refs/${ref}`,
      object: { type: "commit", sha, url: `${this.repoApi(repo)}/git/commits/${sha}` },
    };
  }

  checkRun(repo: RepoState, run: CheckRunState): JsonObject {
    const ex = this.example("check-run", repo);
    const pulls = [...this.state.pulls.values()].filter((p) => p.repoKey === run.repoKey && p.head.sha === run.headSha);
    const minimalRepo = { id: repo.id, url: this.repoApi(repo), name: repo.name };
    return {
      ...ex, id: run.id, node_id: nodeId("CheckRun", run.id), head_sha: run.headSha, name: run.name, status: run.status,
      conclusion: run.conclusion, started_at: run.startedAt, completed_at: run.completedAt, details_url: run.detailsUrl,
      external_id: run.externalId, url: `${this.repoApi(repo)}/check-runs/${run.id}`, html_url: `${this.repoWeb(repo)}/runs/${run.id}`,
      output: {
        ...run.output, annotations_count: run.annotations.length,
        annotations_url: `${this.repoApi(repo)}/check-runs/${run.id}/annotations`,
      },
      check_suite: { id: run.checkSuiteId }, app: this.integration(),
      pull_requests: pulls.map((p) => ({
        id: p.id, number: p.number, url: `${this.repoApi(repo)}/pulls/${p.number}`,
        head: { ref: p.head.ref, sha: p.head.sha, repo: minimalRepo }, base: { ref: p.base.ref, sha: p.base.sha, repo: minimalRepo },
      })),
    };
  }

  integration(): JsonObject {
    const ex = this.example("integration");
    return { ...ex, id: this.app.id, slug: this.app.slug, name: this.app.slug, owner: this.user(this.app.owner), node_id: nodeId("Integration", this.app.id) };
  }

  issueComment(repo: RepoState, c: IssueCommentState): JsonObject {
    const ex = this.example("issue-comment", repo);
    const isPull = this.state.issue(c.repoKey, c.issueNumber)?.isPull ?? false;
    const reactions = [...this.state.reactions.values()].filter((r) => r.commentId === c.id);
    return {
      ...ex, id: c.id, node_id: nodeId("IssueComment", c.id), body: c.body, user: this.user(c.user),
      url: `${this.repoApi(repo)}/issues/comments/${c.id}`,
      html_url: `${this.repoWeb(repo)}/${isPull ? "pull" : "issues"}/${c.issueNumber}#issuecomment-${c.id}`,
      issue_url: `${this.repoApi(repo)}/issues/${c.issueNumber}`, created_at: c.createdAt, updated_at: c.updatedAt,
      author_association: c.user.type === "Bot" ? "NONE" : "MEMBER", performed_via_github_app: null,
      reactions: { ...this.reactionRollup(reactions), url: `${this.repoApi(repo)}/issues/comments/${c.id}/reactions` },
    };
  }

  private reactionRollup(reactions: ReactionState[]): JsonObject {
    const count = (content: string): number => reactions.filter((r) => r.content === content).length;
    return {
      total_count: reactions.length, "+1": count("+1"), "-1": count("-1"), laugh: count("laugh"), confused: count("confused"),
      heart: count("heart"), hooray: count("hooray"), eyes: count("eyes"), rocket: count("rocket"),
    };
  }

  reaction(r: ReactionState): JsonObject {
    const ex = this.example("reaction");
    return { ...ex, id: r.id, node_id: nodeId("Reaction", r.id), content: r.content, user: this.user(r.user), created_at: r.createdAt };
  }

  review(repo: RepoState, r: ReviewState): JsonObject {
    const ex = this.example("pull-request-review", repo);
    const html = `${this.repoWeb(repo)}/pull/${r.pullNumber}#pullrequestreview-${r.id}`;
    const pr = `${this.repoApi(repo)}/pulls/${r.pullNumber}`;
    return {
      ...ex, id: r.id, node_id: nodeId("PullRequestReview", r.id), user: this.user(r.user), body: r.body, state: r.state,
      commit_id: r.commitId, html_url: html, pull_request_url: pr, submitted_at: r.submittedAt,
      author_association: r.user.type === "Bot" ? "NONE" : "MEMBER", _links: { html: { href: html }, pull_request: { href: pr } },
    };
  }

  reviewComment(repo: RepoState, c: ReviewCommentState): JsonObject {
    const ex = this.example("pull-request-review-comment", repo);
    const url = `${this.repoApi(repo)}/pulls/comments/${c.id}`;
    const html = `${this.repoWeb(repo)}/pull/${c.pullNumber}#discussion_r${c.id}`;
    const pr = `${this.repoApi(repo)}/pulls/${c.pullNumber}`;
    const out: JsonObject = {
      ...ex, id: c.id, node_id: nodeId("PullRequestReviewComment", c.id), pull_request_review_id: c.reviewId, diff_hunk: c.diffHunk,
      path: c.path, position: c.position, original_position: c.position, commit_id: c.commitId, original_commit_id: c.commitId,
      user: this.user(c.user), body: c.body, created_at: c.createdAt, updated_at: c.createdAt, html_url: html, url,
      pull_request_url: pr, author_association: c.user.type === "Bot" ? "NONE" : "MEMBER",
      _links: { self: { href: url }, html: { href: html }, pull_request: { href: pr } },
      line: c.line ?? undefined, original_line: c.line ?? undefined, side: c.side, start_line: c.startLine,
      original_start_line: c.startLine, start_side: c.startSide, subject_type: "line",
    };
    delete out.in_reply_to_id;
    if (c.line === null) {
      delete out.line;
      delete out.original_line;
    }
    return out;
  }

  workflowRun(repo: RepoState, run: WorkflowRunState): JsonObject {
    const ex = this.example("workflow-run", repo);
    const wf = this.state.workflows.get(run.workflowId);
    const url = `${this.repoApi(repo)}/actions/runs/${run.id}`;
    return {
      ...ex, id: run.id, node_id: nodeId("WorkflowRun", run.id), name: wf?.name ?? null, head_branch: run.headBranch,
      head_sha: run.headSha, path: wf ? `${wf.path}@${run.headBranch}` : "", run_number: run.runNumber, run_attempt: 1,
      event: run.event, display_title: run.displayTitle ?? wf?.name ?? "workflow", status: run.status, conclusion: run.conclusion,
      workflow_id: run.workflowId, url, html_url: `${this.repoWeb(repo)}/actions/runs/${run.id}`, pull_requests: [],
      created_at: run.createdAt, updated_at: run.updatedAt, run_started_at: run.createdAt, actor: this.user(run.actor),
      triggering_actor: this.user(run.actor), jobs_url: `${url}/jobs`, logs_url: `${url}/logs`, cancel_url: `${url}/cancel`,
      rerun_url: `${url}/rerun`, artifacts_url: `${url}/artifacts`, workflow_url: `${this.repoApi(repo)}/actions/workflows/${run.workflowId}`,
      repository: this.minimalRepository(repo, ex.repository), head_repository: this.minimalRepository(repo, ex.head_repository),
      head_commit: { ...asObject(ex.head_commit), id: run.headSha, tree_id: run.headSha },
    };
  }

  private minimalRepository(repo: RepoState, template: unknown): JsonObject {
    return {
      ...asObject(template), id: repo.id, node_id: nodeId("Repository", repo.id), name: repo.name, full_name: `${repo.owner}/${repo.name}`,
      owner: this.user(this.state.user(repo.owner)), private: repo.private, url: this.repoApi(repo), html_url: this.repoWeb(repo),
    };
  }

  job(repo: RepoState, job: JobState): JsonObject {
    const ex = this.example("job", repo);
    const run = this.state.workflowRuns.get(job.runId);
    return {
      ...ex, id: job.id, run_id: job.runId, node_id: nodeId("Job", job.id), name: job.name, status: job.status,
      conclusion: job.conclusion, head_sha: run?.headSha ?? ex.head_sha, head_branch: run?.headBranch ?? null,
      run_url: `${this.repoApi(repo)}/actions/runs/${job.runId}`, url: `${this.repoApi(repo)}/actions/jobs/${job.id}`,
      html_url: `${this.repoWeb(repo)}/actions/runs/${job.runId}/job/${job.id}`, steps: [], workflow_name: null,
      created_at: run?.createdAt ?? ex.created_at ?? ex.started_at, started_at: run?.createdAt ?? ex.started_at,
      completed_at: job.status === "completed" ? (run?.updatedAt ?? ex.completed_at) : null,
    };
  }

  artifact(repo: RepoState, a: ArtifactState, size: number): JsonObject {
    const ex = this.example("artifact", repo);
    const run = this.state.workflowRuns.get(a.runId);
    const url = `${this.repoApi(repo)}/actions/artifacts/${a.id}`;
    return {
      ...ex, id: a.id, node_id: nodeId("Artifact", a.id), name: a.name, size_in_bytes: size, url,
      archive_download_url: `${url}/zip`, expired: a.expired, created_at: a.createdAt, updated_at: a.createdAt,
      workflow_run: { ...asObject(ex.workflow_run), id: a.runId, repository_id: repo.id, head_repository_id: repo.id,
        head_branch: run?.headBranch ?? null, head_sha: run?.headSha ?? null },
    };
  }

  installation(inst: InstallationState): JsonObject {
    const ex = this.example("installation");
    return {
      ...ex, id: inst.id, account: this.user(inst.account), app_id: this.app.id, app_slug: this.app.slug,
      target_id: inst.account.id, target_type: inst.account.type === "Organization" ? "Organization" : "User",
      permissions: inst.permissions, repository_selection: inst.repositorySelection,
      access_tokens_url: `${this.api}/app/installations/${inst.id}/access_tokens`,
    };
  }
}
