// The fake GitHub API server: loopback HTTP, routed and refereed by GitHub's
// OpenAPI description, answering from FakeState. See README.md for the API.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicKey, randomBytes, randomUUID, verify } from "node:crypto";
import { executeGraphQL } from "./graphql.ts";
import { isObject, type JsonObject } from "./json.ts";
import { Renderer } from "./render.ts";
import { loadGitHubSpec, type GitHubSpec, type Operation } from "./spec.ts";
import {
  FakeState, isSha, nowIso, parsePatch, randomToken, repoKey, seedPatch,
  type ArtifactState, type FileContent, type FileStatus, type InstallationState, type IssueCommentState, type JobState,
  type PermissionLevel, type PullState, type RepoState, type UserRef, type WorkflowRunState, type WorkflowState,
} from "./state.ts";
import { HttpError, type AuthInfo, type FakeCore, type Handler, type HandlerResult } from "./handlers/common.ts";
import { repoHandlers } from "./handlers/repos.ts";
import { pullHandlers } from "./handlers/pulls.ts";
import { checkHandlers } from "./handlers/checks.ts";
import { issueHandlers } from "./handlers/issues.ts";
import { actionHandlers } from "./handlers/actions.ts";

const HANDLERS: Readonly<Record<string, Handler>> = {
  ...repoHandlers, ...pullHandlers, ...checkHandlers, ...issueHandlers, ...actionHandlers,
};

// App-level endpoints GitHub only accepts with the app's JWT.
const JWT_OPERATIONS = new Set([
  "apps/get-authenticated", "apps/create-installation-access-token", "apps/get-installation",
  "apps/get-repo-installation", "apps/get-org-installation", "apps/get-user-installation", "apps/list-installations",
]);

const DOCS = "https://docs.github.com/rest";

export interface FakeGitHubOptions {
  /** 0 (default) picks a free port */
  readonly port?: number;
  readonly appId?: number;
  /** the bot login is `<appSlug>[bot]` */
  readonly appSlug?: string;
  /** PEM; when given, app JWT signatures are verified (RS256) */
  readonly appPublicKey?: string;
  /** default true: unknown tokens get 401 "Bad credentials" like GitHub */
  readonly strictAuth?: boolean;
  /** requests per credential before a primary-rate-limit 403 (default 5000) */
  readonly rateLimit?: number;
  /** max `object(...)` selections in one GraphQL query (default 500) */
  readonly graphqlObjectLimit?: number;
  /** default true; false skips response validation (saves the first-call compile, ~0.2-0.5 s per operation) */
  readonly validateResponses?: boolean;
}

export interface RecordedCall {
  readonly method: string;
  /** without the /api/v3 prefix */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly status: number;
  readonly timestamp: number;
  readonly operationId?: string;
  readonly injected: boolean;
}

export type ViolationKind = "unknown-route" | "not-implemented" | "request-body" | "response-body" | "response-status";

export interface Violation {
  readonly kind: ViolationKind;
  readonly method: string;
  readonly path: string;
  readonly operationId?: string;
  readonly status?: number;
  readonly message: string;
  readonly errors?: readonly unknown[];
}

export interface Injection {
  /** any method when omitted */
  readonly method?: string;
  /** tested against the path without the /api/v3 prefix (e.g. /repos/o/r/pulls/1/reviews) */
  readonly path: RegExp;
  /** default 1 */
  readonly times?: number;
  /** true: the request is processed as usual, then answered with this status (GitHub did the work but the answer got lost) */
  readonly afterProcessing?: boolean;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** answer only after this long (a GitHub that hangs; the call is in `calls` at once; with afterProcessing, after the work is done) */
  readonly delayMs?: number;
}

interface ActiveInjection {
  readonly rule: Injection;
  remaining: number;
}

export interface AddRepoOptions {
  readonly owner: string;
  readonly repo: string;
  readonly defaultBranch?: string;
  readonly private?: boolean;
  readonly installationId?: number;
  /** ref (branch name or 40-hex sha) -> path -> content */
  readonly files?: Readonly<Record<string, Readonly<Record<string, FileContent>>>>;
}

export interface AddPullFile {
  readonly filename: string;
  readonly status?: FileStatus;
  /** GitHub's `patch`; derived from contents when omitted (added/removed/modified with base content) */
  readonly patch?: string;
  /** content at head (omit for removed files) */
  readonly contents?: FileContent;
  readonly previousFilename?: string;
}

export interface AddPullRequestOptions {
  readonly owner: string;
  readonly repo: string;
  readonly number: number;
  readonly head: { readonly sha?: string; readonly ref: string };
  /** base branch name (default: the repository's default branch) or {ref, sha} */
  readonly base?: string | { readonly ref: string; readonly sha?: string };
  readonly user?: string;
  readonly title?: string;
  readonly body?: string | null;
  readonly draft?: boolean;
  readonly state?: "open" | "closed";
  /** "owner/name" of a fork holding the head branch. */
  readonly headRepo?: string;
  readonly files: readonly AddPullFile[];
}

export interface FakeGitHub {
  /** http://127.0.0.1:PORT (routes answer here and under /api/v3) */
  readonly url: string;
  /** url + "/api/v3", what Probot uses with GHE_HOST/GHE_PROTOCOL */
  readonly apiUrl: string;
  readonly state: FakeState;
  readonly calls: RecordedCall[];
  readonly violations: Violation[];
  readonly bot: UserRef;
  readonly appId: number;
  /** milliseconds from start to listening (spec parse included when not cached) */
  readonly startupMs: number;
  close(): Promise<void>;
  inject(rule: Injection): void;
  /** injections not yet consumed */
  pendingInjections(): readonly Injection[];
  addInstallation(o: { id: number; account: string; accountType?: "User" | "Organization"; permissions?: Record<string, string>; repositories?: readonly string[] }): InstallationState;
  addRepo(o: AddRepoOptions): RepoState;
  /** a commit on a branch (tree = files; `base` ref's tree is copied first when given); a push at `pushedAt` (default now) in the activity API */
  addCommit(o: { owner: string; repo: string; branch?: string; base?: string; sha?: string; files: Readonly<Record<string, FileContent | null>>; pushedAt?: Date }): string;
  addPullRequest(o: AddPullRequestOptions): PullState;
  addIssue(o: { owner: string; repo: string; number: number; title?: string }): void;
  addIssueComment(o: { owner: string; repo: string; number: number; body: string; user?: string }): IssueCommentState;
  /** for every repository, or only `repo` ("owner/name") */
  setPermission(login: string, level: PermissionLevel, repo?: string): void;
  addWorkflow(o: { owner: string; repo: string; id?: number; path: string; name?: string; inputs?: Record<string, { required?: boolean }>; runName?: string; jobName?: string }): WorkflowState;
  updateWorkflowRun(id: number, patch: { status?: string; conclusion?: string | null }): WorkflowRunState;
  /** A run that was not dispatched through the API (a push or pull_request run, or a person's manual dispatch). */
  addWorkflowRun(o: { owner: string; repo: string; workflowId: number; event: string; headBranch: string; headSha: string; displayTitle: string; status?: string; conclusion?: string | null; actor?: string; jobName?: string }): WorkflowRunState;
  addJob(o: { runId: number; name: string; log?: string; status?: string; conclusion?: string | null; steps?: JobState["steps"] }): JobState;
  /** Changes a job (the first of the run when `id` is a run id); steps replace the old ones. */
  updateJob(o: { runId: number; log?: string; status?: string; conclusion?: string | null; steps?: JobState["steps"] }): JobState;
  addArtifact(o: { runId: number; name: string; files: Record<string, FileContent>; expired?: boolean }): ArtifactState;
  /** mint an installation token without the JWT dance (for plain fetch tests) */
  installationToken(installationId: number): string;
  /** accept a static token (e.g. a PAT) in strict mode */
  addToken(token: string, installationId?: number): void;
  /** an OAuth client (the GitHub App's client id and secret) for the web flow at /login/oauth/... */
  addOAuthApp(o: { clientId: string; clientSecret: string; callbackUrl?: string }): void;
  /** a user access token for `login`, as the OAuth flow would hand out */
  addUserToken(login: string, token?: string): string;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function decodeJwtPart(part: string): JsonObject | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

interface RateBucket {
  used: number;
  readonly reset: number;
}

class FakeGitHubServer implements FakeGitHub, FakeCore {
  readonly state: FakeState;
  readonly calls: RecordedCall[] = [];
  readonly violations: Violation[] = [];
  readonly bot: UserRef;
  readonly appId: number;
  readonly appSlug: string;
  readonly graphqlObjectLimit: number;
  url = "";
  startupMs = 0;
  private readonly injections: ActiveInjection[] = [];
  private readonly downloads = new Map<string, { content: Buffer; contentType: string }>();
  private readonly rate = new Map<string, RateBucket>();
  private readonly server: Server;
  private readonly pendingInstallRepos = new Map<string, number>();

  constructor(private readonly spec: GitHubSpec, private readonly options: FakeGitHubOptions) {
    this.appId = options.appId ?? 1;
    this.appSlug = options.appSlug ?? "hcp-bot";
    this.graphqlObjectLimit = options.graphqlObjectLimit ?? 500;
    this.bot = { login: `${this.appSlug}[bot]`, id: 41898282, type: "Bot" };
    this.state = new FakeState(this.bot);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: `fake-github crashed: ${e instanceof Error ? e.stack : String(e)}` }));
      });
    });
  }

  get apiUrl(): string {
    return `${this.url}/api/v3`;
  }

  get webBase(): string {
    return this.url;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.options.port ?? 0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.closeAllConnections();
      this.server.close((e) => (e ? reject(e) : resolve()));
    });
  }

  // ---- failure injection -------------------------------------------------

  inject(rule: Injection): void {
    this.injections.push({ rule, remaining: rule.times ?? 1 });
  }

  pendingInjections(): readonly Injection[] {
    return this.injections.filter((i) => i.remaining > 0).map((i) => i.rule);
  }

  /** The first matching rule with uses left, consumed in the order they were added. */
  private takeInjection(method: string, path: string): Injection | undefined {
    const hit = this.injections.find((i) => i.remaining > 0 && (i.rule.method ?? method).toUpperCase() === method && i.rule.path.test(path));
    if (!hit) return undefined;
    hit.remaining--;
    return hit.rule;
  }

  registerDownload(content: Buffer, contentType: string): string {
    const id = randomBytes(12).toString("hex");
    this.downloads.set(id, { content, contentType });
    return `${this.url}/_fake/download/${id}`;
  }

  // ---- seeding -----------------------------------------------------------

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

  addWorkflow(o: { owner: string; repo: string; id?: number; path: string; name?: string; inputs?: Record<string, { required?: boolean }>; runName?: string; jobName?: string }): WorkflowState {
    this.requireRepoState(o.owner, o.repo);
    const wf: WorkflowState = {
      id: o.id ?? this.state.nextId(), repoKey: repoKey(o.owner, o.repo), path: o.path, name: o.name ?? o.path.split("/").at(-1) ?? o.path,
      ...(o.inputs ? { inputs: o.inputs } : {}),
      ...(o.runName ? { runName: o.runName } : {}),
      ...(o.jobName ? { jobName: o.jobName } : {}),
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

  addArtifact(o: { runId: number; name: string; files: Record<string, FileContent>; expired?: boolean }): ArtifactState {
    const run = this.state.workflowRuns.get(o.runId);
    if (!run) throw new Error(`fake-github: no workflow run ${o.runId}`);
    const a: ArtifactState = { id: this.state.nextId(), runId: o.runId, repoKey: run.repoKey, name: o.name, files: o.files, expired: o.expired ?? false, createdAt: nowIso() };
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

  // ---- request handling --------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const requestUrl = new URL(req.url ?? "/", this.url);
    const method = (req.method ?? "GET").toUpperCase();
    const prefixed = requestUrl.pathname === "/api/v3" || requestUrl.pathname.startsWith("/api/v3/");
    const path = prefixed ? requestUrl.pathname.slice("/api/v3".length) || "/" : requestUrl.pathname;
    const api = prefixed ? this.apiUrl : this.url;
    const query = Object.fromEntries(requestUrl.searchParams.entries());
    const parsedBody = this.parseJson(raw);
    const record = (status: number, operationId: string | undefined, injected = false): void => {
      this.calls.push({ method, path, query, body: parsedBody.value, status, timestamp: Date.now(), injected, ...(operationId ? { operationId } : {}) });
    };

    if (path.startsWith("/_fake/")) return this.serveFakeAsset(path, res, record);
    if (!prefixed && path.startsWith("/login/oauth/")) return this.handleOAuth(method, path, requestUrl, raw, req, res, record);

    const injected = this.takeInjection(method, path);
    if (injected && !injected.afterProcessing) {
      record(injected.status, undefined, true);
      if (injected.delayMs) await new Promise((resolve) => setTimeout(resolve, injected.delayMs).unref());
      if (res.destroyed || req.socket.destroyed) return; // the client went away meanwhile
      return this.send(res, injected.status, injected.body ?? { message: `Injected ${injected.status}`, documentation_url: DOCS }, injected.headers ?? {}, "core");
    }

    if (method === "POST" && (path === "/graphql" || requestUrl.pathname === "/api/graphql")) {
      return this.handleGraphQL(req, res, parsedBody, record);
    }

    const match = this.spec.match(method, path);
    if (!match) {
      this.violations.push({ kind: "unknown-route", method, path, message: `no operation in the OpenAPI description for ${method} ${path}` });
      record(404, undefined);
      return this.send(res, 404, { message: "Not Found", documentation_url: DOCS }, {}, "core");
    }
    const { op, params } = match;
    const docUrl = `${DOCS}#${op.operationId}`;

    const auth = this.authenticate(req, op);
    if (auth instanceof HttpError) {
      record(auth.status, op.operationId);
      return this.send(res, auth.status, auth.body, auth.headers, "core");
    }
    const limited = this.consumeRate(req, "core");
    if (limited) {
      record(403, op.operationId);
      return this.send(res, 403, { message: "API rate limit exceeded for installation.", documentation_url: DOCS }, limited, "core");
    }
    if (!parsedBody.ok) {
      record(400, op.operationId);
      return this.send(res, 400, { message: "Problems parsing JSON", documentation_url: docUrl }, {}, "core");
    }
    const bodyProblem = this.checkRequestBody(op, method, path, parsedBody.value, docUrl);
    if (bodyProblem) {
      record(422, op.operationId);
      return this.send(res, 422, bodyProblem, {}, "core");
    }
    const handler = HANDLERS[op.operationId];
    if (!handler) {
      this.violations.push({ kind: "not-implemented", method, path, operationId: op.operationId, message: `the fake does not implement ${op.operationId}` });
      record(404, op.operationId);
      return this.send(res, 404, { message: "Not Found", documentation_url: docUrl }, {}, "core");
    }
    const render = new Renderer(this.spec, this.state, api, this.url, { id: this.appId, slug: this.appSlug, owner: this.bot });
    let result: HandlerResult;
    try {
      result = handler({
        core: this, params, query: requestUrl.searchParams, body: isObject(parsedBody.value) ? parsedBody.value : {},
        headers: req.headers, render, auth, requestUrl: new URL(req.url ?? "/", this.url), docUrl,
      });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      result = { status: e.status, body: e.body, headers: e.headers };
    }
    if (injected) {
      // The work is done; the answer is lost on the way (a proxy's 502 after GitHub processed it).
      record(injected.status, op.operationId, true);
      // Done, and the answer hangs (a process can die before it arrives).
      if (injected.delayMs) await new Promise((resolve) => setTimeout(resolve, injected.delayMs).unref());
      if (res.destroyed || req.socket.destroyed) return;
      return this.send(res, injected.status, injected.body ?? { message: `Injected ${injected.status}`, documentation_url: DOCS }, injected.headers ?? {}, "core");
    }
    this.checkResponse(op, method, path, result);
    record(result.status, op.operationId);
    if (result.raw) {
      res.writeHead(result.status, { ...this.standardHeaders(req, "core"), "content-type": result.raw.contentType });
      res.end(result.raw.data);
      return;
    }
    return this.send(res, result.status, result.body, result.headers ?? {}, "core", req);
  }

  private parseJson(raw: Buffer): { ok: boolean; value: unknown } {
    if (raw.length === 0) return { ok: true, value: undefined };
    try {
      return { ok: true, value: JSON.parse(raw.toString("utf8")) as unknown };
    } catch {
      return { ok: false, value: raw.toString("utf8") };
    }
  }

  /** GitHub's 422 for a body that breaks the operation's schema; also a violation. */
  private checkRequestBody(op: Operation, method: string, path: string, body: unknown, docUrl: string): JsonObject | undefined {
    if (body === undefined) {
      if (!this.spec.requestBodyRequired(op)) return undefined;
      this.violations.push({ kind: "request-body", method, path, operationId: op.operationId, message: "request body is required" });
      return { message: "Invalid request.\n\nFor 'links/0/schema', nil is not an object.", documentation_url: docUrl, status: "422" };
    }
    const outcome = this.spec.validateRequestBody(op, body);
    if (outcome.ok) return undefined;
    this.violations.push({ kind: "request-body", method, path, operationId: op.operationId, message: "request body does not match the operation's schema", errors: outcome.errors });
    const errors = outcome.errors.map((e) => ({
      resource: op.operationId, code: e.keyword === "required" ? "missing_field" : "invalid",
      field: e.keyword === "required" ? String(e.params.missingProperty) : e.instancePath.replace(/^\//, "").replaceAll("/", "."),
      message: `${e.instancePath || "body"} ${e.message ?? "is invalid"}`,
    }));
    return { message: "Invalid request.", errors, documentation_url: docUrl, status: "422" };
  }

  /** Keep the fake honest: its own answers must match the documented response. */
  private checkResponse(op: Operation, method: string, path: string, result: HandlerResult): void {
    if (result.raw || this.options.validateResponses === false) return;
    const base = { method, path, operationId: op.operationId, status: result.status };
    if (!this.spec.isDocumentedStatus(op, result.status)) {
      if (result.status < 400) {
        this.violations.push({ ...base, kind: "response-status", message: `the fake answered ${result.status}, which ${op.operationId} does not document` });
        return;
      }
      // GitHub documents few error statuses; any error must still look like basic-error
      const outcome = this.spec.validateComponent("basic-error", result.body);
      if (!outcome.ok) this.violations.push({ ...base, kind: "response-body", message: "error body is not a basic-error", errors: outcome.errors });
      return;
    }
    const outcome = this.spec.validateResponse(op, result.status, result.body);
    if (outcome && !outcome.ok) {
      this.violations.push({ ...base, kind: "response-body", message: `the fake's ${result.status} body does not match the documented schema`, errors: outcome.errors.slice(0, 20) });
    }
  }

  private authenticate(req: IncomingMessage, op: Operation): AuthInfo | HttpError {
    const header = req.headers.authorization;
    if (!header) return new HttpError(401, { message: "Requires authentication", documentation_url: DOCS, status: "401" });
    const [scheme = "", credential = ""] = header.split(/\s+/, 2);
    if (!/^(token|bearer)$/i.test(scheme) || credential === "") return new HttpError(401, { message: "Bad credentials", documentation_url: DOCS, status: "401" });
    const parts = credential.split(".");
    if (parts.length === 3) {
      const problem = this.checkJwt(parts);
      if (problem) return new HttpError(401, { message: problem, documentation_url: DOCS, status: "401" });
      if (!JWT_OPERATIONS.has(op.operationId)) {
        return new HttpError(403, { message: "Resource not accessible by integration (an app JWT cannot call this; use an installation token)", documentation_url: DOCS, status: "403" });
      }
      return { kind: "jwt", installationId: null };
    }
    if (JWT_OPERATIONS.has(op.operationId)) {
      return new HttpError(401, { message: "A JSON web token could not be decoded", documentation_url: DOCS, status: "401" });
    }
    const token = this.state.tokens.get(credential);
    if (token && token.expiresAt > Date.now()) {
      if (token.user !== undefined) return { kind: "user", installationId: null, user: token.user };
      return { kind: token.installationId === null ? "token" : "installation", installationId: token.installationId };
    }
    if (token || this.options.strictAuth !== false) return new HttpError(401, { message: "Bad credentials", documentation_url: DOCS, status: "401" });
    return { kind: "token", installationId: null };
  }

  /** An app JWT: RS256, iss = app id, exp in the future (<= 10 min), signature when a key is configured. */
  private checkJwt(parts: string[]): string | undefined {
    const [h = "", p = "", s = ""] = parts;
    const header = decodeJwtPart(h);
    const payload = decodeJwtPart(p);
    if (!header || !payload || header.alg !== "RS256") return "A JSON web token could not be decoded";
    const now = Math.floor(Date.now() / 1000);
    if (String(payload.iss) !== String(this.appId)) return `'Issuer' claim ('iss') must be an Integer (app id ${this.appId})`;
    if (typeof payload.exp !== "number" || payload.exp <= now) return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires";
    if (payload.exp - now > 600) return "'Expiration time' claim ('exp') is too far in the future";
    if (this.options.appPublicKey) {
      const ok = verify("RSA-SHA256", Buffer.from(`${h}.${p}`), createPublicKey(this.options.appPublicKey), Buffer.from(s, "base64url"));
      if (!ok) return "A JSON web token could not be decoded";
    }
    return undefined;
  }

  /** Primary rate limit per credential; returns headers for a 403 when exhausted. */
  private consumeRate(req: IncomingMessage, resource: string): Record<string, string> | undefined {
    const bucket = this.bucket(req, resource);
    bucket.used++;
    return bucket.used > (this.options.rateLimit ?? 5000) ? { "x-ratelimit-remaining": "0" } : undefined;
  }

  private bucket(req: IncomingMessage, resource: string): RateBucket {
    const key = `${resource} ${req.headers.authorization ?? "anonymous"}`;
    let bucket = this.rate.get(key);
    if (!bucket) {
      bucket = { used: 0, reset: Math.floor(Date.now() / 1000) + 3600 };
      this.rate.set(key, bucket);
    }
    return bucket;
  }

  private standardHeaders(req: IncomingMessage | undefined, resource: string): Record<string, string> {
    const limit = this.options.rateLimit ?? 5000;
    const bucket = req ? this.bucket(req, resource) : { used: 0, reset: Math.floor(Date.now() / 1000) + 3600 };
    return {
      "x-github-request-id": randomUUID().toUpperCase().replaceAll("-", ":").slice(0, 27),
      "x-github-api-version-selected": "2022-11-28",
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(Math.max(0, limit - bucket.used)),
      "x-ratelimit-used": String(bucket.used),
      "x-ratelimit-reset": String(bucket.reset),
      "x-ratelimit-resource": resource,
    };
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>>, resource: string, req?: IncomingMessage): void {
    const all: Record<string, string> = { ...this.standardHeaders(req ?? res.req, resource), ...headers };
    if (status === 204 || status === 304 || (status >= 300 && status < 400 && body === undefined) || body === undefined) {
      res.writeHead(status, all);
      res.end();
      return;
    }
    res.writeHead(status, { ...all, "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify(body));
  }

  private handleGraphQL(
    req: IncomingMessage, res: ServerResponse, body: { ok: boolean; value: unknown },
    record: (status: number, operationId: string | undefined) => void,
  ): void {
    if (!req.headers.authorization) {
      record(401, "graphql");
      return this.send(res, 401, { message: "This endpoint requires you to be authenticated.", documentation_url: "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql" }, {}, "graphql");
    }
    const auth = this.authenticate(req, { method: "POST", template: "/graphql", operationId: "graphql", raw: {} });
    if (auth instanceof HttpError) {
      record(auth.status, "graphql");
      return this.send(res, auth.status, auth.body, auth.headers, "graphql");
    }
    const result = executeGraphQL({
      state: this.state, objectLimit: this.graphqlObjectLimit, treeOid: (c, d) => this.state.treeOid(c, d),
      findRepo: (owner, name) => {
        const repo = this.state.repo(owner, name);
        const hidden = repo && auth.installationId !== null && repo.installationId !== undefined && repo.installationId !== auth.installationId;
        return hidden ? undefined : repo;
      },
    }, body.ok ? body.value : undefined);
    this.consumeRate(req, "graphql");
    record(200, "graphql");
    return this.send(res, 200, result, {}, "graphql", req);
  }

  // ---- the OAuth web flow (github.com/login/oauth/...) -------------------

  private readonly oauthApps = new Map<string, { clientSecret: string; callbackUrl?: string }>();
  private readonly oauthCodes = new Map<string, { clientId: string; login: string; redirectUri: string; expiresAt: number }>();

  addOAuthApp(o: { clientId: string; clientSecret: string; callbackUrl?: string }): void {
    this.oauthApps.set(o.clientId, { clientSecret: o.clientSecret, ...(o.callbackUrl ? { callbackUrl: o.callbackUrl } : {}) });
  }

  addUserToken(login: string, token = randomToken("ghu_")): string {
    this.state.user(login);
    this.state.tokens.set(token, { token, installationId: null, expiresAt: Date.now() + 8 * 3600_000, user: login });
    return token;
  }

  /**
   * GET /login/oauth/authorize shows a sign-in form (the "browser" types a login, as a user
   * signs in on github.com); its POST redirects to the App's callback with a one-time code.
   * POST /login/oauth/access_token trades the code (with the client secret) for a user token.
   */
  private handleOAuth(
    method: string, path: string, url: URL, raw: Buffer, req: IncomingMessage, res: ServerResponse,
    record: (status: number, operationId: string | undefined) => void,
  ): void {
    const form = method === "POST" ? this.formOrJson(raw, req) : url.searchParams;
    const clientId = form.get("client_id") ?? "";
    const app = this.oauthApps.get(clientId);
    const page = (status: number, body: string) => {
      record(status, `oauth${path.slice("/login/oauth".length).replaceAll("/", "-")}`);
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(body);
    };
    const esc = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    if (path === "/login/oauth/authorize") {
      const redirectUri = form.get("redirect_uri") ?? app?.callbackUrl ?? "";
      if (!app) return page(404, "<h1>Not Found</h1><p>No OAuth app with this client_id.</p>");
      if (app.callbackUrl && !redirectUri.startsWith(app.callbackUrl)) return page(400, "<h1>The redirect_uri is not associated with this application.</h1>");
      if (method === "GET") {
        const hidden = ["client_id", "redirect_uri", "state"].map((n) => `<input type="hidden" name="${n}" value="${esc(form.get(n) ?? "")}">`).join("");
        return page(200, `<!doctype html><title>Sign in to GitHub</title><form method="post" action="/login/oauth/authorize">${hidden}<label>Username <input name="login" id="login_field"></label><button type="submit" name="authorize" value="1">Authorize</button></form>`);
      }
      const login = form.get("login") ?? "";
      if (!/^[A-Za-z0-9-]{1,39}$/.test(login)) return page(422, "<h1>Incorrect username or password.</h1>");
      const code = randomToken("code_").slice(0, 25);
      this.oauthCodes.set(code, { clientId, login, redirectUri, expiresAt: Date.now() + 600_000 });
      const target = new URL(redirectUri);
      target.searchParams.set("code", code);
      if (form.get("state")) target.searchParams.set("state", form.get("state")!);
      record(302, "oauth-authorize");
      res.writeHead(302, { location: target.href }).end();
      return;
    }
    if (path === "/login/oauth/access_token" && method === "POST") {
      const code = this.oauthCodes.get(form.get("code") ?? "");
      this.oauthCodes.delete(form.get("code") ?? "");
      const json = (body: object) => {
        record(200, "oauth-access-token");
        res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
      };
      // GitHub answers 200 with an error object here, not an HTTP error.
      if (!app || app.clientSecret !== form.get("client_secret")) return json({ error: "incorrect_client_credentials", error_description: "The client_id and/or client_secret passed are incorrect." });
      if (!code || code.clientId !== clientId || code.expiresAt < Date.now() || (form.get("redirect_uri") && form.get("redirect_uri") !== code.redirectUri)) {
        return json({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
      }
      return json({ access_token: this.addUserToken(code.login), token_type: "bearer", scope: "" });
    }
    return page(404, "<h1>Not Found</h1>");
  }

  private formOrJson(raw: Buffer, req: IncomingMessage): URLSearchParams {
    const text = raw.toString("utf8");
    if (String(req.headers["content-type"] ?? "").includes("application/json")) {
      try {
        const body: unknown = JSON.parse(text);
        return new URLSearchParams(isObject(body) ? Object.entries(body).map(([k, v]) => [k, String(v)]) : []);
      } catch {
        return new URLSearchParams();
      }
    }
    return new URLSearchParams(text);
  }

  private serveFakeAsset(path: string, res: ServerResponse, record: (status: number, operationId: string | undefined) => void): void {
    const download = /^\/_fake\/download\/([0-9a-f]+)$/.exec(path);
    if (download) {
      const item = this.downloads.get(download[1] ?? "");
      record(item ? 200 : 404, "fake/download");
      if (!item) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": item.contentType, "content-length": String(item.content.length) });
      res.end(item.content);
      return;
    }
    // /_fake/raw/{owner}/{repo}/{ref}/{path...}: the contents API's download_url
    const rawMatch = /^\/_fake\/raw\/([^/]+)\/([^/]+)\/([^/]+)\/(.+)$/.exec(path);
    const repo = rawMatch ? this.state.repo(rawMatch[1] ?? "", rawMatch[2] ?? "") : undefined;
    const sha = repo && rawMatch ? this.state.resolveRef(repo, decodeURIComponent(rawMatch[3] ?? "")) : undefined;
    const content = sha && rawMatch ? this.state.commits.get(sha)?.get(decodeURIComponent(rawMatch[4] ?? "")) : undefined;
    record(content === undefined ? 404 : 200, "fake/raw");
    if (content === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    res.end(typeof content === "string" ? content : Buffer.from(content));
  }
}

/** Start a fake GitHub on 127.0.0.1. The spec is parsed once per process. */
export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const started = performance.now();
  const server = new FakeGitHubServer(loadGitHubSpec(), options);
  await server.listen();
  server.startupMs = performance.now() - started;
  return server;
}
