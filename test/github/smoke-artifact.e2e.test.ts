// Hostile log artifacts end to end (issue 28, point 5): zips built here (a deflate bomb, an
// A/B artifact over the total cap, a truncated archive, corrupt deflate data) served by the
// fake GitHub to the real server, judged through the bot's real artifact path on its artifact
// thread. Each is a failed check that names why, never a pass; and a webhook is answered while
// a big artifact is being judged.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { judgeOffThread } from "../../src/node/artifact-judge.ts";
import type { ArtifactJob, ArtifactOutcome } from "../../src/core/smoke/artifact.ts";
import type { FileDigest } from "../../src/core/smoke/runner-report.ts";
import { abArtifact } from "../support/ab-logs.ts";
import { completeSmokeRun, deliverWebhook, reportedJobLog, runnerFacts } from "../support/bot-harness.ts";
import { deflatedEntry, deflatedZip, type DeflatedEntry } from "../support/fake-github/zip.ts";
import { PASSING_LOG, SECRET, bot, commentPayload, deliver, gh, restart, runPayload, smokeCheck, smokeOn, smokeTuning, useSmokeE2E, waitFor } from "../support/smoke-e2e.ts";
import { PATIENCE_MS } from "../support/patience.ts";

useSmokeE2E();

const MiB = 1024 * 1024;

/** `unit` repeated `times`, as the runner would have hashed it. */
function digestOf(unit: Uint8Array, times = 1): FileDigest {
  const hash = createHash("sha256");
  for (let i = 0; i < times; i++) hash.update(unit);
  return { sha256: hash.digest("hex"), bytes: unit.byteLength * times };
}

type Part = { name: string; unit: Uint8Array; times?: number };

/** The run uploads the zip of `parts` (or `zip` as is); its job log's report names their true digests; the bot hears it completed. */
async function finishWithZip(run: { sent: { runId: number }; id: string }, parts: Part[], zip?: Uint8Array, o: { settle?: boolean } = {}) {
  const entries: DeflatedEntry[] = parts.map((p) => deflatedEntry(p.name, p.unit, p.times));
  gh.addArtifact({ runId: run.sent.runId, name: `hcp-smoke-${run.id}`, files: {}, zip: zip ?? deflatedZip(entries) });
  const digests = Object.fromEntries(parts.map((p) => [p.name, digestOf(p.unit, p.times)]));
  await completeSmokeRun(gh, { runId: run.sent.runId, requestId: run.id }, {}, { artifact: false, jobLog: await reportedJobLog(digests) });
  const payload = runPayload("completed", { id: run.sent.runId, status: "completed", conclusion: "success", display_title: `hcp-smoke ${run.id}` });
  return o.settle === false ? deliverWebhook(`${bot.url}/api/github/webhooks`, SECRET, "workflow_run", payload) : deliver("workflow_run", payload);
}

const text = (s: string) => new TextEncoder().encode(s);
const hint = runnerFacts();

describe("hostile smoke artifacts", () => {
  it("a deflate bomb (256 MiB of zeros in a smoke.log of a few hundred KB) stops at the 128 MiB cap per file: a failed check that names the cap", async () => {
    const run = await smokeOn();
    const zeros = new Uint8Array(4 * MiB);
    await finishWithZip(run, [{ name: "verdict.json", unit: text(hint) }, { name: "smoke.log", unit: zeros, times: 64 }]);
    const check = (await smokeCheck(run.pr.sha))!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toContain("smoke.log inflates past the bot's 128 MiB cap per file");
    expect(check.output.summary).toContain("only its first 128 MiB were read");
  });

  it("an A/B artifact whose two logs together pass the cap for the whole artifact fails, though each log is under the cap per file and the HCP leg would pass", async () => {
    try {
      const files = abArtifact({ ms: [5200, 1000, 1000], lmLoss: [11.7712, 11.5021, 11.2043] }, { ms: [5400, 1180, 1180], lmLoss: [11.7712, 11.5022, 11.2051] });
      // Each log padded to 1.8 MiB with lines the parser reads past (before the run's own output).
      const padded = (log: string) => text(`${"[rank0]: loading shard\n".repeat(Math.ceil((1.8 * MiB - log.length) / 23))}${log}`);
      const parts: Part[] = [
        { name: "smoke.log", unit: padded(files["smoke.log"]!) },
        { name: "verdict.json", unit: text(files["verdict.json"]!) },
        { name: "reference.log", unit: padded(files["reference.log"]!) },
        { name: "reference.verdict.json", unit: text(files["reference.verdict.json"]!) },
      ];
      // Under the caps (the same artifact judged with room for both logs) the HCP leg passes: the cap is what fails it.
      await restart({ smoke: smokeTuning({ artifactCaps: { entryBytes: 2 * MiB, totalBytes: 8 * MiB } }) });
      const roomy = await smokeOn({ text: "/hcp smoke compare=p2p iters=3" });
      await finishWithZip(roomy, parts);
      expect((await smokeCheck(roomy.pr.sha))!.conclusion).toBe("success");

      await restart({ smoke: smokeTuning({ artifactCaps: { entryBytes: 2 * MiB, totalBytes: 3 * MiB } }) });
      const run = await smokeOn({ text: "/hcp smoke compare=p2p iters=3" });
      await finishWithZip(run, parts);
      const check = (await smokeCheck(run.pr.sha))!;
      expect(check.conclusion).toBe("failure");
      expect(check.output.summary).toContain("reference.log inflates past the bot's 3 MiB cap for the whole artifact");
    } finally {
      await restart();
    }
  });

  it("a truncated zip and a zip whose deflate data is corrupt are failed checks that say the artifact cannot be read (judged once, not retried)", async () => {
    const good = deflatedZip([deflatedEntry("smoke.log", text(PASSING_LOG)), deflatedEntry("verdict.json", text(hint))]);
    const truncated = await smokeOn();
    await finishWithZip(truncated, [{ name: "smoke.log", unit: text(PASSING_LOG) }, { name: "verdict.json", unit: text(hint) }], good.subarray(0, Math.floor(good.byteLength / 2)));
    const cut = (await smokeCheck(truncated.pr.sha))!;
    expect(cut.conclusion).toBe("failure");
    // (The check's Markdown escapes the parentheses of the text.)
    expect(cut.output.summary).toMatch(/the log artifact was not read whole: it is not a readable zip \\?\(not a zip archive \\?\(no end-of-central-directory record/);

    // The same archive with bytes in the middle of smoke.log's deflate data overwritten (the central directory intact).
    const corrupt = Buffer.from(good);
    corrupt.fill(0xff, 40, 40 + 64);
    const broken = await smokeOn();
    const mark = gh.calls.length;
    await finishWithZip(broken, [{ name: "smoke.log", unit: text(PASSING_LOG) }, { name: "verdict.json", unit: text(hint) }], corrupt);
    const check = (await smokeCheck(broken.pr.sha))!;
    expect(check.conclusion).toBe("failure");
    expect(check.output.summary).toMatch(/the log artifact was not read whole: smoke\.log cannot be read: its compressed data is corrupt/);
    expect(gh.calls.slice(mark).filter((c) => /\/actions\/artifacts\/\d+\/zip$/.test(c.path))).toHaveLength(1);
  });

  it("answers a webhook while a big artifact is being judged", async () => {
    const events: string[] = [];
    const judgeArtifact = async (job: ArtifactJob): Promise<ArtifactOutcome> => {
      events.push("judging");
      try {
        return await judgeOffThread(job);
      } finally {
        events.push("judged");
      }
    };
    await restart({ smoke: smokeTuning({ judgeArtifact }) });
    try {
      const run = await smokeOn();
      // 96 MiB of log lines ahead of the run's own output: seconds of inflating, hashing and parsing.
      const filler = text("[rank0]: data loader: worker 0 prefetched a shard of the dataset\n".repeat(65536));
      const log = [{ name: "smoke.log", unit: filler, times: 24 }];
      expect(await finishWithZip(run, log, undefined, { settle: false })).toBe(200);
      await waitFor(() => events.includes("judging"), "the judging to start", PATIENCE_MS);
      const status = await deliverWebhook(`${bot.url}/api/github/webhooks`, SECRET, "issue_comment", commentPayload(run.pr.number, "thanks, looks good", "maint"));
      events.push(`answered ${status}`);
      await bot.idle();
      expect(events).toEqual(["judging", "answered 200", "judged"]);
      expect((await smokeCheck(run.pr.sha))!.status).toBe("completed");
    } finally {
      await restart();
    }
  });
});
