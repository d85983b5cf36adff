// The installed smoke workflow as the bot reads it (src/core/smoke/workflow.ts): its trigger,
// declared inputs and template version, and which of the bot's inputs it can take. The
// end-to-end behaviour is in test/github/smoke-workflow.e2e.test.ts; these pin the decisions
// for shapes the e2e does not seed (a newer input such as `compare`, choices, YAML forms).
import { describe, expect, it } from "vitest";
import { fitInputs, readSmokeWorkflow, skewNote, versionNote, WORKFLOW_TEMPLATE_VERSION, type SmokeWorkflow } from "../../src/core/smoke/workflow.ts";
import { smokeMessage } from "../../src/core/render/slack.ts";
import { smokeWorkflowFile } from "../support/bot-harness.ts";

const PATH = ".github/workflows/hcp-smoke.yml";
const read = (text: string): SmokeWorkflow => {
  const r = readSmokeWorkflow(text, PATH);
  if (!r.ok) throw new Error(r.problem);
  return r.workflow;
};
const workflow = (inputs: string) => read(`on:\n  workflow_dispatch:\n    inputs:\n${inputs}\njobs: {}\n`);
const SIX = ["sha", "pr", "recipe", "overrides", "request_id", "check_run_id"].map((n) => `      ${n}: {type: string}`).join("\n");
const WANTED: Array<[string, string]> = [["sha", "a".repeat(40)], ["pr", "1"], ["recipe", "r"], ["overrides", "[]"], ["request_id", "abc123"], ["check_run_id", "9"], ["nproc", "4"], ["iters", "2"], ["expect_hcp", "true"]];

describe("reading the workflow", () => {
  it("reads the rendered template's inputs and its version (the header comment)", () => {
    const w = read(smokeWorkflowFile());
    expect(w.version).toBe(WORKFLOW_TEMPLATE_VERSION);
    expect(Object.keys(w.inputs)).toEqual(["sha", "pr", "recipe", "overrides", "request_id", "check_run_id", "nproc", "iters", "expect_hcp", "compare"]);
    expect(w.inputs.compare).toMatchObject({ required: false, hasDefault: true, type: "choice" });
    expect(w.inputs.expect_hcp).toEqual({ required: false, hasDefault: true, type: "boolean" });
    expect(w.inputs.sha).toMatchObject({ required: true, hasDefault: false });
  });

  it("reads the version from the run-name when the comment is gone, and calls a file with neither v1", () => {
    const noComment = smokeWorkflowFile().replace(/^# hcp-bot workflow template: v\d+\n/m, "");
    expect(read(noComment).version).toBe(WORKFLOW_TEMPLATE_VERSION);
    expect(read(noComment.replace(/ template v\d+"/, '"')).version).toBe(1);
  });

  it("takes every form of `on:`; refuses one without workflow_dispatch, broken YAML and non-mapping inputs", () => {
    expect(readSmokeWorkflow("on: workflow_dispatch\njobs: {}\n", PATH)).toMatchObject({ ok: true, workflow: { inputs: {} } });
    expect(readSmokeWorkflow("on: [push, workflow_dispatch]\njobs: {}\n", PATH)).toMatchObject({ ok: true });
    expect(readSmokeWorkflow("on: [push]\n", PATH)).toEqual({ ok: false, problem: expect.stringContaining("has no `workflow_dispatch` trigger") });
    expect(readSmokeWorkflow("on:\n  workflow_dispatch:\n    inputs: [a]\n", PATH)).toEqual({ ok: false, problem: expect.stringContaining("not a mapping") });
    expect(readSmokeWorkflow("on: {workflow_dispatch: \n", PATH)).toEqual({ ok: false, problem: expect.stringContaining("is not valid YAML") });
    expect(readSmokeWorkflow("- a\n", PATH)).toEqual({ ok: false, problem: expect.stringContaining("not a workflow") });
  });
});

describe("fitting the bot's inputs", () => {
  it("sends the declared ones and reports each other one the same way, a newer input such as `compare` included", () => {
    const fit = fitInputs([...WANTED, ["compare", "p2p"]], workflow(SIX), PATH);
    expect(fit.ok && Object.keys(fit.send)).toEqual(["sha", "pr", "recipe", "overrides", "request_id", "check_run_id"]);
    expect(fit.ok && fit.dropped.map((d) => d.name)).toEqual(["nproc", "iters", "expect_hcp", "compare"]);
    expect(fit.ok && fit.dropped.at(-1)!.instead).toContain("no comparison");
    const note = fit.ok ? skewNote(fit.dropped, { path: PATH, version: 1 }) : null;
    expect(note).toContain("`compare=p2p`: it runs the HCP layout alone");
    // A name the bot has no text for still gets a sentence, never a crash.
    const unknown = fitInputs([...WANTED, ["future_knob", "x"]], workflow(SIX), PATH);
    expect(unknown.ok && unknown.dropped.at(-1)).toEqual({ name: "future_knob", value: "x", instead: "it runs without it" });
  });

  it("refuses a required input it cannot fill (unless defaulted), a missing sha or request_id, and values a declared type would reject", () => {
    expect(fitInputs(WANTED, workflow(`${SIX}\n      cluster: {required: true}`), PATH)).toEqual({ ok: false, reason: expect.stringContaining("requires the input(s) `cluster`") });
    expect(fitInputs(WANTED, workflow(`${SIX}\n      cluster: {required: true, default: eos}`), PATH).ok).toBe(true);
    expect(fitInputs(WANTED, workflow(SIX.replace(/ {6}request_id.*\n/, "")), PATH)).toEqual({ ok: false, reason: expect.stringContaining("`request_id`") });
    expect(fitInputs(WANTED, workflow(`${SIX}\n      nproc: {type: choice, options: [2, 8]}`), PATH)).toEqual({ ok: false, reason: expect.stringContaining('accepts only "2", "8"') });
    expect(fitInputs(WANTED, workflow(`${SIX}\n      nproc: {type: choice, options: [4, 8]}`), PATH).ok).toBe(true);
    expect(fitInputs([...WANTED.slice(0, 8), ["expect_hcp", "yes"]], workflow(`${SIX}\n      expect_hcp: {type: boolean}`), PATH)).toEqual({ ok: false, reason: expect.stringContaining("is a boolean there") });
  });

  it("says nothing when nothing was dropped; the status note names older and newer workflows", () => {
    expect(skewNote([], { path: PATH, version: 1 })).toBeNull();
    expect(versionNote({ path: PATH, version: WORKFLOW_TEMPLATE_VERSION })).toBeNull();
    expect(versionNote({ path: PATH, version: 1 })).toContain("older than this hcp-bot's");
    expect(versionNote({ path: PATH, version: WORKFLOW_TEMPLATE_VERSION + 1 })).toContain("newer than this hcp-bot's");
  });

  it("keeps a long or markup-laden value inside a code span", () => {
    const fit = fitInputs([...WANTED.slice(0, 3), ["overrides", JSON.stringify(["x=`<img src=a>`"])], ...WANTED.slice(4)], workflow(SIX.replace(/ {6}overrides.*\n/, "")), PATH);
    const note = fit.ok ? skewNote(fit.dropped, { path: PATH, version: 1 })! : "";
    expect(note).toMatch(/``\s?overrides=\["x=`<img src=a>`"\]\s?``/);
  });
});

describe("the Slack story of a run dispatched to an older workflow", () => {
  it("names the inputs it did not take and the upgrade command; says nothing for a current workflow", () => {
    const view = { requestId: "r1", requester: "maint", sha: "a".repeat(40), repo: "acme/mb", pr: 3, plan: { recipe: "r", cp: 4, cpCommType: "a2a+p2p", sizes: [2, 2] as [number, number], gpus: 4, iters: 2, overrides: [], expectHcp: true } };
    const older = JSON.stringify(smokeMessage(view, { kind: "dispatched", workflow: "x", skipped: ["nproc", "iters"] }));
    expect(older).toContain("does not take `nproc`, `iters`");
    expect(older).toContain("npx hcp-bot init-workflow --force");
    expect(JSON.stringify(smokeMessage(view, { kind: "dispatched" }))).not.toContain("init-workflow");
  });
});
