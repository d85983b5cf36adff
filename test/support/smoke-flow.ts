// A `/hcp smoke` request carried through the real server and the fake GitHub, as
// test/github/smoke*.e2e.test.ts do it: a signed comment webhook, the dispatch it causes,
// the run starting, its log artifact uploaded, and the completed workflow_run webhook.
// For suites that need runs in the store made the way production makes them.
import type { FakeGitHub } from "./fake-github/index.ts";
import { completeSmokeRun, deliverAndSettle, SMOKE_RECIPE, smokeWorkflowFile } from "./bot-harness.ts";

export const SMOKE_RECIPE_FILE = "src/megatron/bridge/recipes/llama/llama3.py";
/** Generous quotas, so suites can leave many runs active. */
export const SMOKE_CONFIG = "smoke:\n  quotas: {per_user_per_day: 1000, max_queued: 1000}\n";

export interface FlowRepo {
  owner: string;
  repo: string;
  installation: number;
}

export interface SmokeFlowOptions {
  gh: FakeGitHub;
  bot: () => { url: string; idle(): Promise<void> };
  secret: string;
}

/** Adds a repository with the smoke workflow (as init-workflow renders it) and the default recipe. */
export function addSmokeRepo(gh: FakeGitHub, r: FlowRepo & { private?: boolean }): void {
  gh.addRepo({ owner: r.owner, repo: r.repo, defaultBranch: "main", installationId: r.installation, private: r.private ?? false, files: { main: { [SMOKE_RECIPE_FILE]: SMOKE_RECIPE, ".github/hcp-bot.yml": SMOKE_CONFIG } } });
  gh.addWorkflow({ owner: r.owner, repo: r.repo, path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke", content: smokeWorkflowFile() });
}

export class SmokeFlow {
  private prCounter = 100;

  constructor(private readonly o: SmokeFlowOptions) {}

  deliver(event: string, payload: object): Promise<number> {
    return deliverAndSettle(this.o.bot(), this.o.secret, event, payload);
  }

  repository(r: FlowRepo) {
    return { id: 1, name: r.repo, full_name: `${r.owner}/${r.repo}`, owner: { login: r.owner, id: 2, type: "Organization" }, default_branch: "main" };
  }

  commentPayload(r: FlowRepo, pr: number, body: string, login: string) {
    return {
      action: "created",
      installation: { id: r.installation },
      repository: this.repository(r),
      sender: { login, id: 50, type: "User" },
      issue: { number: pr, pull_request: { url: `${this.o.gh.apiUrl}/repos/${r.owner}/${r.repo}/pulls/${pr}` }, user: { login: "author" } },
      comment: { id: Math.floor(Math.random() * 1e9), body, user: { login, id: 50, type: "User" } },
    };
  }

  runPayload(r: FlowRepo, action: string, run: { id: number; status: string; conclusion: string | null; display_title: string }) {
    return {
      action,
      installation: { id: r.installation },
      repository: this.repository(r),
      sender: { login: "github-actions[bot]", id: 41898282, type: "Bot" },
      workflow_run: { event: "workflow_dispatch", head_branch: "main", path: ".github/workflows/hcp-smoke.yml", ...run, name: "hcp-smoke", html_url: `${this.o.gh.url}/${r.owner}/${r.repo}/actions/runs/${run.id}` },
    };
  }

  /** A PR by `author` (a writer by default) whose head SHA the fake knows. */
  openPr(r: FlowRepo, author = "author"): { number: number; sha: string } {
    const number = ++this.prCounter;
    const sha = `${r.installation.toString(16)}${number.toString(16)}`.padStart(40, "e");
    this.o.gh.addCommit({ owner: r.owner, repo: r.repo, branch: `pr-${number}`, base: "main", sha, files: { [SMOKE_RECIPE_FILE]: SMOKE_RECIPE } });
    this.o.gh.addPullRequest({ owner: r.owner, repo: r.repo, number, user: author, head: { sha, ref: `pr-${number}` }, files: [{ filename: SMOKE_RECIPE_FILE, contents: SMOKE_RECIPE, status: "modified" }] });
    return { number, sha };
  }

  /** `/hcp smoke` (or `text`) on a new PR: what was dispatched (undefined when refused). */
  async smokeOn(r: FlowRepo, login: string, text = "/hcp smoke"): Promise<{ pr: { number: number; sha: string }; runId?: number; id?: string }> {
    const pr = this.openPr(r);
    const before = this.o.gh.state.dispatches.length;
    await this.deliver("issue_comment", this.commentPayload(r, pr.number, text, login));
    const sent = this.o.gh.state.dispatches[before];
    return sent ? { pr, runId: sent.runId, id: (sent.inputs as Record<string, string>).request_id } : { pr };
  }

  /** The runner picks the job up, uploads `files` as the artifact, and the run completes. */
  async runToEnd(r: FlowRepo, runId: number, id: string, files: Record<string, string>, o: { conclusion?: string; whileRunning?: () => void } = {}): Promise<void> {
    const title = `hcp-smoke ${id}`;
    const conclusion = o.conclusion ?? "success";
    this.o.gh.updateWorkflowRun(runId, { status: "in_progress" });
    await this.deliver("workflow_run", this.runPayload(r, "in_progress", { id: runId, status: "in_progress", conclusion: null, display_title: title }));
    o.whileRunning?.();
    await completeSmokeRun(this.o.gh, { runId, requestId: id }, files, { conclusion });
    await this.deliver("workflow_run", this.runPayload(r, "completed", { id: runId, status: "completed", conclusion, display_title: title }));
  }
}
