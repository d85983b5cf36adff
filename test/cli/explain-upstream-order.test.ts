// `hcp-bot explain HCP006` names the assertion that fires first: Bridge's config validation
// rejects Gloo groups with decentralized process groups (Megatron-Bridge 067f987,
// src/megatron/bridge/training/config.py:1551-1555) before initialize.py:412 raises on HCP.
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

describe("hcp-bot explain HCP006", () => {
  it("names Bridge's Gloo assertion before the decentralized-HCP NotImplementedError", async () => {
    const run = await hcpBot(["explain", "HCP006"]);
    expect(run.code).toBe(0);
    const gloo = run.stdout.indexOf("Gloo process groups are not supported when use_decentralized_pg=True.");
    const hcp = run.stdout.indexOf("NotImplementedError: Decentralized process groups");
    expect(gloo).toBeGreaterThan(0);
    expect(hcp).toBeGreaterThan(gloo);
    expect(run.stdout).not.toContain("silently built flat CP groups");
  });
});

// Megatron-Bridge 067f987: ConfigContainer.validate (training/config.py:1427) calls get_data_parallel_size,
// whose assertion (config.py:1024) fires before Megatron-Core's initialize_model_parallel RuntimeError.
describe("hcp-bot explain HCP017", () => {
  it("cites Bridge's get_data_parallel_size assertion before Megatron-Core's RuntimeError", async () => {
    const run = await hcpBot(["explain", "HCP017"]);
    expect(run.code).toBe(0);
    const bridge = run.stdout.indexOf("is not divisible by total_model_size");
    const mcore = run.stdout.indexOf("Megatron-Core would refuse");
    expect(bridge).toBeGreaterThan(0);
    expect(mcore).toBeGreaterThan(bridge);
  });
});
