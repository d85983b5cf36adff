// The artifact judge (src/core/smoke/artifact.ts) on zips built here: the caps count the bytes
// that actually inflate, not what the archive's headers claim, and only the runner's files at
// the root are inflated at all. The end-to-end cases (bomb, total cap, corrupt archives through
// the server) are in test/github/smoke-artifact.e2e.test.ts.
import { describe, expect, it } from "vitest";
import { judgeArtifact, type ArtifactJob } from "../../src/core/smoke/artifact.ts";
import { deflatedEntry, deflatedZip } from "../support/fake-github/zip.ts";
import { PASSING_RUN_LOG, trainingLog } from "../support/bot-harness.ts";

const PASSING_LOG = trainingLog(PASSING_RUN_LOG);

const MiB = 1024 * 1024;
const request: ArtifactJob["request"] = { expectHcp: true, overrides: ["model.context_parallel_size=4"], gpus: 4, compare: "none", cp: 4, sizes: [2, 2] };
const noReport = { ok: false, problem: "no report", committed: false } as const;

describe("judgeArtifact", () => {
  it("stops a file at the cap per file by the bytes it inflates to, though its headers claim 10 bytes", async () => {
    const entry = { ...deflatedEntry("smoke.log", new Uint8Array(MiB), 3), size: 10 };
    const outcome = await judgeArtifact({ zip: deflatedZip([entry]), request, report: noReport, caps: { entryBytes: MiB, totalBytes: 2 * MiB } });
    expect(outcome).toMatchObject({ kind: "judged", evidence: { kind: "unreadable", problem: expect.stringContaining("smoke.log inflates past the bot's 1 MiB cap per file: only its first 1 MiB were read") } });
  });

  it("inflates nothing but the runner's files at the root: a corrupt entry elsewhere is not read", async () => {
    const other = { ...deflatedEntry("logs/smoke.log", new Uint8Array(MiB)), deflated: new Uint8Array(64).fill(0xff) };
    const zip = deflatedZip([other, deflatedEntry("smoke.log", new TextEncoder().encode(PASSING_LOG))]);
    const outcome = await judgeArtifact({ zip, request, report: noReport });
    expect(outcome).toMatchObject({ kind: "judged", evidence: { kind: "artifact" } });
    // The same corrupt data as smoke.log itself is reported.
    const bad = deflatedZip([{ ...other, name: "smoke.log" }]);
    expect(await judgeArtifact({ zip: bad, request, report: noReport })).toMatchObject({ evidence: { kind: "unreadable", problem: expect.stringContaining("smoke.log cannot be read: its compressed data is corrupt") } });
  });
});
