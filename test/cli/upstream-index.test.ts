// Issue 27 item 8: the index of upstream recipes' effective settings. `npm run index:bridge`
// runs this project's extractor and evaluator over a Bridge tree (here a small one laid out as
// Megatron-Bridge's src/megatron/bridge, test/fixtures/bridge-tree); `hcp-bot lint` judges a
// user's script on the indexed recipe when no Bridge of the user's own is found, and says
// which Bridge version it used. Bridge's compatibility modules (recipes/llama/llama3.py at
// 067f987: `from ...h100.llama3 import llama3_8b_pretrain_2gpu_h100_bf16_config as
// llama3_8b_pretrain_config`) keep the legacy names alive; the index keeps them as aliases.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBridgeIndex, type BridgeIndex } from "../../src/core/analyze/bridge-index.ts";
import { SETTING_KEYS } from "../../src/core/model/settings.ts";
import { hcpBot, root } from "../support/cli.ts";

const TREE = join(root, "test", "fixtures", "bridge-tree");
let dir: string;
let toyIndexPath: string;
let toyIndex: BridgeIndex;

function indexBridge(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", join(root, "scripts", "index-bridge.ts"), ...args], { cwd: root, env }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** No Bridge of the user's own anywhere the lint looks (python3 has none on the test machines either). */
const bare = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, VIRTUAL_ENV: "", PYTHONPATH: "", MEGATRON_BRIDGE_DIR: "", HCP_BRIDGE_INDEX: "", ...extra });

type Lint = { findings: { ruleId: string; severity: string; message: string; location: { file: string; range: { start: { line: number } } } }[]; diagnostics: { code: string; severity: string; message: string }[] };

async function lintScript(name: string, text: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: Lint; stderr: string }> {
  const path = join(dir, name);
  writeFileSync(path, text);
  const run = await hcpBot(["lint", "--format", "json", path], { env });
  return { code: run.code, out: (run.stdout ? JSON.parse(run.stdout) : { findings: [], diagnostics: [] }) as Lint, stderr: run.stderr };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hcp-upstream-index-"));
  toyIndexPath = join(dir, "toy-index.json");
  const run = await indexBridge([TREE, "--commit", "0123abcdef", "--out", toyIndexPath]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const parsed = parseBridgeIndex(readFileSync(toyIndexPath, "utf8"));
  if ("error" in parsed) throw new Error(parsed.error);
  toyIndex = parsed.index;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("npm run index:bridge", () => {
  it("indexes every recipe of the tree with its effective settings, the Bridge version and commit, and the legacy aliases", () => {
    expect(toyIndex.bridge).toEqual({ version: "0.9.1rc2", commit: "0123abcdef" });
    expect(Object.keys(toyIndex.recipes)).toEqual(["toy_7b_pretrain_32gpu_gb200_bf16_config", "toy_7b_pretrain_8gpu_h100_bf16_config", "toy_7b_sft_8gpu_h100_bf16_config"]);
    const h100 = toyIndex.recipes["toy_7b_pretrain_8gpu_h100_bf16_config"]!;
    const value = (key: string) => {
      const s = h100.s[key];
      return s && "v" in s ? s.v : s;
    };
    // What the recipe sets over the shared builder (recipes/toy/common.py), the builder's own values kept.
    expect([value("model.tensor_model_parallel_size"), value("model.context_parallel_size"), value("model.cp_comm_type"), value("model.num_attention_heads"), value("model.seq_length")]).toEqual([2, 4, "p2p", 16, 8192]);
    expect(toyIndex.files[h100.s["model.context_parallel_size"]!.f]).toBe("megatron/bridge/recipes/toy/h100/toy.py");
    expect(h100.s["model.context_parallel_size"]!.l).toBe(9);
    expect(toyIndex.files[h100.s["model.num_attention_heads"]!.f]).toBe("megatron/bridge/recipes/toy/common.py");
    expect(toyIndex.recipes["toy_7b_sft_8gpu_h100_bf16_config"]!.mode).toBe("sft");
    expect(toyIndex.aliases).toEqual({ toy_7b_pretrain_config: "toy_7b_pretrain_8gpu_h100_bf16_config" });
    expect(toyIndex.keys).toEqual([...SETTING_KEYS]);
  });

  it("refuses a folder without a Bridge, and a commit that is not one, with exit 2 and one line", async () => {
    const none = await indexBridge([dir, "--out", join(dir, "none.json")]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^index:bridge: .* holds no Megatron-Bridge \(no src\/megatron\/bridge\/__init__\.py nor megatron\/bridge\/__init__\.py\)\n$/);
    const badCommit = await indexBridge([TREE, "--commit", "HEAD; rm", "--out", join(dir, "bad.json")]);
    expect(badCommit.code).toBe(2);
    expect(badCommit.stderr).toMatch(/--commit takes a hexadecimal commit id/);
    const noDir = await indexBridge([], { ...process.env, MEGATRON_BRIDGE_DIR: "" });
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toMatch(/name a Megatron-Bridge checkout/);
  });

  it("the shipped index is current: it parses as this build reads it and describes Megatron-Bridge 0.7.0 at 067f987", () => {
    const parsed = parseBridgeIndex(readFileSync(join(root, "data", "megatron-bridge-recipes.json"), "utf8"));
    if ("error" in parsed) throw new Error(parsed.error);
    expect(parsed.index.bridge).toEqual({ version: "0.7.0", commit: "067f987df03b8355b03192d88d70f1709fedf51a" });
    // recipes/llama/h100/llama3.py at 067f987 sets TP 1, PP 1, CP 2 and seq_length 8192 for the 8B pre-training recipe.
    const llama = parsed.index.recipes["llama3_8b_pretrain_2gpu_h100_bf16_config"]!;
    expect(llama.s["model.context_parallel_size"]).toMatchObject({ v: 2 });
    expect(parsed.index.files[llama.s["model.context_parallel_size"]!.f]).toBe("megatron/bridge/recipes/llama/h100/llama3.py");
    expect(parsed.index.aliases["llama3_8b_pretrain_config"]).toBe("llama3_8b_pretrain_2gpu_h100_bf16_config");
  });
});

describe("hcp-bot lint judges a script on the index of upstream recipes", () => {
  const LLAMA_SCRIPT = [
    "from megatron.bridge.recipes.llama import llama3_8b_pretrain_config",
    "from megatron.bridge.training.gpt_step import forward_step",
    "from megatron.bridge.training.pretrain import pretrain",
    "",
    'if __name__ == "__main__":',
    "    cfg = llama3_8b_pretrain_config()",
    '    cfg.model.cp_comm_type = "a2a+p2p"',
    "    cfg.train.train_iters = 100",
    "    pretrain(cfg, forward_step)",
    "",
  ].join("\n");

  it("the shipped index: the upstream recipe's CP 2 and the script's a2a+p2p are inconsistent (HCP001), and the info line names Bridge 0.7.0", async () => {
    const { code, out } = await lintScript("train_llama.py", LLAMA_SCRIPT, bare());
    expect(code).toBe(1);
    const hcp001 = out.findings.filter((f) => f.ruleId === "HCP001");
    expect(hcp001.map((f) => f.location.range.start.line)).toEqual([7]);
    // The fix is computed from the indexed CP: no two-level split of 2 fits, so p2p.
    expect(hcp001[0]!.message).toMatch(/No two-level split of context_parallel_size 2 fits/);
    expect(out.diagnostics).toEqual([
      expect.objectContaining({
        code: "base-from-index",
        severity: "info",
        message: expect.stringMatching(/starts from llama3_8b_pretrain_config\(\) \(llama3_8b_pretrain_2gpu_h100_bf16_config\), judged with its settings in Megatron-Bridge 0\.7\.0 \(067f987\)/),
      }),
    ]);
  });

  it("the verdict follows the index's values: sizes that multiply to the indexed CP pass, others are HCP002", async () => {
    const head = "from megatron.bridge.recipes.toy import toy_7b_pretrain_config\n\n\ndef build():\n    cfg = toy_7b_pretrain_config()\n    cfg.model.cp_comm_type = \"a2a+p2p\"\n";
    const env = bare({ HCP_BRIDGE_INDEX: toyIndexPath });
    const good = await lintScript("train_toy_good.py", `${head}    cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n    return cfg\n`, env);
    expect(good.out.findings.filter((f) => f.severity !== "info").map((f) => f.ruleId)).toEqual([]);
    expect(good.out.diagnostics.map((d) => [d.code, /Megatron-Bridge 0\.9\.1rc2 \(0123abc\)/.test(d.message)])).toEqual([["base-from-index", true]]);
    const bad = await lintScript("train_toy_bad.py", `${head}    cfg.model.hierarchical_context_parallel_sizes = [2, 3]\n    return cfg\n`, env);
    expect(bad.code).toBe(1);
    const hcp002 = bad.out.findings.find((f) => f.ruleId === "HCP002");
    expect(hcp002?.location.range.start.line).toBe(7);
    expect(hcp002?.message).toMatch(/context_parallel_size is 4\b/);
  });

  it("an installed Bridge comes before the index: MEGATRON_BRIDGE_DIR's recipe is judged, with no index line", async () => {
    // The user's own Bridge: the indexed tree with the recipe at CP 8 instead of 4.
    const userBridge = join(dir, "user-bridge");
    cpSync(TREE, userBridge, { recursive: true });
    const recipe = join(userBridge, "src/megatron/bridge/recipes/toy/h100/toy.py");
    writeFileSync(recipe, readFileSync(recipe, "utf8").replace("context_parallel_size = 4", "context_parallel_size = 8"));
    const text = "from megatron.bridge.recipes.toy import toy_7b_pretrain_config\n\ncfg = toy_7b_pretrain_config()\ncfg.model.cp_comm_type = \"a2a+p2p\"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\n";
    const indexed = await lintScript("train_toy_indexed.py", text, bare({ HCP_BRIDGE_INDEX: toyIndexPath }));
    expect(indexed.out.findings.map((f) => f.ruleId)).not.toContain("HCP002"); // 2 × 2 = the index's CP 4
    // A missing index beside an installed Bridge is never read: no error.
    const installed = await lintScript("train_toy_installed.py", text, bare({ HCP_BRIDGE_INDEX: join(dir, "not-there.json"), MEGATRON_BRIDGE_DIR: userBridge }));
    expect(installed.stderr).toBe("");
    expect(installed.code).toBe(1);
    expect(installed.out.diagnostics.map((d) => d.code)).toEqual([]);
    expect(installed.out.findings.find((f) => f.ruleId === "HCP002")?.message).toMatch(/context_parallel_size is 8\b/);
  });

  it("stays unknown with one info line when the index cannot stand in: a call with arguments, a name the index lacks, a recipe not from megatron.bridge", async () => {
    const env = bare({ HCP_BRIDGE_INDEX: toyIndexPath });
    const args = await lintScript("train_args.py", 'from megatron.bridge.recipes.toy.h100.toy import toy_7b_sft_8gpu_h100_bf16_config\n\ncfg = toy_7b_sft_8gpu_h100_bf16_config(seq_length=4096)\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 3]\n', env);
    expect(args.out.findings.map((f) => f.ruleId)).not.toContain("HCP002");
    expect(args.out.diagnostics.map((d) => d.code)).toEqual(["base-unknown"]);
    expect(args.out.diagnostics[0]!.message).toMatch(/\(it is called with arguments, and hcp-bot's index of Megatron-Bridge 0\.9\.1rc2 \(0123abc\) describes each recipe called without any\)/);
    const missing = await lintScript("train_missing.py", 'from megatron.bridge.recipes.toy import toy_70b_pretrain_config\n\ncfg = toy_70b_pretrain_config()\ncfg.model.cp_comm_type = "a2a+p2p"\n', env);
    expect(missing.out.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/has no recipe toy_70b_pretrain_config\)/)]);
    const ours = await lintScript("train_ours.py", 'from team.recipes import toy_7b_pretrain_config\n\ncfg = toy_7b_pretrain_config()\ncfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 3]\n', env);
    // Not an upstream recipe: the index's recipe of the same name says nothing about it, and the line does not offer it.
    expect(ours.out.findings.map((f) => f.ruleId)).not.toContain("HCP002");
    expect(ours.out.diagnostics.map((d) => [d.code, d.message.includes("index")])).toEqual([["base-unknown", false]]);
  });

  it("an index that cannot be used is exit 2 with one line saying why, never a crash; a lint that needs no index never reads it", async () => {
    const cases: [string, string, RegExp][] = [
      ["not-json.json", "{ not json", /it is not JSON/],
      ["old-format.json", JSON.stringify({ format: "hcp-bot/megatron-bridge-recipes@0", recipes: {} }), /in format "hcp-bot\/megatron-bridge-recipes@0", and this hcp-bot reads hcp-bot\/megatron-bridge-recipes@1: it is stale/],
      ["old-keys.json", JSON.stringify({ ...toyIndex, keys: toyIndex.keys.filter((k) => k !== "model.cp_comm_type") }), /generated before hcp-bot read model\.cp_comm_type: it is stale/],
      ["bad-shape.json", JSON.stringify({ ...toyIndex, recipes: { x_config: { f: 0, l: 1, mode: "pretrain", complete: true, s: { "model.context_parallel_size": { v: 4 } } } } }), /does not match the format \(recipes\.x_config\.s\.model\.context_parallel_size: /],
      ["bad-file.json", JSON.stringify({ ...toyIndex, files: [] }), /names file #\d+, and the index lists 0/],
    ];
    const script = "from megatron.bridge.recipes.toy import toy_7b_pretrain_config\n\ncfg = toy_7b_pretrain_config()\ncfg.model.cp_comm_type = \"a2a+p2p\"\n";
    for (const [name, text, why] of cases) {
      const path = join(dir, name);
      writeFileSync(path, text);
      const run = await lintScript(`train_${name}.py`, script, bare({ HCP_BRIDGE_INDEX: path }));
      expect(run.code, name).toBe(2);
      const lines = run.stderr.trim().split("\n");
      expect(lines, name).toHaveLength(1);
      expect(lines[0], name).toMatch(new RegExp(`^hcp-bot: cannot use the index of upstream recipes ${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: `));
      expect(lines[0], name).toMatch(why);
      expect(lines[0], name).toMatch(/regenerate it with npm run index:bridge, or unset HCP_BRIDGE_INDEX/);
    }
    const gone = await lintScript("train_gone.py", script, bare({ HCP_BRIDGE_INDEX: join(dir, "missing.json") }));
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/^hcp-bot: cannot read the index of upstream recipes .*missing\.json \(HCP_BRIDGE_INDEX\): ENOENT/);
    // A recipe that imports nothing from megatron.bridge: the broken index is not read.
    const plain = await lintScript("plain.py", 'def my_pretrain_config():\n    cfg = ConfigContainer(model=GPTModelProvider())\n    cfg.model.context_parallel_size = 4\n    cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n', bare({ HCP_BRIDGE_INDEX: join(dir, "not-json.json") }));
    expect(plain.code).toBe(1);
    expect(plain.out.findings.map((f) => f.ruleId)).toContain("HCP001");
  });
});
