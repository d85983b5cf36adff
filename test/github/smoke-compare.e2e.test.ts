// `/hcp smoke compare=p2p` end to end: a signed comment webhook to the real server, the
// dispatch (with the workflow's compare input, checked against the real template by the fake
// GitHub), and one artifact holding both legs' logs (real signed probe runs: CP=4 [2, 2] for
// HCP, flat CP=4 for p2p) hashed in the runner's report. The bot recomputes both verdicts and
// reports the comparison on the check run and the PR comment.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { abArtifact } from "../support/ab-logs.ts";
import { appKeys, botSettings } from "../support/bot-harness.ts";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.ts";
import { visibleText } from "../support/gfm.ts";
import { addSmokeRepo, SmokeFlow, type FlowRepo } from "../support/smoke-flow.ts";

const SECRET = "ab-secret";
const REPO: FlowRepo = { owner: "acme", repo: "mb", installation: 9 };

let gh: FakeGitHub;
let bot: RunningServer;
let store: SqliteStore;
let flow: SmokeFlow;

beforeAll(async () => {
  gh = await startFakeGitHub({ appId: 79, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey });
  gh.addInstallation({ id: REPO.installation, account: "acme", accountType: "Organization" });
  addSmokeRepo(gh, REPO);
  gh.setPermission("maint", "write", "acme/mb");
  gh.setPermission("author", "write", "acme/mb");
  const settings = botSettings({ githubUrl: gh.url, appId: 79, secret: SECRET, dataDir: mkdtempSync(join(tmpdir(), "hcp-ab-")) });
  store = SqliteStore.open(settings.dataDir);
  bot = await startServer(settings, { store, sweepIntervalMs: 0, smoke: { runLookup: { attempts: 2, delayMs: 10 } } });
  flow = new SmokeFlow({ gh, bot: () => bot, secret: SECRET });
});

afterAll(async () => {
  await bot?.stop();
  await store?.close();
  await gh?.close();
});

async function smokeCheck(sha: string) {
  const res = await fetch(`${gh.apiUrl}/repos/acme/mb/commits/${sha}/check-runs?check_name=HCP%20smoke`, { headers: { authorization: `token ${gh.installationToken(REPO.installation)}` } });
  const data = (await res.json()) as { check_runs: Array<{ conclusion: string | null; output: { title: string; summary: string } }> };
  return data.check_runs[0]!;
}

/** `/hcp smoke compare=p2p` on a new PR, the run completed with `files`: the check run, the stored request. */
async function abRun(files: Record<string, string>, command = "/hcp smoke compare=p2p") {
  const sent = await flow.smokeOn(REPO, "maint", command);
  expect(sent.runId, "dispatched").toBeDefined();
  const inputs = gh.state.dispatches.at(-1)!.inputs as Record<string, string>;
  await flow.runToEnd(REPO, sent.runId!, sent.id!, files);
  return { inputs, check: await smokeCheck(sent.pr.sha), request: (await store.getSmokeRequest(sent.id!))! };
}

describe("/hcp smoke compare=p2p", () => {
  it("HCP faster than p2p: a pass with the ratio, both legs' numbers and the loss per iteration", async () => {
    const { inputs, check, request } = await abRun(abArtifact({ ms: [5200, 1000, 1000], lmLoss: [11.7712, 11.5021, 11.2043] }, { ms: [5400, 1180, 1180], lmLoss: [11.7712, 11.5022, 11.2051] }), "/hcp smoke compare=p2p iters=3");
    expect(inputs.compare).toBe("p2p");
    expect(JSON.parse(inputs.overrides!)).toContain("model.cp_comm_type=a2a+p2p");
    expect(request.compare).toBe("p2p");
    expect(check.conclusion).toBe("success");
    expect(check.output.title).toContain("HCP 1.18x the p2p throughput");
    const text = visibleText(check.output.summary);
    expect(text).toMatch(/A\/B comparison: a2a\+p2p vs p2p/);
    expect(text).toMatch(/HCP\s+a2a\+p2p \(HCP\)\s+pass\s+HCP on \[2, 2\]: 4 signed probe report\(s\)\s+245\.0\s+1000\.0/);
    expect(text).toMatch(/Reference\s+p2p\s+pass\s+flat CP: 4 signed probe report\(s\) without hierarchical levels\s+207\.6\s+1180\.0/);
    expect(text).toMatch(/3\s+11\.2043\s+11\.2051\s+0\.01 %/);
    expect(request.comparison).toMatchObject({ status: "compared", speedup: 1.18, flags: [], bound: { maxSpeedup: 1.65, cp: 4, sizes: [2, 2] } });
    expect(request.verdictSummary).toMatch(/A\/B: HCP 1\.18x the p2p throughput/);
  });

  it("HCP implausibly faster (3.4x, far beyond the 1.65x a2a+p2p can buy at CP 4): flagged as the silent-off signature, though no GPU peak is crossed", async () => {
    const { check, request } = await abRun(abArtifact({ ms: [2000, 350], lmLoss: [11.7712, 11.5021] }, { ms: [2100, 1190], lmLoss: [11.7712, 11.5022] }));
    expect(check.conclusion).toBe("failure");
    expect(request.verdict?.status).toBe("hcp-inactive");
    expect(request.verdict?.cause).toMatchObject({ kind: "implausible-throughput" });
    expect(request.verdict?.throughput.implausible).toBe(false); // 700 TFLOP/s is below any peak: only the A/B bound sees it
    expect(check.output.title).toMatch(/HCP 3\.40x the p2p throughput \(AB001: implausible\)/);
    expect(visibleText(check.output.summary)).toMatch(/AB001 HCP 3\.40x the p2p throughput, beyond the 1\.65x that a2a\+p2p can buy over p2p at CP 4 \[2, 2\].*silently off/);
  });

  it("a loss difference beyond 1 % is a numerics warning (AB002) that keeps the pass and says the signal is weak", async () => {
    const { check, request } = await abRun(abArtifact({ ms: [5000, 1050], lmLoss: [11.7712, 11.2012] }, { ms: [5100, 1100], lmLoss: [11.7712, 11.5022] }));
    expect(check.conclusion).toBe("success");
    expect(request.comparison?.flags.map((f) => [f.id, f.severity])).toEqual([["AB002", "warning"]]);
    expect(visibleText(check.output.summary)).toMatch(/AB002 lm loss differs by 2\.6 % at iteration 2 .*weak signal: 2 iteration\(s\) from random initialisation/);
    expect(check.output.title).toContain("HCP 1.05x the p2p throughput");
  });

  it("a failed reference leg keeps the HCP leg's verdict and says why the comparison is missing", async () => {
    const { check, request } = await abRun(abArtifact({ ms: [5000, 1000], lmLoss: [11.7712, 11.5021] }, { failed: true }));
    expect(check.conclusion).toBe("success");
    expect(request.verdict?.status).toBe("pass");
    expect(check.output.title).toMatch(/Smoke run passed · no p2p comparison/);
    expect(request.comparison).toMatchObject({ status: "missing", speedup: null });
    expect(request.comparison?.why).toMatch(/^the p2p reference leg failed \(/);
    expect(visibleText(check.output.summary)).toMatch(/No p2p comparison: the p2p reference leg failed/);
  });

  it("a reference leg whose log is not what the runner hashed is no comparison (and the HCP verdict stands)", async () => {
    const files = abArtifact({ ms: [5000, 1000], lmLoss: [11.7712, 11.5021] }, { ms: [5000, 3000], lmLoss: [11.7712, 11.5022] });
    const sent = await flow.smokeOn(REPO, "maint", "/hcp smoke compare=p2p");
    const { runnerJobLog, completeSmokeRun } = await import("../support/bot-harness.ts");
    const jobLog = await runnerJobLog(files);
    // Something rewrote reference.log after the runner hashed it (a slower p2p to flatter HCP).
    await completeSmokeRun(gh, { runId: sent.runId!, requestId: sent.id! }, { ...files, "reference.log": files["reference.log"]!.replace(/\(ms\): 3000\.0/, "(ms): 9000.0") }, { jobLog });
    await flow.deliver("workflow_run", flow.runPayload(REPO, "completed", { id: sent.runId!, status: "completed", conclusion: "success", display_title: `hcp-smoke ${sent.id}` }));
    const request = (await store.getSmokeRequest(sent.id!))!;
    expect(request.verdict?.status).toBe("pass");
    expect(request.comparison?.status).toBe("missing");
    expect(request.comparison?.why).toMatch(/reference leg's files are not what the runner wrote: reference\.log has SHA-256/);
  });

  it("refuses compare for a run that is not a2a+p2p, and with fewer than two iterations, before any GPU time", async () => {
    const flat = await flow.smokeOn(REPO, "maint", "/hcp smoke compare=p2p model.cp_comm_type=p2p sizes=none");
    expect(flat.runId).toBeUndefined();
    const one = await flow.smokeOn(REPO, "maint", "/hcp smoke compare=p2p iters=1");
    expect(one.runId).toBeUndefined();
    const bodies = [...gh.state.issueComments.values()].map((c) => visibleText(c.body));
    expect(bodies.some((b) => /compare=p2p compares cp_comm_type a2a\+p2p with p2p/.test(b))).toBe(true);
    expect(bodies.some((b) => /compare=p2p needs iters of at least 2/.test(b))).toBe(true);
  });
});
