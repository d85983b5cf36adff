// Every rule's one-line message, as a person reads it from `hcp-bot lint`: each rule has a
// fixture (test/fixtures/messages/hcpNNN/, its documented example as a real recipe or launch
// script, with the Transformer Engine pin it needs in a uv.lock), and the line the real binary
// prints for it says what is wrong with the values in that file and the fix, under 120
// characters; the long explanation stays in the JSON's `message`.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_RULES } from "../../src/core/rules/index.ts";
import { SHORT_MESSAGE_MAX } from "../../src/core/rules/short-message.ts";
import { hcpBot, root } from "../support/cli.ts";

const FIXTURES = join("test", "fixtures", "messages");
const env = { ...process.env, NO_COLOR: "1", HCP_DOCS_URL: "" };
const FINDING_LINE = /^(\S+):(\d+):(\d+): (error|warning|info) (HCP\d{3})( \[\*\])? (.+)$/;

/** The line each fixture gets: the values come from the fixture's own settings. */
const EXPECTED: Record<string, string> = {
  HCP001: "cp_comm_type 'a2a+p2p' at CP 4 needs hierarchical_context_parallel_sizes, which is not set; set it to [2, 2]",
  HCP002: "hierarchical_context_parallel_sizes [2, 4] multiplies to 8 but context_parallel_size is 4; set them to [2, 2]",
  HCP003: "hierarchical_context_parallel_sizes [2, 2, 2] has 3 levels, but 'a2a+p2p' needs two; set it to [4, 2]",
  HCP004: "hierarchical_context_parallel_sizes [4, 1] has a p2p level of 1, so it runs plain a2a; set cp_comm_type to 'a2a'",
  HCP005: "hierarchical sizes [2, 2] do nothing: no layer uses 'a2a+p2p'; set cp_comm_type to 'a2a+p2p', or remove them",
  HCP006: "dist.use_decentralized_pg = True cannot build hierarchical CP groups; set it to False, or drop hierarchical CP",
  HCP007: "model.seq_length 8196 is not divisible by 2 × context_parallel_size = 8; set seq_length to 8200",
  HCP008: "model.seq_length 16384 is overridden without dataset.seq_length, so it is discarded; set dataset.seq_length = 16384 too",
  HCP009: "cp_comm_type 'a2a' with CP 4 does not divide 8 Q / 2 KV heads per TP rank (TP 4); use 'a2a+p2p' with sizes [2, 2]",
  HCP010: "dataset.packed_sequence (THD) fails with a2a+p2p on Transformer Engine 2.15; use 'a2a' or 'p2p', or TE >= 2.19",
  HCP011: "a2a+p2p cannot run sliding-window attention (window_size [4096, 0]); set cp_comm_type to 'a2a' and remove the sizes",
  HCP012: "cp_comm_type has 4 entries but num_layers is 32; give 32 entries, one per layer",
  HCP013: "cp_comm_type 'allgather' is valid only for DeepSeek Sparse Attention, not known here; use 'all_gather' if not DSA",
  HCP014: "a2a+p2p needs Transformer Engine >= 1.12.0, and 1.11 is pinned; upgrade it, or use cp_comm_type 'p2p' or 'a2a'",
  HCP016: "transformer_impl 'local' has no context parallelism (CP 2); set it to 'transformer_engine'",
  HCP017: "4 GPUs is not a multiple of TP × PP × CP = 2 × 1 × 4 = 8: change TP, PP or CP, or the GPUs",
  HCP018: "a2a groups span TP 1 × 16 = 16 GPUs, past one 8-GPU NVLink domain; set hierarchical_context_parallel_sizes to [8, 2]",
  HCP020: "cp_comm_type has 'a2a+p2p' at context_parallel_size 1 and no hierarchical sizes; unset cp_comm_type, or set CP and sizes",
  HCP021: "hybrid_context_parallel is hybrid/dynamic CP, not hierarchical CP; remove it unless you balance packed sequences",
  HCP022: "ddp.average_in_collective is True with a fine-tuning dataset and CP 2; set it to False",
  HCP023: "eval_context_parallel_size 2 needs decentralized PG, which has no hierarchical CP; remove it, or drop hierarchical CP",
  HCP024: "tensor_model_parallel_size is written `99999999999999999999`, an integer past 2^53; write the size you meant",
  HCP025: "cp_comm_type 'a2a' with multi_latent_attention and CP 4 fails on Transformer Engine 2.9; use 'p2p', or TE >= 2.15",
  HCP100: "unused suppression of HCP001: no such finding on line 6; remove it",
};

const lintRule = async (id: string, format: string[] = []) =>
  hcpBot(["lint", "--isolated", "--all", "--select", id, ...format, join(FIXTURES, id.toLowerCase())], { env });

describe("each rule's one-line message, through hcp-bot lint", () => {
  it("every rule has a fixture and an expected line, and each expected line fits", () => {
    expect(Object.keys(EXPECTED)).toEqual(ALL_RULES.map((r) => r.id));
    expect(readdirSync(join(root, FIXTURES)).sort()).toEqual(ALL_RULES.map((r) => r.id.toLowerCase()));
    for (const [id, line] of Object.entries(EXPECTED)) expect(line.length, id).toBeLessThanOrEqual(SHORT_MESSAGE_MAX);
  });

  it.each(ALL_RULES.map((r) => r.id))("%s prints its own line with the fixture's values", async (id) => {
    const run = await lintRule(id);
    const lines = run.stdout.split("\n").map((l) => FINDING_LINE.exec(l)).filter((m) => m !== null);
    expect(lines.map((m) => [m[5], m[7]])).toEqual([[id, EXPECTED[id]]]);
    // Exit 1 for an error, 0 for a warning or a note (the fixture's finding is the only one).
    expect(run.code, run.stderr).toBe(lines[0]![4] === "error" ? 1 : 0);
  });

  it("keeps each rule's long explanation in --format json next to the line (HCP100's message is its line)", async () => {
    for (const rule of ALL_RULES) {
      const run = await lintRule(rule.id, ["--format", "json"]);
      const [finding] = (JSON.parse(run.stdout) as { findings: { ruleId: string; message: string; summary?: string }[] }).findings;
      expect(finding?.ruleId, rule.id).toBe(rule.id);
      if (rule.id === "HCP100") {
        expect(finding!.message).toBe(EXPECTED.HCP100);
        continue;
      }
      expect(finding!.summary, rule.id).toBe(EXPECTED[rule.id]);
      expect(finding!.message.length, rule.id).toBeGreaterThan(finding!.summary!.length + 40);
    }
  });
});
