// The fake's mutable world. Plain records keyed like GitHub keys them; JSON
// responses are rendered from these on each request (render.ts).
import { createHash, randomBytes } from "node:crypto";
import { parsePatch, unifiedDiff, wholeFilePatch, type ParsedPatch } from "./diff.ts";

export type FileContent = string | Uint8Array;
export type Tree = Map<string, FileContent>;
export type PermissionLevel = "admin" | "maintain" | "write" | "triage" | "read" | "none";
export type FileStatus = "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";

export interface UserRef {
  readonly login: string;
  readonly id: number;
  readonly type: "User" | "Bot" | "Organization";
}

export interface RepoState {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  defaultBranch: string;
  private: boolean;
  installationId?: number;
  /** "heads/main" / "tags/v1" -> commit sha */
  readonly refs: Map<string, string>;
  readonly permissions: Map<string, PermissionLevel>;
}

export interface PullFileState {
  readonly filename: string;
  readonly status: FileStatus;
  readonly patch?: string;
  readonly parsed: ParsedPatch;
  readonly previousFilename?: string;
}

export interface PullState {
  readonly id: number;
  readonly repoKey: string;
  readonly number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  draft: boolean;
  merged: boolean;
  user: UserRef;
  head: { sha: string; ref: string };
  base: { sha: string; ref: string };
  /** "owner/name" of the fork the head branch lives in; absent for a branch of the base repository. */
  headRepo?: string;
  files: PullFileState[];
  readonly createdAt: string;
}

export interface IssueState {
  readonly id: number;
  readonly number: number;
  title: string;
  readonly isPull: boolean;
}

export interface IssueCommentState {
  readonly id: number;
  readonly repoKey: string;
  readonly issueNumber: number;
  body: string;
  readonly user: UserRef;
  readonly createdAt: string;
  updatedAt: string;
}

export interface ReactionState {
  readonly id: number;
  readonly commentId: number;
  readonly content: string;
  readonly user: UserRef;
  readonly createdAt: string;
}

export interface ReviewState {
  readonly id: number;
  readonly repoKey: string;
  readonly pullNumber: number;
  readonly body: string;
  readonly state: "COMMENTED" | "CHANGES_REQUESTED" | "APPROVED" | "PENDING";
  readonly commitId: string;
  readonly user: UserRef;
  readonly submittedAt: string;
}

export interface ReviewCommentState {
  readonly id: number;
  readonly reviewId: number;
  readonly repoKey: string;
  readonly pullNumber: number;
  readonly path: string;
  readonly body: string;
  readonly commitId: string;
  readonly line: number | null;
  readonly side: "LEFT" | "RIGHT";
  readonly startLine: number | null;
  readonly startSide: "LEFT" | "RIGHT" | null;
  readonly position: number;
  readonly diffHunk: string;
  readonly user: UserRef;
  readonly createdAt: string;
}

export interface AnnotationState {
  readonly path: string;
  readonly start_line: number;
  readonly end_line: number;
  readonly start_column?: number;
  readonly end_column?: number;
  readonly annotation_level: "notice" | "warning" | "failure";
  readonly message: string;
  readonly title?: string;
  readonly raw_details?: string;
}

export interface CheckRunState {
  readonly id: number;
  readonly repoKey: string;
  readonly headSha: string;
  name: string;
  status: string;
  conclusion: string | null;
  startedAt: string;
  completedAt: string | null;
  detailsUrl: string | null;
  externalId: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  readonly annotations: AnnotationState[];
  actions: unknown[];
  readonly checkSuiteId: number;
}

export interface WorkflowState {
  readonly id: number;
  readonly repoKey: string;
  readonly path: string;
  readonly name: string;
  /** declared `workflow_dispatch` inputs; undefined = accept any (a workflow `fromFile` declares what its file says) */
  readonly inputs?: Readonly<Record<string, { required?: boolean; default?: unknown }>>;
  /** true: a dispatch reads the file at `path` on the dispatched ref, as GitHub does (trigger, inputs, run-name, job name) */
  readonly fromFile?: boolean;
  /** the workflow's `run-name`, with `${{ inputs.x }}` expressions rendered per run */
  readonly runName?: string;
  /** the name of its one job, rendered like runName; a dispatch then creates that job (queued) */
  readonly jobName?: string;
}

export interface WorkflowRunState {
  readonly id: number;
  readonly repoKey: string;
  readonly workflowId: number;
  readonly runNumber: number;
  readonly headBranch: string;
  readonly headSha: string;
  readonly event: string;
  readonly inputs: Record<string, unknown>;
  /** the rendered run-name (GitHub's display_title); the workflow's name when it has none */
  readonly displayTitle?: string;
  status: string;
  conclusion: string | null;
  readonly createdAt: string;
  updatedAt: string;
  /** who started the run (GitHub's actor and triggering_actor) */
  readonly actor: UserRef;
}

export interface StepState {
  readonly name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
}

export interface JobState {
  readonly id: number;
  readonly runId: number;
  readonly name: string;
  status: string;
  conclusion: string | null;
  log: string;
  steps: StepState[];
}

export interface ArtifactState {
  readonly id: number;
  readonly runId: number;
  readonly repoKey: string;
  readonly name: string;
  readonly files: Record<string, FileContent>;
  /** The archive as uploaded, when the test built it; else a stored zip of `files`. */
  readonly zip?: Uint8Array;
  expired: boolean;
  readonly createdAt: string;
}

export interface InstallationState {
  readonly id: number;
  readonly account: UserRef;
  readonly permissions: Record<string, string>;
  readonly repositorySelection: "all" | "selected";
}

export interface TokenState {
  readonly token: string;
  readonly installationId: number | null;
  readonly expiresAt: number;
  /** A user's token from the OAuth web flow (a GitHub App user access token): this login. */
  readonly user?: string;
}

/** A push to a branch as the repository activity API lists it (GitHub's clock, not the commit's dates). */
export interface ActivityState {
  readonly id: number;
  readonly repoKey: string;
  readonly ref: string;
  readonly before: string;
  readonly after: string;
  readonly timestamp: string;
  readonly activityType: "push" | "force_push" | "branch_creation" | "branch_deletion";
  readonly actor: UserRef;
}

export interface DispatchRecord {
  readonly repoKey: string;
  readonly workflowId: number;
  readonly ref: string;
  readonly inputs: Record<string, unknown>;
  readonly runId: number;
}

export function repoKey(owner: string, repo: string): string {
  return `${owner}/${repo}`.toLowerCase();
}

export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function toBuffer(content: FileContent): Buffer {
  return typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
}

/** The git blob id (sha1 of "blob <len>\0<bytes>"), so shas look and behave like git's. */
export function blobSha(content: FileContent): string {
  const bytes = toBuffer(content);
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

export function fakeSha(seed: string): string {
  return createHash("sha1").update(seed).digest("hex");
}

export function randomToken(prefix: string): string {
  return prefix + randomBytes(18).toString("base64url").replace(/[-_]/g, "x").slice(0, 36);
}

const SHA_RE = /^[0-9a-f]{40}$/;

export function isSha(ref: string): boolean {
  return SHA_RE.test(ref);
}

export class FakeState {
  private nextIdValue = 1000;
  readonly repos = new Map<string, RepoState>();
  /** commit sha -> full tree at that commit */
  readonly commits = new Map<string, Tree>();
  readonly blobs = new Map<string, FileContent>();
  readonly pulls = new Map<string, PullState>();
  readonly issues = new Map<string, IssueState>();
  readonly issueComments = new Map<number, IssueCommentState>();
  readonly reactions = new Map<number, ReactionState>();
  readonly reviews = new Map<number, ReviewState>();
  readonly reviewComments = new Map<number, ReviewCommentState>();
  readonly checkRuns = new Map<number, CheckRunState>();
  readonly workflows = new Map<number, WorkflowState>();
  readonly workflowRuns = new Map<number, WorkflowRunState>();
  readonly jobs = new Map<number, JobState>();
  readonly artifacts = new Map<number, ArtifactState>();
  readonly installations = new Map<number, InstallationState>();
  readonly tokens = new Map<string, TokenState>();
  readonly dispatches: DispatchRecord[] = [];
  readonly activities: ActivityState[] = [];
  /** false: answer a dispatch with 204 even when asked for run details (GitHub Enterprise before they existed) */
  dispatchReturnsRunDetails = true;
  readonly users = new Map<string, UserRef>();
  /** permission for every repo unless the repo sets its own */
  readonly globalPermissions = new Map<string, PermissionLevel>();
  /** synthetic tree shas -> (commit, directory), so git/trees can list sub-trees */
  readonly treeIndex = new Map<string, { commit: string; dir: string }>();

  constructor(readonly bot: UserRef) {
    this.users.set(bot.login.toLowerCase(), bot);
  }

  nextId(): number {
    return ++this.nextIdValue;
  }

  user(login: string, type: UserRef["type"] = "User"): UserRef {
    const key = login.toLowerCase();
    let u = this.users.get(key);
    if (!u) {
      u = { login, id: this.nextId(), type: login.endsWith("[bot]") ? "Bot" : type };
      this.users.set(key, u);
    }
    return u;
  }

  repo(owner: string, name: string): RepoState | undefined {
    return this.repos.get(repoKey(owner, name));
  }

  pull(key: string, number: number): PullState | undefined {
    return this.pulls.get(`${key}#${number}`);
  }

  issue(key: string, number: number): IssueState | undefined {
    return this.issues.get(`${key}#${number}`);
  }

  /** Store a commit's full tree; returns its sha (derived from contents when not given). */
  putCommit(files: Record<string, FileContent> | Tree, sha?: string): string {
    const tree: Tree = files instanceof Map ? new Map(files) : new Map(Object.entries(files));
    const entries = [...tree.entries()].map(([p, c]) => `${p}\0${blobSha(c)}`).sort();
    const id = sha ?? fakeSha(`commit\0${entries.join("\n")}`);
    this.commits.set(id, tree);
    for (const content of tree.values()) this.blobs.set(blobSha(content), content);
    return id;
  }

  /** A sha, a branch, "heads/x" or "tags/x" -> commit sha. */
  resolveRef(repo: RepoState, ref: string | undefined): string | undefined {
    const r = ref ?? repo.defaultBranch;
    if (isSha(r) && this.commits.has(r)) return r;
    const stripped = r.replace(/^refs\//, "");
    return repo.refs.get(stripped) ?? repo.refs.get(`heads/${stripped}`) ?? repo.refs.get(`tags/${stripped}`);
  }

  treeOid(commit: string, dir: string): string {
    const oid = fakeSha(`tree\0${commit}\0${dir}`);
    this.treeIndex.set(oid, { commit, dir });
    return oid;
  }

  permissionOf(repo: RepoState, login: string): PermissionLevel | undefined {
    const key = login.toLowerCase();
    return repo.permissions.get(key) ?? this.globalPermissions.get(key);
  }
}

/** Seed-time patch: the given one, or the whole-file patch for added/removed files. */
export function seedPatch(status: FileStatus, patch: string | undefined, head?: FileContent, base?: FileContent): string | undefined {
  if (patch !== undefined) return patch;
  if (status === "added" && typeof head === "string") return wholeFilePatch(head, "added");
  if (status === "removed" && typeof base === "string") return wholeFilePatch(base, "removed");
  if (typeof head === "string" && typeof base === "string") return unifiedDiff(base, head);
  return undefined;
}

export { parsePatch };
