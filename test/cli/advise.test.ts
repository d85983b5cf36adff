// `hcp-bot advise` through the real binary: from numbers, from an analyzed recipe, the
// JSON groups against Megatron-Core's own, the SVG file, and the usage errors.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

const recipe = join("fixtures", "cli", "advise_recipe.py");

interface AdviceJson {
  recommendation: { cpCommType: string; sizes?: number[]; reasons: string[] };
  rejected: { cpCommType: string; sizes?: number[]; why: string }[];
  world: number;
  dp: number;
  groups: Record<string, number[][]>;
}

/** The groups Megatron-Core built for one recorded layout (fixtures/megatron-groups/groups.log). */
function recordedGroups(title: string): { tp: string[]; a2a: string[]; p2p: string[] } {
  const lines = readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "megatron-groups", "groups.log"), "utf8").split("\n");
  const start = lines.indexOf(`# case ${title}`);
  const reports: { tp: number[]; hcp: number[][] }[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("# ")) break;
    for (const json of line.split("MEGATRON-GROUPS ").slice(1)) reports.push(JSON.parse(json));
  }
  const distinct = (groups: number[][]) => [...new Set(groups.map((g) => JSON.stringify(g)))].sort();
  return { tp: distinct(reports.map((r) => r.tp)), a2a: distinct(reports.map((r) => r.hcp[0]!)), p2p: distinct(reports.map((r) => r.hcp[1]!)) };
}

describe("hcp-bot advise", () => {
  it("from numbers: the recommendation, its reasons, the rejected choices and the grid; exit 0", async () => {
    const r = await hcpBot(["advise", "--cp", "16", "--heads", "32", "--kv-heads", "8", "--nodes", "2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Recommended: cp_comm_type="a2a\+p2p", hierarchical_context_parallel_sizes=\[8, 2\]/);
    expect(r.stdout).toMatch(/Rejected:\n {2}a2a /);
    expect(r.stdout).toMatch(/^node 1 +GPU/m);
    expect(r.stdout).toContain("p0 [0, 8]");
  });

  it("TP 1, CP 12 on 8-GPU nodes: [4, 3], every a2a group on one node; [6, 2] rejected as straddling", async () => {
    const r = await hcpBot(["advise", "--cp", "12", "--nodes", "3", "--format", "json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as AdviceJson;
    expect(out.recommendation.sizes).toEqual([4, 3]);
    expect(out.rejected.find((x) => x.sizes?.[0] === 6)?.why).toMatch(/6 does not divide the 8 GPUs/);
    expect(out.groups["a2a"]).toHaveLength(6);
    for (const group of out.groups["a2a"]!) expect(new Set(group.map((rank) => Math.floor(rank / 8))).size).toBe(1);
  });

  it("all of CP inside one NVLink domain: p2p, not a2a+p2p, and the head count that fails is named", async () => {
    const r = await hcpBot(["advise", "--cp", "8", "--heads", "8", "--kv-heads", "2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Recommended: cp_comm_type="p2p"/);
    expect(r.stdout).toContain("CP 8 does not divide the 2 KV heads per TP rank");
    expect(r.stdout).not.toContain("8 Q / 2 KV");
    const rack = await hcpBot(["advise", "--cp", "32", "--tp", "4", "--heads", "64", "--kv-heads", "8", "--nvlink-domain", "72"]);
    expect(rack.stdout).not.toMatch(/72-GPU node/);
  });

  it("--format json: TP 2, CP 8 [4, 2] on 16 GPUs gives exactly the groups Megatron-Core built", async () => {
    const r = await hcpBot(["advise", "--cp", "8", "--tp", "2", "--heads", "32", "--kv-heads", "8", "--format", "json"]);
    const out = JSON.parse(r.stdout) as AdviceJson;
    expect(out.recommendation.sizes).toEqual([4, 2]);
    const real = recordedGroups("world=16 tp=2 pp=1 cp=8 sizes=4,2");
    const mine = (kind: string) => [...new Set(out.groups[kind]!.map((g) => JSON.stringify(g)))].sort();
    expect(mine("tp")).toEqual(real.tp);
    expect(mine("a2a")).toEqual(real.a2a);
    expect(mine("p2p")).toEqual(real.p2p);
  });

  it("from a recipe: the numbers come from the analyzed function, with where each was set", async () => {
    const r = await hcpBot(["advise", `${recipe}::llama3_8b_cp16_pretrain_config`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/sizes=\[8, 2\]/);
    expect(r.stdout).toMatch(/context_parallel_size 16 \(fixtures\/cli\/advise_recipe\.py:\d+\)/);
    expect(r.stdout).toMatch(/num_attention_heads 32, num_query_groups 8/);
    expect(r.stdout).toMatch(/the recipe sets cp_comm_type="a2a\+p2p", sizes \[16, 1\]/);
    const tp2 = JSON.parse((await hcpBot(["advise", `${recipe}::llama3_8b_tp2_cp8_pretrain_config`, "-f", "json"])).stdout) as AdviceJson;
    expect(tp2.recommendation.sizes).toEqual([4, 2]);
    expect(tp2.groups.tp![0]).toEqual([0, 1]);
  });

  it("--svg writes the picture", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "hcp-svg-")), "layout.svg");
    const r = await hcpBot(["advise", "--cp", "4", "--svg", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${file}`);
    const svg = readFileSync(file, "utf8");
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect([...svg.matchAll(/class="rank">(\d+)</g)].map((m) => m[1])).toEqual(["0", "1", "2", "3"]);
  });

  it.each([
    [[], /advise needs --cp N or a RECIPE_FILE::FUNCTION/],
    [["--cp", "16", "--gpus-per-node", "8", "--nvlink-domain", "72"], /give --gpus-per-node or --nvlink-domain, not both/],
    [["--cp", "16", "--nodes", "3"], /24 GPUs is not a multiple of/],
    [["--cp", "x"], /--cp must be a positive whole number/],
    // Past the bound: one line at once (1,000,000 nodes took 54 s and 4.5 GB, then crashed).
    [["--cp", "8", "--nodes", "1000000"], /^hcp-bot: 1000000 × 8 = 8000000 GPUs is more than the advisor lays out \(at most 65536;[^\n]*\n$/],
    [["--cp", "8", "--nodes", "4096", "--gpus-per-node", "1024"], /4194304 GPUs is more than the advisor lays out/],
    [["--cp", "4", "--format", "yaml"], /--format must be text, json or markdown/],
    [[`${recipe}::llama3_8b_cp16`], /has no recipe function llama3_8b_cp16; did you mean llama3_8b_cp16_pretrain_config\?/],
    [[`${recipe}`], /expected RECIPE_FILE::FUNCTION/],
    [["missing.py::f"], /cannot read missing\.py/],
  ])("exit 2 for %j", async (args, message) => {
    const r = await hcpBot(["advise", ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
