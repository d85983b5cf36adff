// `npm run bench:memory [ROOT]`: the Node server's RSS while it is sent huge webhook bodies,
// eight at once, 50 MB each (issue 13): without a signature, with a well-formed but forged one
// (chunked: only reading tells the size), and with a content-length over the cap. ROOT names
// another checkout to measure the code before a change (its server is started the same way).
import { join } from "node:path";
import { FORGED, mb, sendHugeWebhook, startMemoryChild } from "./support/memory-client.ts";

const PARALLEL = 8;
const MEGABYTES = 50;
const root = process.argv[2];
const child = await startMemoryChild(root);
console.log(`webhook bodies: ${PARALLEL} x ${MEGABYTES} MB at once, server from ${root ?? "this checkout"}`);
for (const [name, o] of [
  ["unsigned, chunked", {}],
  ["forged signature, chunked", { signature: FORGED }],
  ["forged signature, content-length", { signature: FORGED, declare: true }],
] as const) {
  const before = await child.ask("reset");
  const t0 = performance.now();
  const statuses = await Promise.all(Array.from({ length: PARALLEL }, () => sendHugeWebhook(child.port, MEGABYTES, o)));
  const after = await child.ask("peak");
  console.log(`  ${name.padEnd(34)} answers ${[...new Set(statuses)].join(",")}  RSS ${mb(before.rss)} -> peak ${mb(after.peak!)} MB (+${mb(after.peak! - before.rss)})  ${Math.round(performance.now() - t0)} ms`);
}
await child.stop();

// The job-log fallback: a 200 MB job log and no artifact.
const { startFakeGitHub } = await import("../test/support/fake-github/index.ts");
const { measureJobLogVerdict, seedHugeJobLog } = await import("./support/memory-client.ts");
const JOB_LOG_MB = Number(process.env.BENCH_JOB_LOG_MB ?? 200);
const gh = await startFakeGitHub({ appId: 1, validateResponses: false });
const seeded = seedHugeJobLog(gh, JOB_LOG_MB);
const job = await measureJobLogVerdict(root ?? join(import.meta.dirname, ".."), gh.apiUrl, seeded);
console.log(`job-log verdict: ${JOB_LOG_MB} MB job log, no artifact, code from ${root ?? "this checkout"}`);
console.log(`  verdict ${job.status}  RSS ${mb(job.baseline)} -> peak ${mb(job.peak)} MB (+${mb(job.peak - job.baseline)})  ${job.ms} ms`);
await gh.close();
