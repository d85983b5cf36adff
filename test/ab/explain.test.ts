// `hcp-bot explain AB001` / `AB002`: the A/B checks document themselves like the rules (the
// check run points at `hcp-bot explain AB001` for the bound).
import { describe, expect, it } from "vitest";
import { COMPARISON_CHECKS } from "../../src/core/ab/index.ts";
import { hcpBot } from "../support/cli.ts";

describe("hcp-bot explain for the A/B checks", () => {
  it("prints the bound's derivation and the loss tolerance", async () => {
    const ab001 = await hcpBot(["explain", "AB001"]);
    expect(ab001.code).toBe(0);
    expect(ab001.stdout).toMatch(/^AB001 implausible-speedup \(error\)/);
    expect(ab001.stdout).toContain("1 / (1 − f·r)");
    expect(ab001.stdout).toContain("CP 4 [2, 2] against p2p gives 1.65x, against a2a 1.32x");
    const ab002 = await hcpBot(["explain", "loss-difference"]);
    expect(ab002.code).toBe(0);
    expect(ab002.stdout).toMatch(/^AB002 loss-difference \(warning\)/);
    expect(ab002.stdout).toContain("more than 1 %");
    expect(ab002.stdout).toMatch(/random initialisation/);
    expect(COMPARISON_CHECKS.map((c) => c.id)).toEqual(["AB001", "AB002"]);
    const unknown = await hcpBot(["explain", "AB009"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("the A/B smoke checks are AB001, AB002");
  });
});
