// Seeding the fake: installations, repositories, commits, pull requests, comments,
// permissions, workflows and their runs, jobs, artifacts and tokens. FakeGitHubServer
// extends this with the HTTP side.
import {
  FakeState, isSha, nowIso, parsePatch, randomToken, repoKey, seedPatch,
  type ArtifactState, type FileContent, type InstallationState, type IssueCommentState, type JobState,
  type PermissionLevel, type PullState, type RepoState, type UserRef, type WorkflowRunState, type WorkflowState,
} from "./state.ts";
import type { AddPullRequestOptions, AddRepoOptions } from "./types.ts";

export class FakeSeeds {
  readonly state: FakeState;
  private readonly pendingInstallRepos = new Map<string, number>();

  constructor(readonly bot: UserRef) {
    this.state = new FakeState(bot);
  }

  addInstallation(o: { id: number; account: string; accountType?: "User" | "Organization"; permissions?: Record<string, string>; repositories?: readonly string[] }): InstallationState {
    const inst: InstallationState = {
      id: o.id, account: this.state.user(o.account, o.accountType ?? "Organization"),
      permissions: o.permissions ?? { checks: "write", contents: "read", issues: "write", pull_requests: "write", actions: "write", metadata: "read" },
      repositorySelection: o.repositories ? "selected" : "all",
    };
    this.state.installations.set(o.id, inst);
    for (const full of o.repositories ?? []) {
      const key = (full.includes("/") ? full : `${o.account}/${full}`).toLowerCase();
      const repo = this.state.repos.get(key);
      if (repo) repo.installationId = o.id;
      else this.pendingInstallRepos.set(key, o.id);
    }
    if (!o.repositories) {
      for (const repo of this.state.repos.values()) if (repo.owner.toLowerCase() === o.account.toLowerCase()) repo.installationId ??= o.id;
    }
    return inst;
  }

  private installationFor(owner: string, key: string): number | undefined {
    const pending = this.pendingInstallRepos.get(key);
    if (pending !== undefined) return pending;
    const all = [...this.state.installations.values()].find((i) => i.repositorySelection === "all" && i.account.login.toLowerCase() === owner.toLowerCase());
    return all?.id;
  }

  addRepo(o: AddRepoOptions): RepoState {
    const key = repoKey(o.owner, o.repo);
    const installationId = o.installationId ?? this.installationFor(o.owner, key);
    const repo: RepoState = {
      id: this.state.nextId(), owner: o.owner, name: o.repo, defaultBranch: o.defaultBranch ?? "main", private: o.private ?? false,
      refs: new Map(), permissions: new Map(), ...(installationId !== undefined ? { installationId } : {}),
    };
    this.state.repos.set(key, repo);
    for (const [ref, files] of Object.entries(o.files ?? {})) {
      if (isSha(ref)) this.state.putCommit(files, ref);
      else repo.refs.set(`heads/${ref}`, this.state.putCommit(files));
    }
    if (!repo.refs.has(`heads/${repo.defaultBranch}`)) repo.refs.set(`heads/${repo.defaultBranch}`, this.state.putCommit({}));
    return repo;
  }

  private requireRepoState(owner: string, name: string): RepoState {
    const repo = this.state.repo(owner, name);
    if (!repo) throw new Error(`fake-github: addRepo({owner: "${owner}", repo: "${name}"}) first`);
    return repo;
  }

  addCommit(o: { owner: string; repo: string; branch?: string; base?: string; sha?: string; files: Readonly<Record<string, FileContent | null>>; pushedAt?: Date }): string {
    const repo = this.requireRepoState(o.owner, o.repo);
    const baseSha = o.base === undefined ? undefined : this.state.resolveRef(repo, o.base);
    const tree = new Map(baseSha === undefined ? [] : (this.state.commits.get(baseSha) ?? new Map<string, FileContent>()));
    for (const [path, content] of Object.entries(o.files)) {
      if (content === null) tree.delete(path);
      else tree.set(path, content);
    }
    const sha = this.state.putCommit(tree, o.sha);
    if (o.branch !== undefined) this.push(repo, o.branch, sha, o.pushedAt);
    return sha;
  }

  /** Moves a branch and records the push as the activity API shows it. */
  private push(repo: RepoState, branch: string, sha: string, at?: Date): void {
    const before = repo.refs.get(`heads/${branch}`);
    repo.refs.set(`heads/${branch}`, sha);
    this.state.activities.push({
      id: this.state.nextId(), repoKey: repoKey(repo.owner, repo.name), ref: `refs/heads/${branch}`, before: before ?? "0".repeat(40), after: sha,
      timestamp: (at ?? new Date()).toISOString().replace(/\.\d{3}Z$/, "Z"), activityType: before ? "push" : "branch_creation", actor: this.state.user(repo.owner),
    });
  }

  addPullRequest(o: AddPullRequestOptions): PullState {
    const repo = this.requireRepoState(o.owner, o.repo);
    const key = repoKey(o.owner, o.repo);
    const baseRef = typeof o.base === "string" ? o.base : (o.base?.ref ?? repo.defaultBranch);
    const baseSha = (typeof o.base === "object" ? o.base.sha : undefined) ?? this.state.resolveRef(repo, baseRef) ?? this.state.putCommit({});
    const baseTree = this.state.commits.get(baseSha) ?? new Map<string, FileContent>();
    if (!this.state.commits.has(baseSha)) this.state.putCommit(baseTree, baseSha);
    // head = base tree with the PR's changes applied
    const headTree = new Map(baseTree);
    for (const f of o.files) {
      if (f.previousFilename !== undefined) headTree.delete(f.previousFilename);
      if (f.status === "removed") headTree.delete(f.filename);
      else if (f.contents !== undefined) headTree.set(f.filename, f.contents);
    }
    const headSha = this.state.putCommit(headTree, o.head.sha);
    if (o.headRepo) {
      // The fork holds the head branch (public, outside the installation), with its push history.
      const [forkOwner = "", forkName = ""] = o.headRepo.split("/");
      const fork = this.state.repo(forkOwner, forkName) ?? this.addRepo({ owner: forkOwner, repo: forkName, defaultBranch: repo.defaultBranch });
      this.push(fork, o.head.ref, headSha);
      repo.refs.set(`heads/${o.head.ref}`, headSha);
    } else if (repo.refs.get(`heads/${o.head.ref}`) !== headSha) this.push(repo, o.head.ref, headSha);
    repo.refs.set(`pull/${o.number}/head`, headSha);
    const files = o.files.map((f) => {
      const status = f.status ?? (baseTree.has(f.filename) ? "modified" : "added");
      const patch = seedPatch(status, f.patch, f.contents, baseTree.get(f.previousFilename ?? f.filename));
      return {
        filename: f.filename, status, parsed: parsePatch(patch),
        ...(patch !== undefined ? { patch } : {}), ...(f.previousFilename !== undefined ? { previousFilename: f.previousFilename } : {}),
      };
    });
    const pr: PullState = {
      id: this.state.nextId(), repoKey: key, number: o.number, title: o.title ?? `PR #${o.number}`, body: o.body ?? null,
      state: o.state ?? "open", draft: o.draft ?? false, merged: false, user: this.state.user(o.user ?? "octocat"),
      head: { sha: headSha, ref: o.head.ref }, base: { sha: baseSha, ref: baseRef }, files, createdAt: nowIso(),
      ...(o.headRepo ? { headRepo: o.headRepo } : {}),
    };
    this.state.pulls.set(`${key}#${o.number}`, pr);
    this.state.issues.set(`${key}#${o.number}`, { id: this.state.nextId(), number: o.number, title: pr.title, isPull: true });
    return pr;
  }

  addIssue(o: { owner: string; repo: string; number: number; title?: string }): void {
    this.requireRepoState(o.owner, o.repo);
    this.state.issues.set(`${repoKey(o.owner, o.repo)}#${o.number}`, { id: this.state.nextId(), number: o.number, title: o.title ?? `Issue #${o.number}`, isPull: false });
  }

  addIssueComment(o: { owner: string; repo: string; number: number; body: string; user?: string }): IssueCommentState {
    this.requireRepoState(o.owner, o.repo);
    const now = nowIso();
    const c: IssueCommentState = {
      id: this.state.nextId(), repoKey: repoKey(o.owner, o.repo), issueNumber: o.number, body: o.body,
      user: o.user === undefined ? this.bot : this.state.user(o.user), createdAt: now, updatedAt: now,
    };
    this.state.issueComments.set(c.id, c);
    return c;
  }

  setPermission(login: string, level: PermissionLevel, repo?: string): void {
    if (repo === undefined) {
      this.state.globalPermissions.set(login.toLowerCase(), level);
      return;
    }
    const [owner = "", name = ""] = repo.split("/");
    this.requireRepoState(owner, name).permissions.set(login.toLowerCase(), level);
  }

  /**
   * A workflow. With `content` (its YAML), the file is committed to the default branch and a
   * dispatch reads the file at the dispatched ref, as GitHub does; otherwise `inputs`,
   * `runName` and `jobName` describe it.
   */
  addWorkflow(o: { owner: string; repo: string; id?: number; path: string; name?: string; inputs?: Record<string, { required?: boolean }>; runName?: string; jobName?: string; content?: string }): WorkflowState {
    const repo = this.requireRepoState(o.owner, o.repo);
    if (o.content !== undefined) this.addCommit({ owner: o.owner, repo: o.repo, branch: repo.defaultBranch, base: repo.defaultBranch, files: { [o.path]: o.content } });
    const wf: WorkflowState = {
      id: o.id ?? this.state.nextId(), repoKey: repoKey(o.owner, o.repo), path: o.path, name: o.name ?? o.path.split("/").at(-1) ?? o.path,
      ...(o.inputs ? { inputs: o.inputs } : {}),
      ...(o.runName ? { runName: o.runName } : {}),
      ...(o.jobName ? { jobName: o.jobName } : {}),
      ...(o.content !== undefined ? { fromFile: true } : {}),
    };
    this.state.workflows.set(wf.id, wf);
    return wf;
  }

  updateWorkflowRun(id: number, patch: { status?: string; conclusion?: string | null }): WorkflowRunState {
    const run = this.state.workflowRuns.get(id);
    if (!run) throw new Error(`fake-github: no workflow run ${id}`);
    if (patch.status !== undefined) run.status = patch.status;
    if (patch.conclusion !== undefined) run.conclusion = patch.conclusion;
    run.updatedAt = nowIso();
    return run;
  }

  addWorkflowRun(o: { owner: string; repo: string; workflowId: number; event: string; headBranch: string; headSha: string; displayTitle: string; status?: string; conclusion?: string | null; actor?: string; jobName?: string }): WorkflowRunState {
    this.requireRepoState(o.owner, o.repo);
    const previous = [...this.state.workflowRuns.values()].filter((r) => r.workflowId === o.workflowId).length;
    const now = nowIso();
    const run: WorkflowRunState = {
      id: this.state.nextId(), repoKey: repoKey(o.owner, o.repo), workflowId: o.workflowId, runNumber: previous + 1, headBranch: o.headBranch,
      headSha: o.headSha, event: o.event, inputs: {}, displayTitle: o.displayTitle, status: o.status ?? "completed", conclusion: o.conclusion ?? "success",
      createdAt: now, updatedAt: now, actor: o.actor ? this.state.user(o.actor) : this.state.bot,
    };
    this.state.workflowRuns.set(run.id, run);
    if (o.jobName) this.addJob({ runId: run.id, name: o.jobName, status: run.status, conclusion: run.conclusion });
    return run;
  }

  addJob(o: { runId: number; name: string; log?: string; status?: string; conclusion?: string | null; steps?: JobState["steps"] }): JobState {
    if (!this.state.workflowRuns.has(o.runId)) throw new Error(`fake-github: no workflow run ${o.runId}`);
    const job: JobState = { id: this.state.nextId(), runId: o.runId, name: o.name, status: o.status ?? "completed", conclusion: o.conclusion === undefined ? "success" : o.conclusion, log: o.log ?? "", steps: o.steps ?? [] };
    this.state.jobs.set(job.id, job);
    return job;
  }

  updateJob(o: { runId: number; log?: string; status?: string; conclusion?: string | null; steps?: JobState["steps"] }): JobState {
    const job = [...this.state.jobs.values()].find((j) => j.runId === o.runId);
    if (!job) throw new Error(`fake-github: run ${o.runId} has no job`);
    if (o.log !== undefined) job.log = o.log;
    if (o.status !== undefined) job.status = o.status;
    if (o.conclusion !== undefined) job.conclusion = o.conclusion;
    if (o.steps !== undefined) job.steps = o.steps;
    return job;
  }

  /** `zip`: the archive served as is (a deflated or broken one built by the test); otherwise `files` in a stored zip. */
  addArtifact(o: { runId: number; name: string; files: Record<string, FileContent>; zip?: Uint8Array; expired?: boolean }): ArtifactState {
    const run = this.state.workflowRuns.get(o.runId);
    if (!run) throw new Error(`fake-github: no workflow run ${o.runId}`);
    const a: ArtifactState = { id: this.state.nextId(), runId: o.runId, repoKey: run.repoKey, name: o.name, files: o.files, ...(o.zip ? { zip: o.zip } : {}), expired: o.expired ?? false, createdAt: nowIso() };
    this.state.artifacts.set(a.id, a);
    return a;
  }

  installationToken(installationId: number): string {
    const token = randomToken("ghs_");
    this.state.tokens.set(token, { token, installationId, expiresAt: Date.now() + 3600_000 });
    return token;
  }

  addToken(token: string, installationId?: number): void {
    this.state.tokens.set(token, { token, installationId: installationId ?? null, expiresAt: Number.MAX_SAFE_INTEGER });
  }

  addUserToken(login: string, token = randomToken("ghu_")): string {
    this.state.user(login);
    this.state.tokens.set(token, { token, installationId: null, expiresAt: Date.now() + 8 * 3600_000, user: login });
    return token;
  }
}
