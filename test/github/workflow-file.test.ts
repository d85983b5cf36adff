// src/github/smoke/workflow-file.ts against the fake GitHub with a real Octokit: the installed smoke
// workflow is read through the contents API at a given commit, each blob parsed once (the same
// blob gives the same reading; a new commit of the file a new one), a missing file is "missing",
// and the report /healthz shows lists the repositories whose workflow is older.
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import { restEndpointMethods } from "@octokit/plugin-rest-endpoint-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BotOctokit } from "../../src/github/host.ts";
import { installedWorkflowReport, readInstalledWorkflow } from "../../src/github/smoke/workflow-file.ts";
import { WORKFLOW_TEMPLATE_VERSION } from "../../src/core/smoke/workflow.ts";
import { smokeWorkflowFile } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";

let gh: FakeGitHub;
let octokit: BotOctokit;
const repo = { owner: "acme", repo: "wf" };

beforeAll(async () => {
  gh = await startFakeGitHub({ validateResponses: true });
  gh.addInstallation({ id: 3, account: "acme" });
  gh.addRepo({ owner: "acme", repo: "wf", files: { main: { "README.md": "x" } } });
  const Bot = Octokit.plugin(restEndpointMethods, paginateRest);
  octokit = new Bot({ auth: gh.installationToken(3), baseUrl: gh.apiUrl }) as unknown as BotOctokit;
});

afterAll(async () => {
  await gh.close();
});

describe("reading the installed smoke workflow", () => {
  it("is missing before the file exists, then read at each commit; one blob is parsed once", async () => {
    expect(await readInstalledWorkflow(octokit, repo, "hcp-smoke.yml", "main")).toEqual({ kind: "missing", path: ".github/workflows/hcp-smoke.yml" });
    expect(installedWorkflowReport().outdated).toEqual([expect.objectContaining({ repo: "acme/wf", version: null })]);

    const old = smokeWorkflowFile().replace(/^# hcp-bot workflow template: v\d+\n/m, "").replace(/ template v\d+"/, '"');
    const first = gh.addCommit({ owner: "acme", repo: "wf", branch: "main", base: "main", files: { ".github/workflows/hcp-smoke.yml": old } });
    const a = await readInstalledWorkflow(octokit, repo, "hcp-smoke.yml", first);
    const b = await readInstalledWorkflow(octokit, repo, "hcp-smoke.yml", "main");
    expect(a.kind === "found" && b.kind === "found" && a.workflow === b.workflow).toBe(true); // the cached reading, not a second parse
    expect(a.kind === "found" && a.workflow.version).toBe(1);
    expect(installedWorkflowReport().outdated).toEqual([expect.objectContaining({ repo: "acme/wf", version: 1 })]);

    const second = gh.addCommit({ owner: "acme", repo: "wf", branch: "main", base: "main", files: { ".github/workflows/hcp-smoke.yml": smokeWorkflowFile() } });
    const c = await readInstalledWorkflow(octokit, repo, "hcp-smoke.yml", second);
    expect(c.kind === "found" && c.workflow.version).toBe(WORKFLOW_TEMPLATE_VERSION);
    expect(c.kind === "found" && a.kind === "found" && c.blobSha !== a.blobSha).toBe(true);
    expect(installedWorkflowReport().outdated.some((w) => w.repo === "acme/wf")).toBe(false);
    // The old commit still reads as the old file: the cache is by blob, never stale.
    const again = await readInstalledWorkflow(octokit, repo, "hcp-smoke.yml", first);
    expect(again.kind === "found" && again.workflow.version).toBe(1);
    expect(gh.violations).toEqual([]);
  });

  it("a file that is not a workflow is unusable, with the reason", async () => {
    const sha = gh.addCommit({ owner: "acme", repo: "wf", base: "main", files: { ".github/workflows/broken.yml": "on: {workflow_dispatch: \n" } });
    const r = await readInstalledWorkflow(octokit, repo, "broken.yml", sha);
    expect(r).toEqual({ kind: "unusable", path: ".github/workflows/broken.yml", problem: expect.stringContaining("is not valid YAML") });
  });
});
