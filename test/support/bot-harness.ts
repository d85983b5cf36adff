// Shared pieces of the end-to-end suites: the GitHub App's key pair, signed webhook
// deliveries, and training logs built from real GPU logs.
import { createHmac, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitmentLine, delimiterLine, digestLine, REPORTED_FILES, sha256Hex, type FileDigest, type ReportedFile } from "../../src/core/smoke/runner-report.ts";
import { readServerSettings, type ServerSettings } from "../../src/server/env.ts";
import type { FakeGitHub } from "./fake-github/index.ts";
import { renderWorkflow, TEMPLATE_PATH, type WorkflowSettings } from "../../src/gpu/init-workflow.ts";
import { VERSION } from "../../src/version.ts";

const root = join(import.meta.dirname, "..", "..");

/** A PKCS#1 RSA key pair, as GitHub hands App keys out (made once per test file). */
export const appKeys = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

/**
 * Settings for the real server pointed (GHE_HOST/GHE_PROTOCOL) at a fake GitHub on
 * loopback, on a free port, quiet, with a fresh data folder unless one is given; `extra`
 * adds or overrides variables (Slack's, for instance).
 */
export function botSettings(o: { githubUrl: string; appId: number; secret: string; dataDir?: string; extra?: Record<string, string> }): ServerSettings {
  return readServerSettings(botEnv(o));
}

/** The environment behind botSettings (a child process gets it as is). */
export function botEnv(o: { githubUrl: string; appId: number; secret: string; dataDir?: string; extra?: Record<string, string> }): Record<string, string> {
  return {
    APP_ID: String(o.appId),
    PRIVATE_KEY: appKeys.privateKey,
    WEBHOOK_SECRET: o.secret,
    PORT: "0",
    HOST: "127.0.0.1",
    GHE_HOST: new URL(o.githubUrl).host,
    GHE_PROTOCOL: "http",
    LOG_LEVEL: "silent",
    HCP_DATA_DIR: o.dataDir ?? mkdtempSync(join(tmpdir(), "hcp-data-")),
    ...o.extra,
  };
}

/**
 * The GitHub retry policy's clock for tests that inject failures but are not about time:
 * every backoff is taken at once (the requests and answers stay real).
 */
export const instantClock = { now: () => Date.now(), sleep: () => new Promise<void>((resolve) => setImmediate(resolve)) };

/** POSTs a webhook signed like GitHub signs it; resolves with the HTTP status. */
export async function deliverWebhook(url: string, secret: string, event: string, payload: object, id: string = randomUUID()): Promise<number> {
  const body = JSON.stringify(payload);
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": id,
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    },
    body,
  });
  await res.text();
  return res.status;
}

/** Delivers a signed webhook to the bot, then waits for the work it queued (the answer comes first). */
export async function deliverAndSettle(bot: { url: string; idle(): Promise<void> }, secret: string, event: string, payload: object, id?: string): Promise<number> {
  const status = await deliverWebhook(`${bot.url}/api/github/webhooks`, secret, event, payload, id);
  await bot.idle();
  return status;
}

/** Bridge iteration lines (docs/domain.md 4.2) with finite losses. */
export function iterationLines(count = 2): string {
  return Array.from(
    { length: count },
    (_, k) =>
      ` [2026-11-30 10:00:0${k + 1}] iteration        ${k + 1}/       ${count} | consumed samples:            ${4 * (k + 1)} | elapsed time per iteration (ms): 1234.5 | learning rate: 1.000000E-05 | global batch size:     4 | lm loss: 1.03456${k + 1}E+01 | loss scale: 1.0 | grad norm: 3.210 | number of skipped iterations:   0 | number of nan iterations:   0 |`,
  ).join("\n");
}

/** A real GPU log from fixtures/logs, with two training steps added (the probe runs trained nothing). */
export function trainingLog(fixture: string): string {
  return `${fixtureLog(fixture)}\n${iterationLines()}\n`;
}

/**
 * A passing smoke run as the bot receives it: the real signed probe log of a CP=4 [2, 2] run on
 * 4 ranks (fixtures/logs/real-probe) with two training steps added, and the runner's
 * verdict.json facts: exit 0 and that run's probe key (`extra` adds or replaces facts).
 */
export const PASSING_RUN_LOG = "real-probe/s1_gloo_cp4_hcp2x2.v2.log";
/** The key a real signed log of fixtures/logs/real-probe was made with. */
export function probeKeyOf(log: string): string {
  const key = (JSON.parse(readFileSync(join(root, "fixtures", "logs", "real-probe", "keys.json"), "utf8")) as Record<string, string>)[log];
  if (!key) throw new Error(`no key recorded for ${log}`);
  return key;
}
export const PASSING_RUN_KEY: string = probeKeyOf("s1_gloo_cp4_hcp2x2.v2.log");
export function runnerFacts(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ exitCode: 0, probeKey: PASSING_RUN_KEY, ...extra });
}

export function fixtureLog(name: string): string {
  return readFileSync(join(root, "fixtures", "logs", name), "utf8");
}

/** The smoke run's default recipe as a one-GPU module would define it (CP is set by the run's overrides). */
export const SMOKE_RECIPE = `from megatron.bridge.recipes.common import _pretrain_common


def llama32_1b_pretrain_config():
    cfg = _pretrain_common()
    cfg.dataset.seq_length = 8192
    cfg.model.seq_length = 8192
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.context_parallel_size = 1
    return cfg
`;

/** A job-log line as GitHub serves it: the runner's timestamp first. */
function stamped(lines: readonly string[]): string {
  return lines.map((line, i) => `2026-11-30T04:43:${String(i % 60).padStart(2, "0")}.1234567Z ${line}`).join("\n");
}

/**
 * The job log of the smoke job as `hcp-bot smoke-run` prints it (src/gpu/smoke-run.ts):
 * the steps before it, the report commitment, the run's output, then the nonce delimiter and
 * the SHA-256 of the files it wrote. `report: false` leaves the report out (a killed runner).
 */
export async function runnerJobLog(files: Partial<Record<ReportedFile, string>>, o: { report?: boolean; commitSubject?: string } = {}): Promise<string> {
  const nonce = randomBytes(32).toString("hex");
  const digest = async (text: string) => ({ sha256: await sha256Hex(text), bytes: Buffer.byteLength(text) });
  const log = files["smoke.log"] ?? "";
  const lines = [
    "##[group]Run actions/checkout@v4",
    `HEAD is now at 0123456 ${o.commitSubject ?? "Add a recipe"}`,
    "##[endgroup]",
    "##[group]Run set -euo pipefail",
    commitmentLine(await sha256Hex(nonce)),
    ...log.split("\n").slice(0, log.endsWith("\n") ? -1 : undefined),
  ];
  if (o.report !== false) {
    lines.push("", delimiterLine(nonce));
    for (const name of REPORTED_FILES) if (files[name] !== undefined) lines.push(digestLine(name, await digest(files[name]!)));
    lines.push("HCP smoke verdict: PASS (exit 0)", "hcp-bot smoke: PASS");
  }
  return stamped(lines);
}

/** A job log whose runner report names `digests` (for artifacts a test builds as a zip), with no output of the run. */
export async function reportedJobLog(digests: Partial<Record<ReportedFile, FileDigest>>): Promise<string> {
  const nonce = randomBytes(32).toString("hex");
  const named = REPORTED_FILES.flatMap((name) => (digests[name] ? [digestLine(name, digests[name])] : []));
  return stamped(["##[group]Run set -euo pipefail", commitmentLine(await sha256Hex(nonce)), "the run's output", "", delimiterLine(nonce), ...named, "hcp-bot smoke: PASS"]);
}

type FakeForRuns = Pick<FakeGitHub, "addArtifact" | "updateJob" | "updateWorkflowRun">;

/**
 * The smoke run ends as GitHub would show it: its artifact (unless `artifact: false`), its job
 * log with the runner's report, the job's and the "Smoke run" step's conclusions, the run completed.
 */
export async function completeSmokeRun(
  gh: FakeForRuns,
  run: { runId: number; requestId: string },
  files: Record<string, string>,
  o: { conclusion?: string; stepConclusion?: string; artifact?: boolean; jobLog?: string } = {},
): Promise<void> {
  const conclusion = o.conclusion ?? "success";
  if (o.artifact !== false) gh.addArtifact({ runId: run.runId, name: `hcp-smoke-${run.requestId}`, files });
  gh.updateJob({
    runId: run.runId,
    status: "completed",
    conclusion,
    log: o.jobLog ?? (await runnerJobLog(files)),
    steps: ["Check inputs", "Set up Node", "Install hcp-bot", "Check out the pinned commit", "Verify the checked-out commit", "Smoke run", "Upload log and verdict"].map((name) => ({
      name,
      status: "completed" as const,
      conclusion: name === "Smoke run" ? (o.stepConclusion ?? conclusion) : "success",
    })),
  });
  gh.updateWorkflowRun(run.runId, { status: "completed", conclusion });
}

/** A CP 4 a2a+p2p recipe: clean with the [2, 2] sizes, HCP001 (with a one-click fix) without them. */
export function hcpRecipe(name: string, o: { sizes: boolean }): string {
  return `from megatron.bridge.recipes.common import _pretrain_common


def ${name}_pretrain_config():
    cfg = _pretrain_common()
    cfg.dataset.seq_length = 65536
    cfg.model.seq_length = 65536
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
${o.sizes ? "    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n" : ""}    return cfg
`;
}

/** The smoke workflow file as `hcp-bot init-workflow` renders it by default (`settings` replace the defaults). */
export function smokeWorkflowFile(settings: Partial<WorkflowSettings> = {}): string {
  return renderWorkflow(readFileSync(TEMPLATE_PATH, "utf8"), { labels: ["self-hosted", "linux", "gpu-4"], timeoutMinutes: 35, spec: `hcp-bot@${VERSION}`, ...settings });
}

/** A `pull_request` webhook payload as GitHub sends it for a PR from a branch of the same repository. */
export function pullRequestPayload(o: { githubUrl: string; owner: string; repo: string; installation: number; action: string; number: number; head: string; draft?: boolean }) {
  const repository = { id: 1, name: o.repo, full_name: `${o.owner}/${o.repo}`, owner: { login: o.owner, id: 2, type: "Organization" }, default_branch: "main", private: false };
  return {
    action: o.action,
    number: o.number,
    installation: { id: o.installation },
    repository,
    sender: { login: "author", id: 3, type: "User" },
    pull_request: {
      number: o.number,
      state: "open",
      draft: o.draft ?? false,
      html_url: `${o.githubUrl}/${o.owner}/${o.repo}/pull/${o.number}`,
      head: { sha: o.head, ref: `feature-${o.number}`, repo: repository },
      base: { sha: "b".repeat(40), ref: "main", repo: repository },
      user: { login: "author", id: 3, type: "User" },
    },
  };
}
