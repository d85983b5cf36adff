// Who may spend GPU time: the permission matrix and every refusal.
import { describe, expect, it } from "vitest";
import { decideSmoke, effectiveRole, type SmokeFacts } from "../../src/core/smoke/policy.ts";

const SHA = "c".repeat(40);

function facts(over: Partial<SmokeFacts> = {}): SmokeFacts {
  return {
    requester: { login: "maint", isBot: false },
    requesterRole: "write",
    requiredLevel: "write",
    pr: { number: 7, state: "open", draft: false, merged: false },
    untrustedHead: false,
    copyPrBot: { required: false, mirroredSha: undefined },
    pinnedSha: SHA,
    requestsToday: 0,
    perUserPerDay: 10,
    activeRuns: 0,
    maxQueued: 4,
    ...over,
  };
}

describe("permission matrix (required: write)", () => {
  it.each([
    ["read", false],
    ["triage", false],
    ["write", true],
    ["maintain", true],
    ["admin", true],
  ])("%s -> allowed %s", (role, allowed) => {
    const d = decideSmoke(facts({ requesterRole: role }));
    expect(d.allowed).toBe(allowed);
    if (!d.allowed) expect(d.reason).toMatch(new RegExp(`has ${role} access; starting a smoke run needs write`));
  });

  it("fails closed when GitHub could not say", () => {
    const d = decideSmoke(facts({ requesterRole: undefined }));
    expect(d).toMatchObject({ allowed: false, code: "permission-unknown" });
  });

  it("honours a stricter configured level", () => {
    expect(decideSmoke(facts({ requesterRole: "write", requiredLevel: "maintain" })).allowed).toBe(false);
    expect(decideSmoke(facts({ requesterRole: "admin", requiredLevel: "maintain" })).allowed).toBe(true);
  });

  it("reads built-in roles from role_name and custom roles from their base permission (team access included)", () => {
    expect(effectiveRole({ permission: "write", role_name: "maintain" })).toBe("maintain");
    expect(effectiveRole({ permission: "read", role_name: "triage" })).toBe("triage");
    expect(effectiveRole({ permission: "write", role_name: "ml-engineer" })).toBe("write");
    expect(effectiveRole({ permission: "none" })).toBe("none");
    expect(decideSmoke(facts({ requesterRole: "none" }))).toMatchObject({ allowed: false, reason: expect.stringMatching(/has no access/) });
  });
});

describe("refusals", () => {
  it("ignores bots", () => {
    expect(decideSmoke(facts({ requester: { login: "renovate[bot]", isBot: true } }))).toMatchObject({ allowed: false, code: "bot" });
  });

  it("needs an open, ready PR", () => {
    expect(decideSmoke(facts({ pr: { number: 7, state: "closed", draft: false, merged: true } }))).toMatchObject({ code: "pr-closed", reason: "PR #7 is merged" });
    expect(decideSmoke(facts({ pr: { number: 7, state: "open", draft: true, merged: false } }))).toMatchObject({ code: "pr-draft" });
  });

  it("runs a fork PR only once copy-pr-bot mirrored the pinned SHA, when required", () => {
    const fork = { untrustedHead: true, copyPrBot: { required: true, mirroredSha: "d".repeat(40) } };
    const stale = decideSmoke(facts(fork));
    expect(stale).toMatchObject({ allowed: false, code: "copy-pr-bot" });
    if (!stale.allowed) expect(stale.reason).toContain(`/ok to test ${SHA}`);
    expect(decideSmoke(facts({ ...fork, copyPrBot: { required: true, mirroredSha: null } }))).toMatchObject({ code: "copy-pr-bot", reason: expect.stringMatching(/does not exist/) });
    expect(decideSmoke(facts({ ...fork, copyPrBot: { required: true, mirroredSha: SHA } })).allowed).toBe(true);
    // Not required: an allowed requester is enough, even for a fork.
    expect(decideSmoke(facts({ untrustedHead: true })).allowed).toBe(true);
    // A trusted head never needs the mirror.
    expect(decideSmoke(facts({ copyPrBot: { required: true, mirroredSha: null } })).allowed).toBe(true);
  });

  it("allows one active run per PR, a daily quota per user and a global queue cap", () => {
    expect(decideSmoke(facts({ activeRun: { requestId: "r1", url: "https://x/runs/1" } }))).toMatchObject({ code: "already-running", reason: expect.stringContaining("https://x/runs/1") });
    expect(decideSmoke(facts({ requestsToday: 10 }))).toMatchObject({ code: "user-quota" });
    expect(decideSmoke(facts({ requestsToday: 9 })).allowed).toBe(true);
    expect(decideSmoke(facts({ activeRuns: 4 }))).toMatchObject({ code: "queue-full" });
  });

  it("counts an A/B request as two GPU runs against the daily quota, the queue and the operator's cap", () => {
    expect(decideSmoke(facts({ requestsToday: 9, runs: 2 }))).toMatchObject({ code: "user-quota", reason: expect.stringContaining("an A/B run counts as 2") });
    expect(decideSmoke(facts({ requestsToday: 8, runs: 2 })).allowed).toBe(true);
    expect(decideSmoke(facts({ activeRuns: 3, runs: 2 }))).toMatchObject({ code: "queue-full" });
    expect(decideSmoke(facts({ activeRuns: 2, runs: 2 })).allowed).toBe(true);
    expect(decideSmoke(facts({ runs: 2, globalCap: { active: 4, max: 5 } }))).toMatchObject({ code: "global-cap" });
    expect(decideSmoke(facts({ runs: 2, globalCap: { active: 3, max: 5 } })).allowed).toBe(true);
  });
});
