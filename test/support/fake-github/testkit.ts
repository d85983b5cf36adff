// Shared set-up for the fake's own tests: a fake with one installed repository
// and a real Probot Octokit client pointed at it through /api/v3.
import { ProbotOctokit } from "probot";
import { startFakeGitHub, type FakeGitHub } from "./server.ts";

export const OWNER = "NVIDIA-NeMo";
export const REPO = "Megatron-Bridge";
export const INSTALLATION_ID = 7;

export type Client = InstanceType<typeof ProbotOctokit>;

/** Octokit with retries and throttling off, so each test sees GitHub's raw answers. */
export function client(fake: FakeGitHub, token: string, extra: Record<string, unknown> = {}): Client {
  return new ProbotOctokit({
    baseUrl: fake.apiUrl,
    auth: { token },
    retry: { enabled: false },
    throttle: { enabled: false },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    ...extra,
  });
}

export async function seededFake(): Promise<{ fake: FakeGitHub; token: string; octokit: Client }> {
  const fake = await startFakeGitHub({ appId: 42, appSlug: "hcp-bot" });
  fake.addInstallation({ id: INSTALLATION_ID, account: OWNER });
  fake.addRepo({
    owner: OWNER, repo: REPO, defaultBranch: "main",
    files: { main: { "README.md": "# bridge\n", "recipes/llama3.py": "def recipe():\n    cfg = 1\n    return cfg\n" } },
  });
  const token = fake.installationToken(INSTALLATION_ID);
  return { fake, token, octokit: client(fake, token) };
}

/** status of a failed Octokit call (RequestError), or undefined when it succeeded */
export async function statusOf(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (typeof e === "object" && e !== null && "status" in e && typeof e.status === "number") return e.status;
    throw e;
  }
}
