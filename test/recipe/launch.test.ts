import { describe, expect, it } from "vitest";
import { applyEdits, insertSettingEdit, replaceValueEdit, setValueEdit } from "../../src/core/model/edits.ts";
import type { ConfigUnit } from "../../src/core/model/settings.ts";
import { extractMarkdown, extractShell, parseHydraValue } from "../../src/core/recipe/launch/index.ts";
import { expectExactOrigin, fixture, pos, setting } from "./helpers.ts";

function only(units: ConfigUnit[], kind: ConfigUnit["kind"]): ConfigUnit {
  const matching = units.filter((u) => u.kind === kind);
  expect(matching).toHaveLength(1);
  return matching[0] as ConfigUnit;
}

describe("run_recipe launch lines in shell scripts", () => {
  const file = fixture("shell/run_recipe_hcp.sh");
  const result = extractShell(file);
  const unit = only(result.units, "launch");

  it("finds exactly one launch unit (echo mentioning run_recipe.py is not one)", () => {
    expect(result.units).toHaveLength(1);
    expect(result.diagnostics).toEqual([]);
    expect(unit.id).toBe(`${file.path}:${pos(file.text, "uv run").line}`);
    expect(unit.complete).toBe(false);
  });

  it("reads recipe, mode and GPU count", () => {
    expect(unit.baseRecipe).toBe("llama3_8b_pretrain_config");
    expect(unit.mode).toBe("pretrain");
    expect(unit.gpus).toBe(8);
  });

  it("lets a trailing KEY=VALUE beat the -cp flag (last wins) and points at it", () => {
    const cp = setting(unit, "model.context_parallel_size");
    expect(cp.value).toEqual({ known: true, value: 8 });
    expect(cp.origin.kind).toBe("hydra-override");
    expect(cp.origin.syntax).toBe("hydra");
    expect(cp.origin.text).toBe("8");
    const at = pos(file.text, "model.context_parallel_size=8");
    expect(cp.origin.location.range.start).toEqual({ line: at.line, column: at.column + "model.context_parallel_size=".length, offset: at.offset + 28 });
    expectExactOrigin(file.text, cp);
    expect(cp.local).toBe(true);
  });

  it("maps a convenience flag whose value came through a variable to the assignment", () => {
    const sl = setting(unit, "dataset.seq_length");
    expect(sl.value).toEqual({ known: true, value: 8192 });
    expect(sl.origin.kind).toBe("cli-flag");
    const assign = pos(file.text, "SEQ=8192");
    expect(sl.origin.location.range.start.line).toBe(assign.line);
    expect(sl.origin.location.range.start.offset).toBe(assign.offset + 4);
    expect(sl.origin.via).toBe(`from $SEQ (line ${assign.line})`);
    expectExactOrigin(file.text, sl);
  });

  it("splits an unquoted $CLI_OVERRIDES into overrides pointing into the variable", () => {
    const t = setting(unit, "model.cp_comm_type");
    expect(t.value).toEqual({ known: true, value: "a2a+p2p" });
    expect(t.origin.location.range.start.offset).toBe(pos(file.text, "a2a+p2p").offset);
    expectExactOrigin(file.text, t);
  });

  it("reads a double-quoted list override", () => {
    const sizes = setting(unit, "model.hierarchical_context_parallel_sizes");
    expect(sizes.value).toEqual({ known: true, value: [2, 2] });
    expect(sizes.origin.text).toBe("[2,2]");
    expectExactOrigin(file.text, sizes);
  });

  it("handles +, ++, ~, null and Hydra-quoted strings", () => {
    expect(setting(unit, "dataset.pad_seq_to_mult").value).toEqual({ known: true, value: 16 });
    expect(setting(unit, "model.calculate_per_token_loss").value).toEqual({ known: true, value: true });
    const deleted = setting(unit, "dist.use_decentralized_pg");
    expect(deleted.value).toEqual({ known: true, value: null });
    expect(deleted.origin.text).toBe("~dist.use_decentralized_pg");
    expect(deleted.local).toBe(false);
    expect(setting(unit, "model.transformer_impl").value).toEqual({ known: true, value: null });
    const rope = setting(unit, "model.position_embedding_type");
    expect(rope.value).toEqual({ known: true, value: "rope" });
    expect(rope.origin.text).toBe('"rope"');
  });

  it("anchors after the last word, before the redirection and pipe", () => {
    const a = unit.anchors.model;
    expect(a?.style).toBe("hydra");
    const end = pos(file.text, `'model.position_embedding_type="rope"'`);
    const after = end.offset + `'model.position_embedding_type="rope"'`.length;
    expect(a?.at.range.start.offset).toBe(after);
    expect(a?.at.range.end.offset).toBe(after);
    expect(unit.anchors.dataset).toEqual(a);
  });

  it("edits re-extract to the intended values", () => {
    const replaced = applyEdits(file.text, [replaceValueEdit(setting(unit, "model.hierarchical_context_parallel_sizes"), [4, 2])]);
    const again = only(extractShell({ path: file.path, text: replaced }).units, "launch");
    expect(setting(again, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [4, 2] });

    const anchor = unit.anchors.dist;
    if (!anchor) throw new Error("no anchor");
    const inserted = applyEdits(file.text, [insertSettingEdit(anchor, "dist.use_decentralized_pg", false)]);
    const third = only(extractShell({ path: file.path, text: inserted }).units, "launch");
    expect(setting(third, "dist.use_decentralized_pg").value).toEqual({ known: true, value: false });

    // Through a variable: the edit lands in the assignment.
    const viaVar = applyEdits(file.text, [replaceValueEdit(setting(unit, "dataset.seq_length"), 16384)]);
    expect(viaVar).toContain("SEQ=16384");
    expect(setting(only(extractShell({ path: file.path, text: viaVar }).units, "launch"), "dataset.seq_length").value).toEqual({ known: true, value: 16384 });
  });
});

describe("Megatron-LM launch lines", () => {
  const file = fixture("shell/mlm_pretrain.sh");
  const units = extractShell(file).units;

  it("reads flags from an array, a string variable and the line itself", () => {
    expect(units).toHaveLength(2);
    const u = units[0] as ConfigUnit;
    expect(u.kind).toBe("mlm-launch");
    expect(u.name).toBe("pretrain_gpt.py");
    expect(u.gpus).toBe(8);
    expect(u.complete).toBe(true);
    expect(setting(u, "model.num_layers").value).toEqual({ known: true, value: 32 });
    expect(setting(u, "model.num_attention_heads").value).toEqual({ known: true, value: 32 });
    expect(setting(u, "model.num_query_groups").value).toEqual({ known: true, value: 8 });
    expect(setting(u, "model.seq_length").value).toEqual({ known: true, value: 8192 });
    expect(setting(u, "model.tensor_model_parallel_size").value).toEqual({ known: true, value: 2 });
    expect(setting(u, "model.context_parallel_size").value).toEqual({ known: true, value: 4 });
    expect(setting(u, "model.cp_comm_type").value).toEqual({ known: true, value: "a2a+p2p" });
    expect(setting(u, "model.sequence_parallel").value).toEqual({ known: true, value: true });
    expect(setting(u, "model.transformer_impl").value).toEqual({ known: true, value: "transformer_engine" });
    for (const s of Object.values(u.settings)) expectExactOrigin(file.text, s);
    expect(setting(u, "model.num_layers").origin.via).toBe(`from $MODEL_ARGS (line ${pos(file.text, "MODEL_ARGS=(").line})`);
  });

  it("covers both words of a nargs='+' list", () => {
    const u = units[0] as ConfigUnit;
    const sizes = setting(u, "model.hierarchical_context_parallel_sizes");
    expect(sizes.value).toEqual({ known: true, value: [2, 2] });
    expect(sizes.origin.text).toBe("2 2");
    expect(sizes.origin.syntax).toBe("mlm");
    expect(sizes.origin.kind).toBe("mlm-flag");
    expectExactOrigin(file.text, sizes);
    const edited = applyEdits(file.text, [replaceValueEdit(sizes, [4, 1])]);
    expect(setting(extractShell({ path: file.path, text: edited }).units[0], "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [4, 1] });
  });

  it("keeps per-layer comm types as a list and marks a line with $EXTRA_ARGS incomplete", () => {
    const u = units[1] as ConfigUnit;
    expect(setting(u, "model.cp_comm_type").value).toEqual({ known: true, value: ["p2p", "p2p", "a2a", "a2a+p2p"] });
    expect(setting(u, "model.context_parallel_size").value).toEqual({ known: true, value: 2 });
    expect(u.complete).toBe(false);
  });

  it("inserts a missing flag at the mlm anchor", () => {
    const u = units[0] as ConfigUnit;
    const edit = setValueEdit(u, "model.expert_model_parallel_size", 2);
    if (!edit) throw new Error("no edit");
    const again = extractShell({ path: file.path, text: applyEdits(file.text, [edit]) }).units[0];
    expect(setting(again, "model.expert_model_parallel_size").value).toEqual({ known: true, value: 2 });
  });
});

describe("commands built in variables and run through bash -c", () => {
  const file = fixture("shell/sbatch_bash_c.sh");
  const result = extractShell(file);

  it("reads the nested command, skipping tests, heredocs and echo", () => {
    expect(result.units).toHaveLength(1);
    const u = result.units[0] as ConfigUnit;
    expect(u.baseRecipe).toBe("qwen3_8b_sft_config");
    expect(u.mode).toBe("sft");
    expect(u.gpus).toBeUndefined(); // $SLURM_GPUS_PER_NODE is only known at run time
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.value).toEqual({ known: true, value: 2 });
    expectExactOrigin(file.text, cp);
    expect(cp.origin.location.range.start.line).toBe(pos(file.text, "CLI_OVERRIDES=").line);
    // No place on the bash -c line would add an argument to the inner command.
    expect(u.anchors).toEqual({});
  });
});

describe("bad input never throws", () => {
  it("reports an unterminated quote and keeps what it read", () => {
    const r = extractShell(fixture("shell/unterminated.sh"));
    expect(r.diagnostics.some((d) => d.code === "parse-error" && /unterminated double quote/.test(d.message))).toBe(true);
    expect(r.units[0]?.baseRecipe).toBe("x");
  });

  it("handles empty, binary and oversized files", () => {
    expect(extractShell({ path: "e.sh", text: "" })).toEqual({ units: [], diagnostics: [], tePins: [] });
    expect(extractShell({ path: "b.sh", text: "run_recipe.py\u0000\u0001" }).diagnostics[0]?.code).toBe("unreadable");
    const big = `torchrun run_recipe.py -cp 2 ${"x".repeat(17 * 1024 * 1024)}`; // over the 16 Mi-character limit
    expect(extractShell({ path: "big.sh", text: big }).diagnostics[0]?.code).toBe("too-large");
    expect(extractMarkdown({ path: "big.md", text: big }).diagnostics[0]?.code).toBe("too-large");
  });

  it("reads a 1 MB single line in linear time", () => {
    const line = `torchrun run_recipe.py --recipe r ${"a=1 ".repeat(250_000)}model.context_parallel_size=2`;
    const t0 = performance.now();
    const r = extractShell({ path: "long.sh", text: line });
    // Only catches runaway (quadratic or backtracking) work, which takes far longer on 1 MB: the
    // linear read takes a few seconds on a loaded 2-core machine. Speed itself is bench:lint's.
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(setting(r.units[0], "model.context_parallel_size").value).toEqual({ known: true, value: 2 });
  });

  it("survives odd shell", () => {
    const odd = "run_recipe.py $( \n ${ \n A=( \n `x \n '\\\n -cp";
    expect(() => extractShell({ path: "odd.sh", text: odd })).not.toThrow();
  });
});

describe("Hydra values", () => {
  it.each([
    ["[2,2]", [2, 2]],
    ["[2, 2]", [2, 2]],
    ["null", null],
    ["a2a+p2p", "a2a+p2p"],
    ["'a b'", "a b"],
    ["[a2a, 'p2p']", ["a2a", "p2p"]],
    ["1e3", 1000],
    ["True", true],
    ["{a:1,b:[x]}", { a: 1, b: ["x"] }],
  ])("%s", (text, value) => {
    expect(parseHydraValue(text)).toEqual({ known: true, value });
  });

  it("leaves interpolations and malformed lists unknown", () => {
    expect(parseHydraValue("${model.x}").known).toBe(false);
    expect(parseHydraValue("[2,2").known).toBe(false);
  });
});

describe("Markdown code blocks", () => {
  const file = fixture("markdown/hcp_doc.md");
  const units = extractMarkdown(file).units;

  it("extracts bash, console and indented sh blocks, not python", () => {
    expect(units.map((u) => u.kind)).toEqual(["launch", "mlm-launch", "launch"]);
    expect(units.map((u) => u.baseRecipe)).toEqual(["llama32_1b_pretrain_config", undefined, "qwen3_8b_sft_config"]);
  });

  it("maps values to exact offsets in the Markdown file, prompts stripped", () => {
    const first = units[0] as ConfigUnit;
    expect(first.id).toBe(`${file.path}:${pos(file.text, "$ uv run").line}`);
    expect(first.location.range.start.column).toBe(3);
    for (const s of Object.values(first.settings)) expectExactOrigin(file.text, s);
    expect(setting(first, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [2, 2] });
    const cp = setting(units[2], "model.context_parallel_size");
    expect(cp.origin.location.range.start).toMatchObject({ line: pos(file.text, "-cp 2").line, column: pos(file.text, "-cp 2").column + 4 });
  });

  it("ignores console output lines", () => {
    const mlm = units[1] as ConfigUnit;
    expect(setting(mlm, "model.context_parallel_size").value).toEqual({ known: true, value: 8 });
    expect(setting(mlm, "model.cp_comm_type").value).toEqual({ known: true, value: "a2a" });
  });

  it("inserting at the anchor keeps the block re-extractable", () => {
    const a = units[0]?.anchors.model;
    if (!a) throw new Error("no anchor");
    const text = applyEdits(file.text, [insertSettingEdit(a, "dist.use_decentralized_pg", false)]);
    expect(setting(extractMarkdown({ path: file.path, text }).units[0], "dist.use_decentralized_pg").value).toEqual({ known: true, value: false });
  });
});
