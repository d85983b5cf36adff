// The repository → installation lookups Slack commands make: shared while in flight, kept a
// minute when found, never kept when the App is not installed or the lookup failed.
import { describe, expect, it } from "vitest";
import { repoInstallations } from "../../src/github/installations.ts";

function counting(answers: Record<string, number | undefined | Error>) {
  const calls: string[] = [];
  const lookup = async (owner: string, repo: string) => {
    calls.push(`${owner}/${repo}`);
    await new Promise((r) => setTimeout(r, 5));
    const a = answers[`${owner}/${repo}`];
    if (a instanceof Error) throw a;
    return a;
  };
  return { calls, lookup };
}

describe("repoInstallations", () => {
  it("shares one lookup between concurrent commands and keeps a found installation for the minute", async () => {
    let t = 0;
    const { calls, lookup } = counting({ "acme/mb": 31 });
    const inst = repoInstallations(lookup, 60_000, () => t);
    expect(await Promise.all(Array.from({ length: 20 }, () => inst.get("acme", "mb")))).toEqual(Array(20).fill(31));
    expect(calls).toEqual(["acme/mb"]);
    t = 59_999;
    expect(await inst.get("ACME", "MB")).toBe(31);
    expect(calls).toHaveLength(1);
    t = 60_000;
    expect(await inst.get("acme", "mb")).toBe(31);
    expect(calls).toHaveLength(2);
  });

  it("asks again after 'not installed', after a failed lookup and after forget", async () => {
    const answers: Record<string, number | undefined | Error> = { "acme/new": undefined, "acme/flaky": new Error("502") };
    const { calls, lookup } = counting(answers);
    const inst = repoInstallations(lookup, 60_000, () => 0);
    expect(await inst.get("acme", "new")).toBeUndefined();
    answers["acme/new"] = 7; // the App was installed meanwhile
    expect(await inst.get("acme", "new")).toBe(7);
    await expect(inst.get("acme", "flaky")).rejects.toThrow("502");
    answers["acme/flaky"] = 8;
    expect(await inst.get("acme", "flaky")).toBe(8);
    inst.forget("acme", "flaky");
    answers["acme/flaky"] = 9; // e.g. uninstalled and installed again
    expect(await inst.get("acme", "flaky")).toBe(9);
    expect(calls).toEqual(["acme/new", "acme/new", "acme/flaky", "acme/flaky", "acme/flaky"]);
  });
});
