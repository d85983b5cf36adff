import { createHmac, randomUUID } from "node:crypto";
import { Agent, request } from "node:http";
import { appKeys, hcpRecipe } from "./test/support/bot-harness.ts";
import { startFakeGitHub } from "./test/support/fake-github/index.ts";
import { startFakeSlack } from "./test/support/fake-slack/index.ts";
import { startRedis } from "./test/support/redis.ts";
import { startReplica, stopReplica } from "./test/support/replicas.ts";
import { addSmokeRepo, SMOKE_RECIPE_FILE } from "./test/support/smoke-flow.ts";
const N = Number(process.env.N ?? 50), ROUNDS = Number(process.env.ROUNDS ?? 6);
const redis = await startRedis();
const gh = await startFakeGitHub({ appId: 77, appSlug: "hcp-bot", appPublicKey: appKeys.publicKey, validateResponses: false });
const slack = await startFakeSlack({ token: "xoxb-test" });
const R = { owner: "acme", repo: "mb", installation: 31 };
gh.addInstallation({ id: 31, account: "acme", accountType: "Organization" });
addSmokeRepo(gh, R);
gh.addCommit({ owner: "acme", repo: "mb", branch: "main", base: "main", files: { ".github/hcp-bot.yml": "smoke:\n  quotas: {per_user_per_day: 100000, max_queued: 100000}\nslack:\n  users: {U0LOAD: maint}\n" } });
gh.setPermission("maint", "write");
const r = await startReplica({ name: "ack", githubUrl: gh.url, appId: 77, secret: "s", redisUrl: redis.url, prefix: "ack:", extra: { SLACK_SIGNING_SECRET: "ss", SLACK_BOT_TOKEN: "xoxb-test", SLACK_API_URL: slack.apiUrl, SLACK_TEAM_ID: "T0LOAD", LOG_LEVEL: "error", ...(process.env.NODE_OPTS ? { NODE_OPTIONS: process.env.NODE_OPTS } : {}) } });
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
let pr = 0;
function openPr() { const number = ++pr; const sha = randomUUID().replace(/-/g, "").padEnd(40, "a").slice(0, 40); gh.addCommit({ owner: "acme", repo: "mb", branch: `pr-${number}`, base: "main", sha, files: { [SMOKE_RECIPE_FILE]: hcpRecipe("llama3_8b", { sizes: true }) } }); gh.addPullRequest({ owner: "acme", repo: "mb", number, user: "author", head: { sha, ref: `pr-${number}` }, files: [{ filename: SMOKE_RECIPE_FILE, contents: hcpRecipe("llama3_8b", { sizes: true }), status: "modified" }] }); return number; }
function send(n: number): Promise<number> {
  const body = new URLSearchParams({ team_id: "T0LOAD", channel_id: "C0LOAD", user_id: "U0LOAD", command: "/hcp", text: `smoke acme/mb#${n}`, response_url: slack.responseUrl(), trigger_id: `${n}.${randomUUID()}` }).toString();
  const ts = Math.floor(Date.now() / 1000);
  const t = performance.now();
  return new Promise((resolve, reject) => { const q = request({ host: "127.0.0.1", port: r.port, method: "POST", path: "/slack/events", agent, headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body), "x-slack-request-timestamp": String(ts), "x-slack-signature": `v0=${createHmac("sha256", "ss").update(`v0:${ts}:${body}`).digest("hex")}` } }, (res) => { res.resume(); res.on("end", () => resolve(performance.now() - t)); }); q.on("error", reject); q.end(body); });
}
const settle = async () => { let seen = -1, since = Date.now(); while (Date.now() - since < 1500) { const c = gh.calls.length + slack.calls.length; if (c !== seen) { seen = c; since = Date.now(); } await new Promise((x) => setTimeout(x, 100)); } };
for (let i = 0; i < 3; i++) await send(openPr());
await settle();
const cpus: number[] = [], p99s: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const prs = Array.from({ length: N }, openPr);
  const before = r.cpuMs();
  const ms = (await Promise.all(prs.map(send))).sort((a, b) => a - b);
  cpus.push((r.cpuMs() - before) / N); p99s.push(ms[Math.ceil(0.99 * N) - 1]!);
  await settle();
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`burst of ${N} x ${ROUNDS}: CPU per ack median ${med(cpus).toFixed(2)} ms [${cpus.map((c) => c.toFixed(2)).join(" ")}], p99 median ${med(p99s).toFixed(0)} ms [${p99s.map((c) => c.toFixed(0)).join(" ")}]`);
agent.destroy(); await stopReplica(r, "SIGTERM"); await gh.close(); await slack.close(); await redis.dispose();
