// `npm run bench:artifact`: hostile log artifacts through verdictForRun, each in a child process
// (bench/support/artifact-child.ts) against the fake GitHub in this one:
// 1. a deflate bomb: smoke.log of 4,000 MiB of zeros, a 4 MB zip;
// 2. 1,000 MiB of probe-like lines (HCP-PROBE reports), a 1 MB zip.
// For each: the verdict, the judging's wall time, the child's peak RSS (its threads included),
// and the slowest answer of a stand-in webhook route on the judging process's main thread,
// asked one request after another for as long as the judging lasts (GitHub gives up at 10 s).
// `npm run bench:artifact -- /path/to/other/checkout` measures another checkout's code.
import { spawn } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";

const root = process.argv[2] ?? join(import.meta.dirname, "..");
const { startFakeGitHub } = await import("../test/support/fake-github/index.ts");
const { deflatedEntry, deflatedZip } = await import("../test/support/fake-github/zip.ts");

const MiB = 1024 * 1024;
const PROBE_LINE = 'HCP-PROBE {"v":2,"rank":0,"world_size":4,"cp_size":4,"levels":null,"pid":914,"mac":"cb9c3f10847db62f118862fc0c8f52ce3f68ae43641696a315e7c4284a792a6f"}\n';
const unitOf = (text: string) => Buffer.from(text.repeat(Math.floor((4 * MiB) / text.length)));

const gh = await startFakeGitHub({ appId: 1, validateResponses: false });
gh.addInstallation({ id: 3, account: "acme", accountType: "Organization" });
gh.addRepo({ owner: "acme", repo: "mb", defaultBranch: "main", installationId: 3, files: { main: { "README.md": "# x\n" } } });
const wf = gh.addWorkflow({ owner: "acme", repo: "mb", path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke" });
const token = gh.installationToken(3);

function seed(zip: Uint8Array): number {
  const run = gh.addWorkflowRun({ owner: "acme", repo: "mb", workflowId: wf.id, event: "workflow_dispatch", headBranch: "main", headSha: "d".repeat(40), displayTitle: "hcp smoke bench", status: "completed", conclusion: "success" });
  gh.addJob({ runId: run.id, name: "hcp smoke bench dddd", status: "completed", conclusion: "success", log: "2026-12-04T06:00:00.0000000Z the run\n" });
  gh.addArtifact({ runId: run.id, name: "hcp-smoke-bench", files: {}, zip });
  return run.id;
}

/** One POST to the child's route; resolves with its answer time in ms. */
function ask(port: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/api/github/webhooks", headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(performance.now() - t0));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ action: "created", zen: "x".repeat(1024) }));
  });
}

type Result = { status: string; cause: string | null; ms: number; maxRssMB: number; threaded: boolean };

async function measure(runId: number): Promise<Result & { slowestMs: number; answers: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "support/artifact-child.ts"), root, gh.apiUrl, token, "acme/mb", String(runId)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const { port } = JSON.parse((await lines.next()).value as string) as { port: number };
  await ask(port); // the route is warm before the judging starts
  let done = false;
  const times: number[] = [];
  const pinger = (async () => {
    while (!done) times.push(await ask(port).catch(() => NaN));
  })();
  child.stdin!.write("go\n");
  const result = JSON.parse((await lines.next()).value as string) as Result;
  done = true;
  await pinger;
  const answered = times.filter((t) => Number.isFinite(t));
  return { ...result, slowestMs: Math.round(answered.reduce((a, b) => Math.max(a, b), 0)), answers: answered.length };
}

const cases = [
  { name: "deflate bomb (4,000 MiB of zeros)", zip: deflatedZip([deflatedEntry("smoke.log", Buffer.alloc(4 * MiB), 1000)]) },
  { name: "1,000 MiB of probe-like lines", zip: deflatedZip([deflatedEntry("smoke.log", unitOf(PROBE_LINE), 250)]) },
];
console.log(`code measured: ${root}`);
for (const c of cases) {
  const r = await measure(seed(c.zip));
  console.log(`${c.name}: zip ${(c.zip.byteLength / MiB).toFixed(1)} MB -> ${r.status} in ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.maxRssMB} MB${r.threaded ? " (judged on the artifact thread)" : ""}; webhook route: slowest answer ${r.slowestMs} ms of ${r.answers} while judging`);
  console.log(`  cause: ${(r.cause ?? "none").slice(0, 240)}`);
}
await gh.close();
