// `npm run bench:review`: time from a signed webhook to the review's last post, against
// the fake GitHub on loopback, for a 5-file and a 100-file PR; and the number of GitHub
// API calls per review. Targets (issue 3): p99 < 300 ms for 5 files; at most 10 calls for
// a 100-file PR with 20 findings.
import { performance } from "node:perf_hooks";
import { startServer } from "../src/server/server.ts";
import { appKeys, botSettings, deliverWebhook, hcpRecipe } from "../test/support/bot-harness.ts";
import { startFakeGitHub } from "../test/support/fake-github/index.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const SECRET = "bench-secret";
const OWNER = "acme";
const REPO = "megatron-bridge";

const GOOD = (name: string) => hcpRecipe(name, { sizes: true });
const BROKEN = (name: string) => hcpRecipe(name, { sizes: false });

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

const gh = await startFakeGitHub({ appId: 1, appPublicKey: appKeys.publicKey });
gh.addInstallation({ id: 1, account: OWNER, accountType: "Organization" });
gh.addRepo({ owner: OWNER, repo: REPO, defaultBranch: "main", installationId: 1, files: { main: { "README.md": "# repo\n" } } });
const bot = await startServer(botSettings({ githubUrl: gh.url, appId: 1, secret: SECRET }));

let number = 0;
const acks: number[] = [];
function openPr(fileCount: number, broken: number): { number: number; head: string } {
  number++;
  const head = number.toString(16).padStart(40, "0");
  const files: Record<string, string> = {};
  for (let i = 0; i < fileCount; i++) {
    const name = `m${number}_${i}`;
    files[`src/megatron/bridge/recipes/fam/h100/${name}.py`] = i < broken ? BROKEN(name) : GOOD(name);
  }
  gh.addCommit({ owner: OWNER, repo: REPO, branch: `pr-${number}`, base: "main", sha: head, files });
  gh.addPullRequest({
    owner: OWNER,
    repo: REPO,
    number,
    head: { sha: head, ref: `pr-${number}` },
    files: Object.entries(files).map(([filename, contents]) => ({ filename, contents, status: "added" as const })),
  });
  return { number, head };
}

async function review(pr: { number: number; head: string }): Promise<{ ms: number; calls: number }> {
  const repository = { id: 1, name: REPO, full_name: `${OWNER}/${REPO}`, owner: { login: OWNER, id: 2, type: "Organization" }, default_branch: "main" };
  const payload = {
    action: "opened",
    number: pr.number,
    installation: { id: 1 },
    repository,
    sender: { login: "author", id: 3 },
    pull_request: { number: pr.number, state: "open", draft: false, html_url: `${gh.url}/${OWNER}/${REPO}/pull/${pr.number}`, head: { sha: pr.head, ref: `pr-${pr.number}` }, base: { ref: "main" } },
  };
  const before = gh.calls.length;
  const t0 = performance.now();
  const status = await deliverWebhook(`${bot.url}/api/github/webhooks`, SECRET, "pull_request", payload);
  const ackMs = performance.now() - t0;
  await bot.idle();
  const ms = performance.now() - t0;
  acks.push(ackMs);
  if (status !== 200) throw new Error(`webhook answered ${status}`);
  return { ms, calls: gh.calls.length - before };
}

async function scenario(label: string, files: number, broken: number, runs: number) {
  await review(openPr(files, broken)); // warm-up: grammar load, token, bot login
  const times: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await review(openPr(files, broken));
    times.push(r.ms);
    calls.push(r.calls);
  }
  return { label, p50: percentile(times, 50), p99: percentile(times, 99), maxCalls: Math.max(...calls), minCalls: Math.min(...calls) };
}

const small = await scenario("5 files, 1 finding", 5, 1, RUNS);
const large = await scenario("100 files, 20 findings", 100, 20, Math.max(10, Math.floor(RUNS / 3)));
await bot.stop();
await gh.close();

console.log("hcp-bot review benchmark (webhook -> last post, fake GitHub on loopback)");
for (const s of [small, large]) {
  console.log(`  ${s.label.padEnd(24)} p50 ${s.p50.toFixed(1)} ms  p99 ${s.p99.toFixed(1)} ms  API calls per review ${s.minCalls}-${s.maxCalls}`);
}
console.log(`  webhook answered (ack) p50 ${percentile(acks, 50).toFixed(1)} ms  p99 ${percentile(acks, 99).toFixed(1)} ms; the review runs after the answer`);
console.log(`  target p99 < 300 ms for 5 files: ${small.p99 < 300 ? "met" : "MISSED"}`);
console.log(`  target <= 10 API calls for 100 files / 20 findings: ${large.maxCalls <= 10 ? "met" : "MISSED"}`);
if (gh.violations.length) console.log(`  fake GitHub recorded ${gh.violations.length} spec violation(s): ${JSON.stringify(gh.violations.slice(0, 3))}`);
