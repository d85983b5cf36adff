// The verdict of a run whose log artifact is hostile, in its own process so the fake GitHub's
// copy does not count: `node --import tsx bench/support/artifact-child.ts ROOT API_URL TOKEN
// OWNER/REPO RUN_ID` runs ROOT's verdictForRun (ROOT: this checkout or another, to measure the
// code before a change) the way ROOT's server does (on its artifact thread when ROOT has one).
// Beside it, on the same thread, an HTTP server answers every POST with 202, as the bot's
// webhook route does: its port is printed first, the judging starts on "go" from stdin, and
// {status, cause, ms, maxRssMB} is printed at the end.
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import { restEndpointMethods } from "@octokit/plugin-rest-endpoint-methods";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [rootArg, apiUrl, token, full, runId] = process.argv.slice(2) as [string, string, string, string, string];
const root = resolve(rootArg);
const load = async <T>(path: string) => (await import(pathToFileURL(join(root, path)).href)) as T;
const { verdictForRun } = await load<typeof import("../../src/github/smoke/verdict.ts")>("src/github/smoke/verdict.ts");
const threaded = existsSync(join(root, "src/node/artifact-judge.ts"));
const judge = threaded ? (await load<typeof import("../../src/node/artifact-judge.ts")>("src/node/artifact-judge.ts")).judgeOffThread : undefined;
const [owner, repo] = full.split("/") as [string, string];
const octokit = new (Octokit.plugin(restEndpointMethods, paginateRest))({ baseUrl: apiUrl, auth: token });

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(202, { "content-type": "application/json" }).end('{"ok":true}'));
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const address = server.address();
console.log(JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 }));
await new Promise<void>((r) => process.stdin.once("data", () => r()));

const request = { id: "bench", expectHcp: true, overrides: ["model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p", "model.hierarchical_context_parallel_sizes=[2,2]"], gpus: 4, compare: "none", cp: 4, sizes: [2, 2] } as unknown as Parameters<typeof verdictForRun>[2];
const t0 = performance.now();
// The code before the artifact thread takes a number as its fifth argument: it gets none.
const { verdict } = judge ? await verdictForRun(octokit as never, { owner, repo }, request, Number(runId), { judgeArtifact: judge }) : await verdictForRun(octokit as never, { owner, repo }, request, Number(runId));
const ms = Math.round(performance.now() - t0);
console.log(JSON.stringify({ status: verdict.status, cause: verdict.cause?.message ?? null, ms, maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024), threaded }));
server.close();
process.exit(0);
