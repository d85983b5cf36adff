// The verdict of a run whose only log is a huge job log, in its own process so the fake
// GitHub's copy of the log does not count: `node --import tsx bench/support/joblog-child.ts
// ROOT API_URL TOKEN OWNER/REPO RUN_ID` runs ROOT's verdictForRun (ROOT: this checkout or
// another, to measure the code before a change) and prints {baseline, peak, status} as JSON.
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import { restEndpointMethods } from "@octokit/plugin-rest-endpoint-methods";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [rootArg, apiUrl, token, full, runId] = process.argv.slice(2) as [string, string, string, string, string];
const root = resolve(rootArg);
const { verdictForRun } = (await import(pathToFileURL(join(root, "src/github/smoke/verdict.ts")).href)) as typeof import("../../src/github/smoke/verdict.ts");
const [owner, repo] = full.split("/") as [string, string];
const octokit = new (Octokit.plugin(restEndpointMethods, paginateRest))({ baseUrl: apiUrl, auth: token });

globalThis.gc?.();
const baseline = process.memoryUsage.rss();
let peak = baseline;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
const request = { id: "bench", expectHcp: true, overrides: ["model.context_parallel_size=4"], gpus: 4 } as unknown as Parameters<typeof verdictForRun>[2];
const t0 = performance.now();
const { verdict } = await verdictForRun(octokit as never, { owner, repo }, request, Number(runId));
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage.rss());
console.log(JSON.stringify({ baseline, peak, status: verdict.status, ms: Math.round(performance.now() - t0) }));
