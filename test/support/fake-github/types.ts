// The fake GitHub's public types: its options, what it records, failure injection and the
// seeding options (see README.md).
import type {
  ArtifactState, FileContent, FileStatus, InstallationState, IssueCommentState, JobState,
  PermissionLevel, PullState, RepoState, UserRef, WorkflowRunState, WorkflowState, FakeState,
} from "./state.ts";

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
  /** answer only after this long (a GitHub that hangs; the call is in `calls` at once) */
  readonly delayMs?: number;
  /** answer only once this settles (calls of several clients held, then let go together) */
  readonly until?: Promise<unknown>;
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
  /** with `content` (the YAML), the file is committed to the default branch and each dispatch reads it at its ref */
  addWorkflow(o: { owner: string; repo: string; id?: number; path: string; name?: string; inputs?: Record<string, { required?: boolean }>; runName?: string; jobName?: string; content?: string }): WorkflowState;
  updateWorkflowRun(id: number, patch: { status?: string; conclusion?: string | null }): WorkflowRunState;
  /** A run that was not dispatched through the API (a push or pull_request run, or a person's manual dispatch). */
  addWorkflowRun(o: { owner: string; repo: string; workflowId: number; event: string; headBranch: string; headSha: string; displayTitle: string; status?: string; conclusion?: string | null; actor?: string; jobName?: string }): WorkflowRunState;
  addJob(o: { runId: number; name: string; log?: string; status?: string; conclusion?: string | null; steps?: JobState["steps"] }): JobState;
  /** Changes a job (the first of the run when `id` is a run id); steps replace the old ones. */
  updateJob(o: { runId: number; log?: string; status?: string; conclusion?: string | null; steps?: JobState["steps"] }): JobState;
  addArtifact(o: { runId: number; name: string; files: Record<string, FileContent>; zip?: Uint8Array; expired?: boolean }): ArtifactState;
  /** mint an installation token without the JWT dance (for plain fetch tests) */
  installationToken(installationId: number): string;
  /** accept a static token (e.g. a PAT) in strict mode */
  addToken(token: string, installationId?: number): void;
  /** an OAuth client (the GitHub App's client id and secret) for the web flow at /login/oauth/... */
  addOAuthApp(o: { clientId: string; clientSecret: string; callbackUrl?: string }): void;
  /** a user access token for `login`, as the OAuth flow would hand out */
  addUserToken(login: string, token?: string): string;
}
