// Refusals of people without permission, end to end (issue 28.11): signed PR comments to the
// real server and fake GitHub, read back from the server's SQLite file. Anyone may comment, so
// past REFUSAL_LIMITS the bot stays silent and records nothing more, and what it recorded expires.
import { describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/index.ts";
import { REFUSAL_LIMITS } from "../../src/github/refusals.ts";
import { commentPayload, comments, dataDir, deliver, dispatches, OWNER, openPr, REPO, useSmokeE2E } from "../support/smoke-e2e.ts";

useSmokeE2E();

const DAY_MS = 24 * 3600 * 1000;
const refusalsOn = async (pr: number) => (await comments(pr)).filter((c) => /no smoke run: .*needs write access|cancelling a smoke run needs/.test(c.body));

async function recordsOf(pr: number, at = new Date()) {
  const store = SqliteStore.open(dataDir, { now: () => at });
  try {
    const requests = await store.listSmokeRequests({ repos: [`${OWNER}/${REPO}`], pr, limit: 100 });
    const audit = (await store.auditLog({ repo: `${OWNER}/${REPO}`, limit: 1000 })).filter((a) => a.pr === pr);
    return { requests, audit };
  } finally {
    await store.close();
  }
}

describe("refusals of people without permission", () => {
  it("are answered at most 3 an hour per requester and 5 per PR; past that nothing is said or recorded, and what was recorded expires after 7 days", async () => {
    const pr = openPr();
    const before = dispatches().length;
    for (let i = 0; i < 5; i++) await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "drive-by-1"));
    expect(await refusalsOn(pr.number)).toHaveLength(REFUSAL_LIMITS.perRequester);
    let records = await recordsOf(pr.number);
    expect(records.requests.map((r) => r.status)).toEqual(["refused", "refused", "refused"]);
    expect(records.audit.map((a) => a.decision)).toEqual(["denied", "denied", "denied"]);

    // Another requester on the same PR: the PR's own limit (5) ends it after two more.
    for (let i = 0; i < 4; i++) await deliver("issue_comment", commentPayload(pr.number, "/hcp smoke", "drive-by-2"));
    expect(await refusalsOn(pr.number)).toHaveLength(REFUSAL_LIMITS.perPr);
    // `/hcp cancel` refusals count against the same limits: the PR's are used up.
    await deliver("issue_comment", commentPayload(pr.number, "/hcp cancel", "drive-by-3"));
    expect(await refusalsOn(pr.number)).toHaveLength(REFUSAL_LIMITS.perPr);
    records = await recordsOf(pr.number);
    expect(records.requests).toHaveLength(REFUSAL_LIMITS.perPr);
    expect(records.audit).toHaveLength(REFUSAL_LIMITS.perPr);
    expect(dispatches().length).toBe(before);

    // Each record carries its expiry: a week on, the store holds none of them.
    for (const r of [...records.requests, ...records.audit]) {
      expect(r.expiresAt!.getTime() - Date.now()).toBeGreaterThan(REFUSAL_LIMITS.keepDays * DAY_MS - 3600_000);
      expect(r.expiresAt!.getTime() - Date.now()).toBeLessThanOrEqual(REFUSAL_LIMITS.keepDays * DAY_MS);
    }
    const later = await recordsOf(pr.number, new Date(Date.now() + REFUSAL_LIMITS.keepDays * DAY_MS + 1000));
    expect(later).toEqual({ requests: [], audit: [] });

    // Drive-by-1's limit is its own: on another PR it is used up too, and a maintainer is never limited.
    const other = openPr();
    await deliver("issue_comment", commentPayload(other.number, "/hcp smoke", "drive-by-1"));
    expect(await refusalsOn(other.number)).toHaveLength(0);
    await deliver("issue_comment", commentPayload(other.number, "/hcp smoke", "maint"));
    expect(dispatches().length).toBe(before + 1);
    const kept = await recordsOf(other.number, new Date(Date.now() + 30 * DAY_MS));
    expect(kept.requests.map((r) => [r.githubLogin, r.expiresAt])).toEqual([["maint", null]]);
  });
});
