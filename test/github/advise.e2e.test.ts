// The layout picture where the review proposes sizes (HCP001, HCP002, HCP018), and
// `/hcp advise` in a PR comment: the real server, signed webhooks, a fake GitHub that
// validates every request against GitHub's OpenAPI description.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { rankGrid } from "../../src/core/advise/ranks.ts";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { appKeys, botSettings, deliverAndSettle, pullRequestPayload } from "../support/bot-harness.ts";

const SECRET = "webhook-secret-for-advise";
const OWNER = "acme";
const REPO = "megatron-bridge";
const INSTALLATION = 9;
const RECIPE_PATH = "src/megatron/bridge/recipes/llama/h100/llama3.py";

/** A llama3-8B-shaped recipe (32 Q / 8 KV heads, TP 1, 64K sequence) with the given CP lines. */
function recipe(cpLines: string): string {
  return [
    "from megatron.bridge.recipes.common import _pretrain_common",
    "",
    "",
    "def llama3_8b_pretrain_64k_config():",
    "    cfg = _pretrain_common()",
    "    cfg.dataset.seq_length = 65536",
    "    cfg.model.seq_length = 65536",
    "    cfg.model.num_attention_heads = 32",
    "    cfg.model.num_query_groups = 8",
    "    cfg.model.tensor_model_parallel_size = 1",
    ...cpLines.split("\n").map((l) => `    ${l}`),
    "    return cfg",
    "",
  ].join("\n");
}
const BASE = recipe("cfg.model.context_parallel_size = 16");

let gh: FakeGitHub;
let bot: RunningServer;
let heads = 0;

const sha = () => (++heads).toString(16).padStart(40, "c");
const repository = () => ({ id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main", private: false });

async function openReviewedPr(number: number, text: string): Promise<string> {
  const head = sha();
  gh.addCommit({ owner: OWNER, repo: REPO, branch: `feature-${number}`, base: "main", sha: head, files: { [RECIPE_PATH]: text } });
  gh.addPullRequest({ owner: OWNER, repo: REPO, number, head: { sha: head, ref: `feature-${number}` }, files: [{ filename: RECIPE_PATH, contents: text, status: "modified" }] });
  await deliverAndSettle(bot, SECRET, "pull_request", pullRequestPayload({ githubUrl: gh.url, owner: OWNER, repo: REPO, installation: INSTALLATION, action: "opened", number, head }), randomUUID());
  return head;
}

async function list<T>(path: string): Promise<T[]> {
  const res = await fetch(`${gh.apiUrl}/repos/${OWNER}/${REPO}/${path}?per_page=100`, { headers: { authorization: `token ${gh.installationToken(INSTALLATION)}` } });
  return (await res.json()) as T[];
}

const reviewComments = (n: number) => list<{ body: string }>(`pulls/${n}/comments`);
const issueComments = (n: number) => list<{ body: string }>(`issues/${n}/comments`);

function mermaidBlocks(body: string): string[] {
  return [...body.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The p2p links a Mermaid block draws, as the rings they form. */
function ringLinks(block: string): string[] {
  return [...block.matchAll(/r(\d+) -\.- r(\d+)/g)].map((m) => `${m[1]}-${m[2]}`).sort();
}

function expectedLinks(tp: number, sizes: [number, number]): string[] {
  const rings = rankGrid({ tp, cp: sizes[0] * sizes[1], sizes }).levels[1]!;
  return rings.flatMap((ring) => ring.slice(1).map((r, i) => `${ring[i]}-${r}`)).sort();
}

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 5151, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: INSTALLATION, account: OWNER, accountType: "Organization" });
  gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: INSTALLATION, files: { main: { [RECIPE_PATH]: BASE } } });
  bot = await startServer(botSettings({ githubUrl: gh.url, appId: 5151, secret: SECRET }));
});

afterAll(async () => {
  await bot?.stop();
  await gh?.close();
});

afterEach(() => {
  expect(gh.violations).toEqual([]);
});

describe("pictures of the proposed sizes in the review", () => {
  it.each([
    ["HCP001 (a2a+p2p without sizes)", 'cfg.model.context_parallel_size = 16\ncfg.model.cp_comm_type = "a2a+p2p"', "HCP001", [8, 2]],
    ["HCP002 (the product is not CP)", 'cfg.model.context_parallel_size = 16\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]', "HCP002", [8, 2]],
    ["HCP018 (the a2a level spans two nodes)", 'cfg.model.context_parallel_size = 16\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [16, 1]', "HCP018", [8, 2]],
  ] as const)("%s: the inline comment, the check run and the summary draw the rank groups", async (_name, lines, rule, sizes) => {
    const number = 10 + ["HCP001", "HCP002", "HCP018"].indexOf(rule);
    const head = await openReviewedPr(number, recipe(lines));
    const inline = (await reviewComments(number)).find((c) => c.body.includes(rule))!;
    expect(inline.body).toContain(`Rank layout of the proposed sizes: a2a ${sizes[0]} × p2p ${sizes[1]} with TP 1 on 8-GPU nodes`);
    const [block] = mermaidBlocks(inline.body);
    expect(block).toContain('subgraph n0["node 0"]');
    expect(block).toContain('subgraph n1["node 1"]');
    expect(ringLinks(block!)).toEqual(expectedLinks(1, [sizes[0], sizes[1]]));

    const checkTexts = gh.calls
      .filter((c) => c.path.includes("/check-runs") && (c.method === "POST" || c.method === "PATCH"))
      .map((c) => (c.body as { head_sha?: string; output?: { text?: string } }).output?.text ?? "")
      .filter((t) => t.includes(rule));
    expect(checkTexts.some((t) => mermaidBlocks(t).length >= 1)).toBe(true);
    expect(head).toMatch(/^[0-9a-f]{40}$/);

    const summary = (await issueComments(number)).find((c) => c.body.includes("hcp-bot:summary"))!;
    expect(summary.body).toContain("**Proposed layouts**");
    expect(mermaidBlocks(summary.body)).toHaveLength(1);
  });
});

describe("/hcp advise in a PR comment", () => {
  const comment = (number: number, body: string, login = "reader") => ({
    action: "created",
    installation: { id: INSTALLATION },
    repository: repository(),
    sender: { login, id: 50, type: "User" },
    issue: { number, pull_request: { url: `${gh.apiUrl}/repos/${OWNER}/${REPO}/pulls/${number}` }, user: { login: "author" } },
    comment: { id: Math.floor(Math.random() * 1e9), body, user: { login, id: 50, type: "User" } },
  });

  it("answers with the recommendation, the rejected choices and the Mermaid picture", async () => {
    await openReviewedPr(20, BASE);
    await deliverAndSettle(bot, SECRET, "issue_comment", comment(20, "/hcp advise cp=8 tp=2 heads=32 kv_heads=8 nodes=2"), randomUUID());
    const reply = (await issueComments(20)).at(-1)!.body;
    expect(reply).toMatch(/^### hcp-bot layout advice/);
    expect(reply).toContain('**Recommended:** `cp_comm_type="a2a+p2p", hierarchical_context_parallel_sizes=[4, 2]`');
    expect(reply).toMatch(/- `a2a`: CP 8 does not divide the 4 KV heads per TP rank/);
    const [block] = mermaidBlocks(reply);
    expect(ringLinks(block!)).toEqual(expectedLinks(2, [4, 2]));
    expect(block).toContain('r3["3 · t1"]');
  });

  it("says why when the numbers cannot be laid out, and what the grammar takes when a word is wrong", async () => {
    await openReviewedPr(21, BASE);
    await deliverAndSettle(bot, SECRET, "issue_comment", comment(21, "/hcp advise cp=16 nodes=3"), randomUUID());
    expect((await issueComments(21)).at(-1)!.body).toMatch(/cannot lay that out: 3 × 8 = 24 GPUs is not a multiple of/);
    // Past the bound (4096 nodes of 1024 GPUs took the server to 2.7 GB and 16 s): refused in one line.
    await deliverAndSettle(bot, SECRET, "issue_comment", comment(21, "/hcp advise cp=8 nodes=4096 gpus_per_node=1024"), randomUUID());
    expect((await issueComments(21)).at(-1)!.body).toMatch(/cannot lay that out: 4096 × 1024 = 4194304 GPUs is more than the advisor lays out \(at most 65536/);
    await deliverAndSettle(bot, SECRET, "issue_comment", comment(21, "/hcp advise cp=4 <img src=x>"), randomUUID());
    const reply = (await issueComments(21)).at(-1)!.body;
    expect(reply).toMatch(/usage: \/hcp advise cp=N/);
    // The offending word is quoted inside a code span, where GitHub renders no HTML.
    expect(reply).toContain("`<img`");
  });

  it("answers anyone who comments, at most 10 an hour per requester and 20 per PR; past that it stays silent", async () => {
    await openReviewedPr(22, BASE);
    const advice = async () => (await issueComments(22)).filter((c) => c.body.startsWith("### hcp-bot layout advice")).length;
    for (let i = 0; i < 11; i++) await deliverAndSettle(bot, SECRET, "issue_comment", comment(22, "/hcp advise cp=2", "drive-by-1"), randomUUID());
    expect(await advice()).toBe(10);
    for (let i = 0; i < 11; i++) await deliverAndSettle(bot, SECRET, "issue_comment", comment(22, "/hcp advise cp=2", "drive-by-2"), randomUUID());
    expect(await advice()).toBe(20);
    // The PR's limit holds for a third person; the first one's own limit holds on another PR.
    await deliverAndSettle(bot, SECRET, "issue_comment", comment(22, "/hcp advise cp=2", "drive-by-3"), randomUUID());
    expect(await advice()).toBe(20);
    await openReviewedPr(23, BASE);
    await deliverAndSettle(bot, SECRET, "issue_comment", comment(23, "/hcp advise cp=2", "drive-by-1"), randomUUID());
    await deliverAndSettle(bot, SECRET, "issue_comment", comment(23, "/hcp advise cp=2", "drive-by-3"), randomUUID());
    expect((await issueComments(23)).filter((c) => c.body.startsWith("### hcp-bot layout advice")).length).toBe(1);
  });
});
