// `/hcp smoke` end to end: signed issue_comment webhooks to the real server, a fake GitHub
// that validates every request against the OpenAPI description, workflow_run webhooks carrying
// real GPU logs back. This suite: the verdict, and why a failed or forged run cannot pass.
// The others: smoke-binding (which run is the request's), smoke-access (who may spend GPU
// time), smoke-lifecycle (pre-flight, cancel, help, timeouts, lost answers).
import { describe, expect, it } from "vitest";
import { completeSmokeRun, fixtureLog, runnerFacts, runnerJobLog } from "../support/bot-harness.ts";
import { inspectGfm, visibleText } from "../support/gfm.ts";
import {
  FLAT_LOG, MISMATCHED_LOG, PASSING_LOG, bot, commentPayload, comments, deliver, dispatches, finishRun, gh, openPr, restart, runPayload, smokeCheck, smokeOn, smokeTuning, useSmokeE2E,
} from "../support/smoke-e2e.ts";

useSmokeE2E();

describe("/hcp smoke on a pull request", () => {
  it("dispatches the pinned SHA, follows the run, and reports a pass with HCP evidence", async () => {
    const pr = openPr();
    const before = dispatches().length;
    const commentId = 5001;
    expect(await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "maint", { commentId }))).toBe(200);

    const sent = dispatches().slice(before);
    expect(sent).toHaveLength(1);
    const inputs = sent[0]!.inputs as Record<string, string>;
    expect(sent[0]!.ref).toBe("main");
    expect(inputs.sha).toBe(pr.sha);
    expect(inputs.recipe).toBe("llama32_1b_pretrain_config");
    expect(JSON.parse(inputs.overrides!)).toEqual(expect.arrayContaining(["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"]));
    expect(inputs.expect_hcp).toBe("true");

    const check = (await smokeCheck(pr.sha))!;
    expect(check.status).toBe("queued");
    expect(check.output.summary).toContain(pr.sha);
    const reply = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!;
    expect(reply.body).toMatch(/queued for a GPU runner/);
    expect(reply.body).toContain("/actions/runs/");
    expect(gh.calls.some((c) => c.method === "POST" && c.path.endsWith(`/issues/comments/${commentId}/reactions`))).toBe(true);

    const runId = sent[0]!.runId;
    const title = `hcp-smoke ${inputs.request_id} (PR #${pr.number}, llama32_1b_pretrain_config)`;
    gh.updateWorkflowRun(runId, { status: "in_progress" });
    await deliver("workflow_run", runPayload("in_progress", { id: runId, status: "in_progress", conclusion: null, display_title: title }));
    expect((await smokeCheck(pr.sha))!.status).toBe("in_progress");
    expect((await comments(pr.number)).find((c) => c.id === reply.id)!.body).toMatch(/in progress/);

    await completeSmokeRun(gh, { runId, requestId: inputs.request_id! }, { "smoke.log": PASSING_LOG, "verdict.json": runnerFacts({ status: "fail" }) });
    await deliver("workflow_run", runPayload("completed", { id: runId, status: "completed", conclusion: "success", display_title: title }));
    const done = (await smokeCheck(pr.sha))!;
    expect(done.conclusion).toBe("success"); // recomputed from the log; the runner's "fail" hint is ignored
    const story = (await comments(pr.number)).find((c) => c.id === reply.id)!;
    expect(story.body).toMatch(/Smoke run passed/);
    expect(story.body).toMatch(/HIERARCHICAL_CONTEXT_PARALLEL_GROUP/);
  });

  it("fails a run whose log shows only the flat CP group (HCP silently off)", async () => {
    const { pr, sent, id } = await smokeOn({ login: "admin1" });
    await finishRun(sent, id, { "smoke.log": FLAT_LOG, "verdict.json": JSON.stringify({ exitCode: 0 }) });
    const check = (await smokeCheck(pr.sha))!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/without hierarchical CP|hcp-inactive/);
  });

  it("does not pass a log without the run's probe key, with another run's key, or that answers another request (CP=2 [2, 1] for CP=4 [2, 2])", async () => {
    const judge = async (log: string, facts: string) => {
      const { pr, sent, id } = await smokeOn();
      await finishRun(sent, id, { "smoke.log": log, "verdict.json": facts });
      return (await smokeCheck(pr.sha))!;
    };
    const keyless = await judge(PASSING_LOG, JSON.stringify({ exitCode: 0 }));
    // Inconclusive (the reports cannot be authenticated) is a failure: branch protection counts neutral as passing.
    expect(keyless.conclusion).toBe("failure");
    expect(keyless.output.title).toMatch(/inconclusive: not a pass/);
    expect(visibleText(keyless.output.summary)).toMatch(/proved nothing about HCP, so the smoke check fails/);
    expect(visibleText(keyless.output.summary)).toMatch(/no probe key was given/);
    const otherKey = await judge(PASSING_LOG, runnerFacts({ probeKey: "0".repeat(64) }));
    expect(otherKey.conclusion).toBe("failure");
    expect(visibleText(otherKey.output.summary)).toMatch(/without a valid MAC/);
    const mismatched = await judge(MISMATCHED_LOG, runnerFacts());
    expect(mismatched.conclusion).toBe("failure");
    expect(visibleText(mismatched.output.summary)).toMatch(/HCP004/);
    // One printed line is not a run: a forged HCP report among the real ones changes nothing
    // (listed as untrusted), while a forged flat one counts against the run: untrusted
    // evidence can only make a verdict worse.
    const report = (levels: string) => 'HCP-PROBE {"v":2,"rank":0,"world_size":4,"cp_size":4,"levels":' + levels + ',"mac":"' + "a".repeat(64) + '"}\n[probe rank 0] done';
    const withForged = await judge(PASSING_LOG.replace("[probe rank 0] done", report('[{"level":0,"size":2,"ranks":[0,1]},{"level":1,"size":2,"ranks":[0,2]}]')), runnerFacts());
    expect(withForged.conclusion).toBe("success");
    expect(visibleText(withForged.output.summary)).toMatch(/1 HCP-PROBE report\(s\) without a valid MAC: listed as untrusted/);
    const withForgedFlat = await judge(PASSING_LOG.replace("[probe rank 0] done", report("null")), runnerFacts());
    expect(withForgedFlat.conclusion).toBe("failure");
  });

  it("judges with the runner's facts about the run (its GPU for the TFLOP/s check, its time limit), not its verdict", async () => {
    const judge = async (log: string, hint: object) => {
      const { pr, sent, id } = await smokeOn();
      await finishRun(sent, id, { "smoke.log": log, "verdict.json": JSON.stringify({ status: "pass", ...hint }) });
      return (await smokeCheck(pr.sha))!;
    };
    // HCP group names, but 1937 TFLOP/s per GPU: far above an H200's dense BF16 peak.
    const tooFast = PASSING_LOG.replace(/elapsed time per iteration \(ms\): 1234\.5 \|/g, "elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 1937.0 |");
    expect(tooFast).toContain("1937.0");
    const facts = JSON.parse(runnerFacts()) as object;
    expect((await judge(tooFast, facts)).conclusion).toBe("success"); // no GPU named: no TFLOP/s check
    const onH200 = await judge(tooFast, { ...facts, throughput: { gpu: "H200" } });
    expect(onH200.conclusion).toBe("failure");
    expect(onH200.output.summary).toMatch(/TFLOP/);
    const killed = await judge(PASSING_LOG, { exitCode: null, timedOut: true, signal: "SIGKILL" });
    expect(killed.conclusion).toBe("failure");
    expect(visibleText(killed.output.summary)).toMatch(/killed by the harness time limit \(SIGKILL\)/);
  });

  it("reads the runner's own smoke.log and verdict.json from the artifact, not look-alikes, and not a huge verdict.json", async () => {
    const judge = async (files: Record<string, string>) => {
      const { pr, sent, id } = await smokeOn();
      await finishRun(sent, id, files);
      return (await smokeCheck(pr.sha))!;
    };
    const hint = runnerFacts();
    // The code under test can write files next to smoke.log: "a.log" comes first in the zip.
    expect((await judge({ "a.log": PASSING_LOG, "smoke.log": FLAT_LOG, "verdict.json": hint })).conclusion).toBe("failure");
    expect((await judge({ "smoke.log": PASSING_LOG, "verdict.json": hint })).conclusion).toBe("success");
    // Over 256 KB is not a verdict.json the runner wrote: ignored, so the exit status is unknown.
    const huge = await judge({ "smoke.log": PASSING_LOG, "verdict.json": " ".repeat(300 * 1024) + hint });
    expect(huge.conclusion).not.toBe("success");
  });

  it("does not download a log artifact over the size limit, and says why (inconclusive, never a pass)", async () => {
    await restart({ smoke: smokeTuning({ maxArtifactBytes: 1024 }) });
    try {
      const { pr, sent, id } = await smokeOn();
      await completeSmokeRun(gh, { runId: sent.runId, requestId: id }, { "smoke.log": PASSING_LOG });
      const mark = gh.calls.length;
      await deliver("workflow_run", runPayload("completed", { id: sent.runId, status: "completed", conclusion: "success", display_title: `hcp-smoke ${id}` }));
      expect(gh.calls.slice(mark).some((c) => /\/actions\/artifacts\/\d+\/zip$/.test(c.path))).toBe(false);
      const check = (await smokeCheck(pr.sha))!;
      expect(check.conclusion).not.toBe("success");
      expect(check.output.summary).toMatch(/over the 0\.0 MB the bot reads/);
    } finally {
      await restart();
    }
  });

  it("reads the job log when no artifact was uploaded", async () => {
    const { pr, before, sent, id } = await smokeOn();
    // As GitHub serves a job log: a timestamp before every line; the runner's own report last,
    // quoting a line the log never had (the bot judges the log, not the report).
    const report = ["HCP smoke verdict: PASS (exit 0)", "  evidence: [I1130 ProcessGroupNCCL.cpp:1068] [PG ID 5 PG GUID 10(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 0]"];
    const jobLog = `${await runnerJobLog({ "smoke.log": fixtureLog("m_oom_default.log") })}\n${report.join("\n")}`;
    await finishRun(sent, id, {}, { conclusion: "failure", artifact: false, jobLog });
    const check = (await smokeCheck(pr.sha))!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/out of memory/i);
    expect(check.output.summary).toMatch(/job log/);
    expect(visibleText(check.output.summary)).toMatch(/root cause rank 1 \(local_rank 1\), exitcode 1/);
    expect(check.output.summary).not.toMatch(/HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0/);
  });
});

describe("a failed or forged run never turns the check green", () => {
  /** A log that passes on its own: HCP groups, two steps, the end-of-training marker. */
  const DONE_LOG = `${PASSING_LOG}[after training is done] datetime: 2026-11-30 04:42:30 \n`;
  const hint = runnerFacts();
  const conclusionOf = async (pr: { sha: string }) => (await smokeCheck(pr.sha))!;

  it("a failed job is never green: with an artifact whose log would pass, with no artifact (job-log fallback), and with an artifact lacking verdict.json", async () => {
    const complete = await smokeOn();
    await finishRun(complete.sent, complete.id, { "smoke.log": DONE_LOG, "verdict.json": hint }, { conclusion: "failure" });
    const c = await conclusionOf(complete.pr);
    expect(c.conclusion).toBe("failure");
    expect(c.output.summary).toMatch(/conclusion as failure/);

    // Without the artifact's key no report counts, so these logs are inconclusive on their own;
    // the failed job is noted, and neither turns green.
    const noArtifact = await smokeOn();
    await finishRun(noArtifact.sent, noArtifact.id, { "smoke.log": DONE_LOG }, { conclusion: "failure", artifact: false });
    const a = await conclusionOf(noArtifact.pr);
    expect(a.conclusion).not.toBe("success");
    expect(a.output.summary).toMatch(/conclusion as failure/);

    const noHint = await smokeOn();
    await finishRun(noHint.sent, noHint.id, { "smoke.log": DONE_LOG }, { conclusion: "failure" });
    expect((await conclusionOf(noHint.pr)).conclusion).not.toBe("success");
  });

  it("a passing job log without an artifact is at best inconclusive (the job log alone is not evidence)", async () => {
    const { pr, sent, id } = await smokeOn();
    await finishRun(sent, id, { "smoke.log": DONE_LOG, "verdict.json": hint }, { artifact: false });
    const check = await conclusionOf(pr);
    expect(check.conclusion).toBe("failure"); // never neutral: a required check must not pass on it
    expect(check.output.summary).toMatch(/no log artifact was uploaded/);
    const story = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"));
    expect(story?.body).toMatch(/Smoke run inconclusive: not a pass/);
  });

  it("an early fake `HCP smoke verdict:` line (and a fake report) printed by the code under test does not cut the log", async () => {
    const { pr, sent, id } = await smokeOn();
    // The PR prints what looks like the runner's report, with a nonce of its own, then crashes.
    const forged = ["HCP smoke verdict: PASS (exit 0)", "hcp-bot smoke-run: report nonce " + "ab".repeat(32), "hcp-bot smoke: PASS"].join("\n");
    const log = `${DONE_LOG}${forged}\n${fixtureLog("m_oom_default.log")}`;
    await finishRun(sent, id, { "smoke.log": log }, { conclusion: "failure", artifact: false });
    const check = await conclusionOf(pr);
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/out of memory/i); // judged past the fake lines
  });

  it("an artifact whose smoke.log or verdict.json is not what the runner hashed fails the run, even when the job succeeded", async () => {
    for (const tamper of ["smoke.log", "verdict.json"] as const) {
      const { pr, sent, id } = await smokeOn();
      const real = { "smoke.log": FLAT_LOG, "verdict.json": JSON.stringify({ exitCode: 1 }) };
      // A leftover process rewrote the file after the runner hashed it (the job log keeps the real hashes).
      const uploaded = { ...real, [tamper]: tamper === "smoke.log" ? DONE_LOG : hint };
      await finishRun(sent, id, uploaded, { jobLog: await runnerJobLog(real) });
      const check = await conclusionOf(pr);
      expect(check.conclusion, tamper).toBe("failure");
      expect(check.output.summary).toContain(`the artifact is not what the runner wrote: ${tamper} has SHA-256`);
    }
    // The same passing files with matching hashes pass: the check is the hash, not the content.
    const { pr, sent, id } = await smokeOn();
    await finishRun(sent, id, { "smoke.log": DONE_LOG, "verdict.json": hint });
    expect((await conclusionOf(pr)).conclusion).toBe("success");
  });

  it("a job log without the runner's report (killed runner, or a report whose nonce does not match its commitment) is never a pass", async () => {
    const { pr, sent, id } = await smokeOn();
    const files = { "smoke.log": DONE_LOG, "verdict.json": hint };
    await finishRun(sent, id, files, { jobLog: await runnerJobLog(files, { report: false }) });
    expect((await conclusionOf(pr)).conclusion).not.toBe("success");
  });

  it("reads smoke.log and verdict.json at the artifact's root only", async () => {
    const { pr, sent, id } = await smokeOn();
    const files = { "out/smoke.log": DONE_LOG, "out/verdict.json": hint };
    await finishRun(sent, id, files, { jobLog: await runnerJobLog({ "smoke.log": DONE_LOG, "verdict.json": hint }) });
    const check = await conclusionOf(pr);
    expect(check.conclusion).not.toBe("success");
    expect(check.output.summary).toMatch(/holds no smoke\.log at its root/);
  });
});

describe("text from the log never becomes markup", () => {
  it("a traceback line with a link, an image pixel, raw HTML and a team mention is quoted in the PR comment and the check run", async () => {
    const { pr, sent, id } = await smokeOn();
    const payload = "see [docs](https://evil.example) ![](https://evil.example/p.png) <img src=https://evil.example/q.png> <!-- hcp-bot:summary --> cc @NVIDIA-NeMo/maintainers";
    const log = `${fixtureLog("m_oom_default.log")}[rank0]: Traceback (most recent call last):\n[rank0]:   File "train.py", line 3, in <module>\n[rank0]: RuntimeError: ${payload}\n`;
    await finishRun(sent, id, { "smoke.log": log, "verdict.json": JSON.stringify({ exitCode: 1 }) }, { conclusion: "failure" });
    const check = (await smokeCheck(pr.sha))!;
    const story = (await comments(pr.number)).find((c) => c.body.includes("hcp-bot:smoke"))!;
    expect(visibleText(story.body)).toContain("cc @NVIDIA-NeMo/maintainers"); // shown as text
    for (const markdown of [check.output.summary, story.body]) {
      const seen = inspectGfm(markdown);
      expect(seen).toMatchObject({ images: 0, foreignElements: [], comments: 1 }); // the bot's own marker only
      expect(seen.hrefs.filter((h) => !h.startsWith(gh.url))).toEqual([]); // its own links to the run only
      expect(seen.mentions.filter((m) => m !== "maint")).toEqual([]);
    }
  });
});
