// Values the evaluator computes exactly, and the ones it must leave unknown.
import { describe, expect, it } from "vitest";
import { extractText, setting, unitNamed, valueOf } from "./support.ts";

const SOURCE = `
K = 1024
SEQ = 64 * K
HALF = SEQ // 2
POW = 2 ** 3
NEG = -4 + 10
MOD = 17 % 5
NAME = "a2a"
FULL = NAME + "+p2p"
SIZES = [2] + [2]
TABLE = {"cp": 4, "comm": "p2p"}
TWICE = 1
TWICE = 2


def expr_config():
    cfg = base()
    cfg.model.seq_length = HALF
    cfg.model.context_parallel_size = POW
    cfg.model.num_layers = NEG * MOD
    cfg.model.cp_comm_type = FULL
    cfg.model.hierarchical_context_parallel_sizes = SIZES
    cfg.model.num_attention_heads = TABLE["cp"] * 8
    cfg.model.num_query_groups = TABLE.get("groups", 8)
    cfg.model.qkv_format = "thd" if TABLE["comm"] == "p2p" else "sbhd"
    cfg.model.sequence_parallel = not False and True
    cfg.model.transformer_impl = "transformer" + "_engine"
    cfg.model.softmax_type = TWICE
    cfg.model.position_embedding_type = TABLE["missing"]
    cfg.model.window_size = (SEQ, -1)
    cfg.dataset.seq_length = int(SEQ / 2)
    cfg.dataset.pad_seq_to_mult = max(POW, 2) * 2
    return cfg
`;

describe("expressions", () => {
  it("computes integer arithmetic, strings, lists, dict lookups and conditionals", async () => {
    const u = unitNamed(await extractText("expr.py", SOURCE), "expr_config");
    expect(valueOf(u, "model.seq_length")).toBe(32768);
    expect(valueOf(u, "model.context_parallel_size")).toBe(8);
    expect(valueOf(u, "model.num_layers")).toBe(12);
    expect(valueOf(u, "model.cp_comm_type")).toBe("a2a+p2p");
    expect(valueOf(u, "model.hierarchical_context_parallel_sizes")).toEqual([2, 2]);
    expect(valueOf(u, "model.num_attention_heads")).toBe(32);
    expect(valueOf(u, "model.num_query_groups")).toBe(8);
    expect(valueOf(u, "model.qkv_format")).toBe("thd");
    expect(valueOf(u, "model.sequence_parallel")).toBe(true);
    expect(valueOf(u, "model.transformer_impl")).toBe("transformer_engine");
    expect(valueOf(u, "model.window_size")).toEqual([65536, -1]);
    expect(valueOf(u, "dataset.seq_length")).toBe(32768);
    expect(valueOf(u, "dataset.pad_seq_to_mult")).toBe(16);
  });

  it("leaves ambiguous constants and missing keys unknown, with a reason", async () => {
    const u = unitNamed(await extractText("expr.py", SOURCE), "expr_config");
    const twice = setting(u, "model.softmax_type");
    expect(twice.value).toEqual({ known: false, reason: "TWICE is assigned more than once or conditionally at module level" });
    expect(setting(u, "model.position_embedding_type").value.known).toBe(false);
  });
});
