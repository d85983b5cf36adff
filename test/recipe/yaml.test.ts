import { describe, expect, it } from "vitest";
import { applyEdits, insertSettingEdit, replaceValueEdit, setValueEdit } from "../../src/core/model/edits.ts";
import type { ConfigUnit } from "../../src/core/model/settings.ts";
import { extractYaml } from "../../src/core/recipe/yaml.ts";
import { expectExactOrigin, fixture, pos, setting } from "./helpers.ts";

function yamlUnit(text: string, path = "o.yaml"): ConfigUnit {
  const u = extractYaml({ path, text }).units.find((x) => x.kind === "yaml");
  if (!u) throw new Error("no yaml unit");
  return u;
}

describe("ConfigContainer override files", () => {
  const file = fixture("yaml/hcp_override.yaml");
  const result = extractYaml(file);
  const unit = result.units[0] as ConfigUnit;

  it("yields one incomplete yaml unit with id = path", () => {
    expect(result.units).toHaveLength(1);
    expect(result.diagnostics).toEqual([]);
    expect(unit).toMatchObject({ id: file.path, kind: "yaml", complete: false });
  });

  it("reads every setting with exact provenance", () => {
    expect(setting(unit, "model.context_parallel_size").value).toEqual({ known: true, value: 4 });
    expect(setting(unit, "model.cp_comm_type").value).toEqual({ known: true, value: "a2a+p2p" });
    expect(setting(unit, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [2, 2] });
    expect(setting(unit, "model.hierarchical_context_parallel_sizes").origin.text).toBe("[2, 2]");
    expect(setting(unit, "dataset.seq_length").value).toEqual({ known: true, value: 8192 }); // sequence_length alias
    expect(setting(unit, "dataset.pad_seq_to_mult").value).toEqual({ known: true, value: 8 });
    expect(setting(unit, "dataset.packed_sequence_specs").value).toEqual({ known: true, value: { pad_seq_to_mult: 8 } });
    const t = setting(unit, "model.cp_comm_type");
    expect(t.origin.location.range.start).toEqual(pos(file.text, "a2a+p2p"));
    for (const s of Object.values(unit.settings)) {
      expect(s.origin).toMatchObject({ kind: "yaml", syntax: "yaml" });
      expect(s.local).toBe(true);
      expectExactOrigin(file.text, s);
    }
  });

  it("anchors at the end of each section's last line with the child indent", () => {
    const model = unit.anchors.model;
    const numLayers = pos(file.text, "num_layers: 32");
    expect(model).toMatchObject({ style: "yaml", indent: "  ", receiver: "" });
    expect(model?.at.range.start.offset).toBe(numLayers.offset + "num_layers: 32".length);
    const edited = applyEdits(file.text, [insertSettingEdit(model!, "model.num_query_groups", 8)]);
    expect(setting(yamlUnit(edited), "model.num_query_groups").value).toEqual({ known: true, value: 8 });
    // dataset's last line is the nested pad_seq_to_mult; a new key still belongs to dataset.
    const ds = applyEdits(file.text, [insertSettingEdit(unit.anchors.dataset!, "dataset.packed_sequence", true)]);
    expect(setting(yamlUnit(ds), "dataset.packed_sequence").value).toEqual({ known: true, value: true });
  });

  it("adds a missing section at end of file", () => {
    const dist = unit.anchors.dist;
    expect(dist).toMatchObject({ indent: "", receiver: "dist:\n  " });
    expect(dist?.at.range.start.offset).toBe(file.text.length);
    const edited = applyEdits(file.text, [setValueEdit(unit, "dist.use_decentralized_pg", false)!]);
    const again = yamlUnit(edited);
    expect(setting(again, "dist.use_decentralized_pg").value).toEqual({ known: true, value: false });
    expect(setting(again, "model.context_parallel_size").value).toEqual({ known: true, value: 4 });
  });

  it("replaces a flow list and a comment-followed scalar in place", () => {
    const edits = [
      replaceValueEdit(setting(unit, "model.hierarchical_context_parallel_sizes"), [4, 2]),
      replaceValueEdit(setting(unit, "model.cp_comm_type"), "a2a"),
    ];
    const again = yamlUnit(applyEdits(file.text, edits));
    expect(setting(again, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [4, 2] });
    expect(setting(again, "model.cp_comm_type").value).toEqual({ known: true, value: "a2a" });
  });

  it("covers a block sequence, quotes, interpolations", () => {
    const f = fixture("yaml/block_sizes.yaml");
    const u = yamlUnit(f.text, f.path);
    const sizes = setting(u, "model.hierarchical_context_parallel_sizes");
    expect(sizes.value).toEqual({ known: true, value: [2, 4] });
    expect(sizes.origin.text).toBe("- 2\n    - 4");
    expectExactOrigin(f.text, sizes);
    expect(setting(u, "model.cp_comm_type").origin.text).toBe('"a2a+p2p"');
    expect(setting(u, "model.transformer_impl").value.known).toBe(false);
    expect(setting(u, "dist.use_decentralized_pg").value).toEqual({ known: true, value: false });
    const again = yamlUnit(applyEdits(f.text, [replaceValueEdit(sizes, [8, 2])]));
    expect(setting(again, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [8, 2] });
  });

  it("creates the model section when the file has none", () => {
    const f = fixture("yaml/no_model.yaml");
    const u = yamlUnit(f.text, f.path);
    expect(Object.keys(u.settings)).toEqual(["dataset.seq_length"]);
    expect(u.anchors.model).toMatchObject({ indent: "", receiver: "model:\n  " });
    const edited = applyEdits(f.text, [setValueEdit(u, "model.context_parallel_size", 2)!]);
    expect(setting(yamlUnit(edited), "model.context_parallel_size").value).toEqual({ known: true, value: 2 });
  });
});

describe("launch commands inside YAML strings", () => {
  const file = fixture("yaml/card.yaml");
  const result = extractYaml(file);

  it("treats a card as no override file and finds its two launch commands", () => {
    expect(result.units.map((u) => u.kind)).toEqual(["launch", "launch"]);
    expect(result.diagnostics).toEqual([]);
  });

  it("maps values of a folded `command: >` block to exact file offsets", () => {
    const u = result.units[0] as ConfigUnit;
    expect(u).toMatchObject({ baseRecipe: "demo_8b_sft_64k_config", mode: "sft", gpus: 16, complete: false });
    expect(u.id).toBe(`${file.path}:${pos(file.text, "./scripts/training/train.sh").line}`);
    expect(setting(u, "dataset.seq_length").value).toEqual({ known: true, value: 65536 });
    expect(setting(u, "model.context_parallel_size").value).toEqual({ known: true, value: 8 });
    expect(setting(u, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [4, 2] });
    for (const s of Object.values(u.settings)) {
      expect(s.local).toBe(true);
      expectExactOrigin(file.text, s);
    }
    expect(setting(u, "model.cp_comm_type").origin.location.range.start).toEqual(pos(file.text, "a2a+p2p"));
  });

  it("edits in a folded block re-extract to the intended value", () => {
    const u = result.units[0] as ConfigUnit;
    const text = applyEdits(file.text, [
      replaceValueEdit(setting(u, "model.hierarchical_context_parallel_sizes"), [2, 4]),
      insertSettingEdit(u.anchors.dist!, "dist.use_decentralized_pg", false),
    ]);
    const again = extractYaml({ path: file.path, text }).units[0];
    expect(setting(again, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [2, 4] });
    expect(setting(again, "dist.use_decentralized_pg").value).toEqual({ known: true, value: false });
  });

  it("folds a `>-` block whose --recipe value sits on the next line", () => {
    const u = result.units[1] as ConfigUnit;
    expect(u.baseRecipe).toBe("demo_pretrain_config");
    expect(u.gpus).toBe(4);
    const t = setting(u, "model.cp_comm_type");
    expect(t.value).toEqual({ known: true, value: "a2a+p2p" });
    expectExactOrigin(file.text, t);
  });

  it("reads a literal `run: |` script with its own variables", () => {
    const f = fixture("yaml/workflow.yml");
    const r = extractYaml(f);
    expect(r.units).toHaveLength(1);
    const cp = setting(r.units[0], "model.context_parallel_size");
    expect(cp.value).toEqual({ known: true, value: 4 });
    expect(cp.origin.location.range.start).toEqual({ ...pos(f.text, "CP=4"), column: pos(f.text, "CP=4").column + 3, offset: pos(f.text, "CP=4").offset + 3 });
    expectExactOrigin(f.text, cp);
  });

  it("points at the scalar start, not in place, when a value spans a folded line", () => {
    const text = 'command: "torchrun run_recipe.py --recipe r model.cp_comm_type=\'a2a+p2p\n  x\'"\n';
    const u = extractYaml({ path: "q.yaml", text }).units[0];
    const t = setting(u, "model.cp_comm_type");
    expect(t.value).toEqual({ known: true, value: "a2a+p2p x" });
    expect(t.local).toBe(false);
    expect(u?.notes.length).toBeGreaterThan(0);
  });

  it("falls back to the scalar start for escapes it does not rebuild", () => {
    const text = 'command: "torchrun run_recipe.py --recipe r\\tmodel.context_parallel_size=2"\n';
    const u = extractYaml({ path: "e.yaml", text }).units[0];
    const cp = setting(u, "model.context_parallel_size");
    expect(cp.value).toEqual({ known: true, value: 2 });
    expect(cp.local).toBe(false);
    expect(cp.origin.location.range.start.offset).toBe(text.indexOf('"'));
    expect(cp.origin.location.range.end.offset).toBe(text.indexOf('"'));
  });
});

describe("bad YAML", () => {
  it("reports parse errors with the library's line and column and keeps what parses", () => {
    const f = fixture("yaml/malformed.yaml");
    const r = extractYaml(f);
    const err = r.diagnostics.find((d) => d.code === "parse-error");
    expect(err?.severity).toBe("error");
    expect(err?.message).toMatch(/^\d+:\d+: /);
    expect(err?.location?.range.start.line).toBeGreaterThanOrEqual(3);
    expect(setting(r.units[0], "model.context_parallel_size").value).toEqual({ known: true, value: 4 });
  });

  it("empty, binary, oversized and garbage never throw", () => {
    expect(extractYaml({ path: "e.yaml", text: "" })).toEqual({ units: [], diagnostics: [], tePins: [] });
    expect(extractYaml({ path: "b.yaml", text: "model:\u0000\u0001" }).diagnostics[0]?.code).toBe("unreadable");
    expect(extractYaml({ path: "big.yaml", text: `model:\n  a: ${"x".repeat(17 * 1024 * 1024)}\n` }).diagnostics[0]?.code).toBe("too-large");
    for (const text of ["model: [", "model:\n  - a\n  b: c", "dataset: *nope", "? model\n: {", "model: !!binary x\n--- \n..."]) {
      expect(() => extractYaml({ path: "g.yaml", text })).not.toThrow();
    }
  });
});
