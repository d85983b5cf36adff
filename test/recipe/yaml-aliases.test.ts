// YAML anchors, aliases and `<<` merge keys in override files, read as Bridge's loader reads
// them: OmegaConf.load (Megatron-Bridge training/utils/omegaconf_utils.py:147, HEAD 067f987)
// loads with a yaml.SafeLoader subclass, whose flatten_mapping merges `<<` sources under the
// mapping's own keys (https://yaml.org/type/merge.html). Through the extractor and `hcp-bot lint`.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConfigUnit } from "../../src/core/model/settings.ts";
import { extractYaml } from "../../src/core/recipe/yaml.ts";
import { MAX_ALIASES_FOLLOWED } from "../../src/core/recipe/yaml-aliases.ts";
import { hcpBot } from "../support/cli.ts";
import { expectExactOrigin, pos, setting } from "./helpers.ts";

function yamlUnit(text: string): ConfigUnit {
  const u = extractYaml({ path: "o.yaml", text }).units.find((x) => x.kind === "yaml");
  if (!u) throw new Error("no yaml unit");
  return u;
}

const ALIASED = [
  "model:",
  "  context_parallel_size: 4",
  '  cp_comm_type: "a2a+p2p"',
  "  hierarchical_context_parallel_sizes: &sizes [2, 2]",
  "  seq_length: &seq 8192",
  "dataset:",
  "  seq_length: *seq",
  "",
].join("\n");

const MERGED = [
  "model: &hcp",
  "  context_parallel_size: 8",
  '  cp_comm_type: "a2a+p2p"',
  "  hierarchical_context_parallel_sizes: [2, 2]",
  "---",
  "hcp: &hcp",
  "  context_parallel_size: 8",
  '  cp_comm_type: "a2a+p2p"',
  "model:",
  "  <<: *hcp",
  "  hierarchical_context_parallel_sizes: [2, 2]",
  "",
].join("\n");

describe("aliases and merge keys in override files", () => {
  it("an alias has the value of its anchor, with the anchor's text as its origin", () => {
    const unit = yamlUnit(ALIASED);
    const ds = setting(unit, "dataset.seq_length");
    expect(ds.value).toEqual({ known: true, value: 8192 });
    expect(ds.origin.location.range.start).toEqual(pos(ALIASED, "8192"));
    expectExactOrigin(ALIASED, ds);
    expect(ds.origin.via).toMatch(/alias \*seq at line 7/);
    // Editing the anchor's text would change every alias of it: not local.
    expect(ds.local).toBe(false);
    expect(setting(unit, "model.seq_length").local).toBe(true);
  });

  it("an alias inside a value resolves (sizes written as *sizes)", () => {
    const text = `${ALIASED}  # second use\n`.replace("dataset:", "dist:\n  use_decentralized_pg: false\ndataset:");
    const unit = yamlUnit(`${text}---\nmodel:\n  hierarchical_context_parallel_sizes: &s [4, 2]\n  context_parallel_size: 8\n  cp_comm_type: a2a+p2p\ndataset:\n  packed_sequence_specs: {pad_seq_to_mult: 16, other: *s}\n`);
    expect(setting(unit, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [2, 2] });
    const units = extractYaml({ path: "o.yaml", text: "model:\n  hierarchical_context_parallel_sizes: *s\n  x: &s [4, 2]\n---\nsizes: &s [4, 2]\nmodel:\n  hierarchical_context_parallel_sizes: *s\n" });
    // The first document's alias comes before its anchor: the load fails, and we say so.
    expect(units.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/undefined alias 's'/)]);
    const second = units.units[1];
    expect(setting(second, "model.hierarchical_context_parallel_sizes").value).toEqual({ known: true, value: [4, 2] });
  });

  it("`<<: *base` copies the keys the mapping does not set itself; its own keys win, earlier sources win", () => {
    const unit = extractYaml({ path: "m.yaml", text: MERGED }).units[1];
    expect(setting(unit, "model.context_parallel_size").value).toEqual({ known: true, value: 8 });
    expect(setting(unit, "model.cp_comm_type").local).toBe(false);
    expect(setting(unit, "model.hierarchical_context_parallel_sizes").local).toBe(true);
    const list = yamlUnit(
      ["a: &a {context_parallel_size: 2}", "b: &b {context_parallel_size: 4, seq_length: 1024}", "model:", "  <<: [*a, *b]", "  seq_length: 2048", ""].join("\n"),
    );
    expect(setting(list, "model.context_parallel_size").value).toEqual({ known: true, value: 2 });
    expect(setting(list, "model.seq_length").value).toEqual({ known: true, value: 2048 });
    // A nested mapping (packing specs) reached through a merge resolves too.
    const nested = yamlUnit("spec: &spec {pad_seq_to_mult: 8}\ndataset:\n  packed_sequence_specs:\n    <<: *spec\n");
    expect(setting(nested, "dataset.pad_seq_to_mult").value).toEqual({ known: true, value: 8 });
    expect(setting(nested, "dataset.packed_sequence_specs").value).toEqual({ known: true, value: { pad_seq_to_mult: 8 } });
  });

  it("a whole section given as an alias is read, and offers no insertion point", () => {
    const unit = yamlUnit("base: &m\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\nmodel: *m\n");
    expect(setting(unit, "model.cp_comm_type").value).toEqual({ known: true, value: "a2a+p2p" });
    expect(unit.anchors.model).toBeUndefined();
  });

  it("stops an alias bomb with a clear diagnostic, without reading the document's settings", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 12; i++) levels.push(`l${i}: &l${i} [${Array(10).fill(i === 1 ? "*a" : `*l${i - 1}`).join(", ")}]`);
    const bomb = `${levels.join("\n")}\nmodel:\n  context_parallel_size: 4\n  hierarchical_context_parallel_sizes: *l11\n`;
    const started = performance.now();
    const result = extractYaml({ path: "bomb.yaml", text: bomb });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result.units).toEqual([]);
    expect(result.diagnostics).toEqual([expect.objectContaining({ severity: "error", code: "parse-error", message: expect.stringMatching(/alias bomb/) })]);
    // Merge chains are bounded by the same budget.
    const merges = ["m0: &m0 {context_parallel_size: 2}"];
    for (let i = 1; i < 40; i++) merges.push(`m${i}: &m${i} {<<: [${Array(4).fill(`*m${i - 1}`).join(", ")}]}`);
    const chained = extractYaml({ path: "merge.yaml", text: `${merges.join("\n")}\nmodel:\n  <<: *m39\n` });
    expect(chained.diagnostics[0]?.message).toMatch(new RegExp(`more than ${MAX_ALIASES_FOLLOWED} YAML aliases`));
  });
});

describe("hcp-bot lint on override files with anchors", () => {
  const dir = mkdtempSync(join(tmpdir(), "hcp-yaml-alias-"));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("no false HCP004/HCP008 from aliased values; HCP002 found through a merge", async () => {
    const clean = write("aliased.yaml", ALIASED);
    const merged = write("merged.yaml", MERGED.replace("[2, 2]\n\n", "").split("---\n")[1]!.replace("[2, 2]", "[2, 2]"));
    const run = await hcpBot(["lint", clean, merged, "--format", "json"]);
    const report = JSON.parse(run.stdout) as { findings: Array<{ ruleId: string; severity: string; location: { file: string; range: { start: { line: number } } } }> };
    const errors = report.findings.filter((f) => f.severity !== "info");
    expect(errors.filter((f) => f.location.file.endsWith("aliased.yaml"))).toEqual([]);
    // cp 8 comes from the merged &hcp mapping, sizes [2, 2] multiply to 4.
    const hcp002 = errors.filter((f) => f.ruleId === "HCP002");
    expect(hcp002).toHaveLength(1);
    expect(hcp002[0]?.location.file).toMatch(/merged\.yaml$/);
    expect(run.code).toBe(1);
  });

  it("an alias bomb is not analyzed: exit 2 with the reason", async () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 12; i++) levels.push(`l${i}: &l${i} [${Array(10).fill(i === 1 ? "*a" : `*l${i - 1}`).join(", ")}]`);
    const bomb = write("bomb.yaml", `${levels.join("\n")}\nmodel:\n  hierarchical_context_parallel_sizes: *l11\n`);
    const run = await hcpBot(["lint", bomb]);
    expect(`${run.stdout}${run.stderr}`).toMatch(/alias bomb/);
    expect(run.code).not.toBe(0);
  });
});
