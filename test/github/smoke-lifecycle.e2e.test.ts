// `/hcp smoke` end to end: pre-flight refusals, cancel, help, the check run's button, GitHub
// failing mid-way (redeliveries, answers lost after the work was done) and queue timeouts.
import { describe, expect, it } from "vitest";
import { visibleText } from "../support/gfm.ts";
import {
  INSTALLATION, OWNER, RECIPE_FILE, REPO, advanceClock, bot, commentPayload, comments, deliver, dispatches, gh, nextPrNumber, openPr, repository, restart, runPayload, smokeCheck, smokeOn, useSmokeE2E, waitFor,
} from "../support/smoke-e2e.ts";

useSmokeE2E();

describe("pre-flight, cancel, help and queue timeouts", () => {
  it("refuses a configuration the analyzer knows cannot work, with the findings and no dispatch", async () => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke cp=4 sizes=2,2 dataset.seq_length=8190", "maint"));
    expect(dispatches().length).toBe(before);
    const reply = (await comments(pr.number)).at(-1)!.body;
    expect(reply).toMatch(/pre-flight check found/);
    expect(reply).toMatch(/HCP007/);
  });

  it("dispatches a recipe the pre-flight cannot find (run_recipe.py knows better), and says what was not checked", async () => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke recipe=qwen3_dynamic_pretrain_config", "maint"));
    expect(dispatches().length - before).toBe(1);
    const reply = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke") && c.body.includes("qwen3_dynamic_pretrain_config"))!;
    expect(visibleText(reply.body)).toContain(`The pre-flight did not find recipe qwen3_dynamic_pretrain_config at ${pr.sha.slice(0, 12)}, so it checked the overrides alone.`);
  });

  it("follows a builder the recipe imports from outside the recipe folders, read at the pinned SHA", async () => {
    const BUILDER = "src/megatron/bridge/training/shared_builders.py";
    const RECIPE_WITH_IMPORT = `from megatron.bridge.training.shared_builders import _long_context_common


def imported_builder_pretrain_config():
    cfg = _long_context_common()
    cfg.model.tensor_model_parallel_size = 1
    return cfg
`;
    const builder = (seq: number) =>
      `def _long_context_common():\n    cfg = ConfigContainer(model=GPTModelProvider(), dataset=GPTDatasetConfig(seq_length=${seq}))\n    cfg.model.seq_length = ${seq}\n    return cfg\n`;
    const open = (seq: number) => {
      const number = nextPrNumber();
      const sha = number.toString(16).padStart(40, "e");
      gh.addCommit({ owner: OWNER, repo: REPO, branch: `pr-${number}`, base: "main", sha, files: { [RECIPE_FILE]: RECIPE_WITH_IMPORT, [BUILDER]: builder(seq) } });
      gh.addPullRequest({ owner: OWNER, repo: REPO, number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: RECIPE_FILE, contents: RECIPE_WITH_IMPORT, status: "modified" }, { filename: BUILDER, contents: builder(seq), status: "added" }] });
      return { number, sha };
    };
    // 8190 is not a multiple of 2 × CP 4: only the builder (outside recipes/**) says so.
    const bad = open(8190);
    const before = dispatches().length;
    const mark = gh.calls.length;
    await deliver("issue_comment", commentPayload(bad.number, "/hcp smoke recipe=imported_builder_pretrain_config", "maint"));
    expect(dispatches().length).toBe(before);
    const reply = (await comments(bad.number)).at(-1)!.body;
    expect(reply).toMatch(/pre-flight check found/);
    expect(reply).toMatch(/HCP007/);
    const reads = gh.calls.slice(mark).filter((c) => c.method === "POST" && /graphql$/.test(c.path)).map((c) => JSON.stringify(c.body));
    expect(reads.some((q) => q.includes(`${bad.sha}:${BUILDER}`))).toBe(true);
    // Counter-example: the same recipe over a builder with a length CP can split is dispatched.
    const good = open(8192);
    await deliver("issue_comment", commentPayload(good.number, "/hcp smoke recipe=imported_builder_pretrain_config", "maint"));
    expect(dispatches().length - before).toBe(1);
  });

  it("answers a grammar error with what is allowed", async () => {
    const pr = openPr();
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke cp=4; rm -rf /", "maint"));
    const reply = (await comments(pr.number)).at(-1)!.body;
    expect(reply).toMatch(/line 1/);
    expect(dispatches().every((d) => !JSON.stringify(d.inputs).includes("rm -rf"))).toBe(true);
  });

  it("cancels the run with /hcp cancel", async () => {
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    const sent = dispatches()[before]!;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp cancel", "maint"));
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/actions/runs/${sent.runId}/cancel`))).toBe(true);
    expect((await smokeCheck(pr.sha))!.conclusion).toBe("cancelled");
    expect((await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!.body).toMatch(/cancelled by @maint/);
  });

  it("starts a smoke run from the button on the HCP review check run, with the same checks", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const action = (login: string) => ({
      action: "requested_action",
      installation: { id: INSTALLATION },
      repository: repository(),
      sender: { login, id: 51, type: "User" },
      requested_action: { identifier: "hcp-smoke" },
      check_run: { id: 1, name: "HCP review", head_sha: pr.sha, pull_requests: [{ number: pr.number, head: { sha: pr.sha, ref: `pr-${pr.number}` }, base: { sha: "b".repeat(40), ref: "main" } }] },
    });
    await deliver("check_run", action("reader"));
    expect(dispatches().length).toBe(before);
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/needs write access/);
    await deliver("check_run", action("maint"), "button-delivery-1");
    expect(dispatches().length - before).toBe(1);
    const sent = dispatches()[before]!;
    expect((sent.inputs as Record<string, string>).sha).toBe(pr.sha);
    // The run ends; then the same delivery comes again after a restart: nothing runs twice.
    gh.updateWorkflowRun(sent.runId, { status: "completed", conclusion: "cancelled" });
    await deliver("workflow_run", runPayload("completed", { id: sent.runId, status: "completed", conclusion: "cancelled", display_title: "x" }));
    await restart();
    await deliver("check_run", action("maint"), "button-delivery-1");
    expect(dispatches().length - before).toBe(1);
  });

  it("a comment whose handling failed before dispatch (GitHub down) runs once GitHub is back: its durable job retries; redeliveries add nothing", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const payload = commentPayload(pr.number, "/hcp smoke", "maint", { commentId: 7002 });
    // 502 for the first attempt and the bot's 12 retries of it.
    gh.inject({ method: "GET", path: new RegExp(`/pulls/${pr.number}$`), status: 502, times: 13 });
    await deliver("issue_comment", payload, "comment-delivery-1");
    expect(gh.pendingInjections()).toEqual([]);
    expect(dispatches().length).toBe(before);
    await deliver("issue_comment", payload, "comment-delivery-2"); // GitHub's redelivery, queued behind the job's retry
    await waitFor(() => dispatches().length > before, "the job's retry to dispatch");
    await deliver("issue_comment", payload, "comment-delivery-3");
    await new Promise((r) => setTimeout(r, 2500)); // the redelivery's job runs after the first (one key at a time)
    await bot.idle();
    expect(dispatches().length - before).toBe(1);
  });

  it("a dispatch or reply GitHub did but answered 502 happens once: the bot looks (runs by run-name, comments by marker) before it sends again", async () => {
    const smokeComments = async (pr: number) => (await comments(pr)).filter((c) => c.body.includes("hcp-bot:smoke"));
    // Processed, then the answer is lost.
    gh.inject({ method: "POST", path: /\/actions\/workflows\/[^/]+\/dispatches$/, status: 502, afterProcessing: true });
    gh.inject({ method: "POST", path: /\/issues\/\d+\/comments$/, status: 502, afterProcessing: true });
    const lost = await smokeOn();
    expect(gh.pendingInjections()).toEqual([]);
    expect(dispatches().length - lost.before).toBe(1);
    const story = await smokeComments(lost.pr.number);
    expect(story).toHaveLength(1);
    expect(story[0]!.body).toContain(`/actions/runs/${lost.sent.runId}`); // the run it found is the one that ran
    expect((await smokeCheck(lost.pr.sha))!.status).toBe("queued");

    // Not processed at all: nothing is found, so the bot sends it again, once.
    gh.inject({ method: "POST", path: /\/actions\/workflows\/[^/]+\/dispatches$/, status: 502 });
    gh.inject({ method: "POST", path: /\/issues\/\d+\/comments$/, status: 502 });
    const dropped = await smokeOn();
    expect(gh.pendingInjections()).toEqual([]);
    expect(dispatches().length - dropped.before).toBe(1);
    expect(await smokeComments(dropped.pr.number)).toHaveLength(1);
  });

  it("a reply GitHub posted but answered 502 is posted once", async () => {
    const pr = openPr();
    gh.inject({ method: "POST", path: new RegExp(`/issues/${pr.number}/comments$`), status: 502, afterProcessing: true });
    await deliver("issue_comment", commentPayload(pr.number, "/hcp help", "reader"));
    expect(gh.pendingInjections()).toEqual([]);
    expect((await comments(pr.number)).filter((c) => c.body.includes("/hcp smoke"))).toHaveLength(1);
  });

  it("answers /hcp help", async () => {
    const pr = openPr();
    await deliver("issue_comment", commentPayload(pr.number, "/hcp help", "reader"));
    expect((await comments(pr.number)).at(-1)!.body).toMatch(/\/hcp smoke/);
  });

  it("ends a run no GPU runner picked up as timed_out, and cancels it", async () => {
    await restart({ sweepIntervalMs: 50 });
    const pr = openPr();
    const before = dispatches().length;
    await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint"));
    const sent = dispatches()[before]!;
    advanceClock(31 * 60_000); // past the default 30-minute queue limit
    await new Promise((r) => setTimeout(r, 300));
    await bot.idle();
    const check = (await smokeCheck(pr.sha))!;
    expect(check.conclusion).toBe("timed_out");
    expect(check.output.summary).toMatch(/No self-hosted runner with the labels `self-hosted, linux, gpu-4`/);
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/actions/runs/${sent.runId}/cancel`))).toBe(true);
  });
});
