import { describe, expect, it } from "vitest";
import { analyze } from "../../src/core/analyze/index.ts";
import { loadPythonLanguage } from "../../src/node/treesitter.ts";
import type { Rule } from "../../src/core/model/finding.ts";
import { FindingSchema } from "../../src/core/model/finding.ts";
import { RuleOptionsError, runRules } from "../../src/core/rules/engine.ts";
import { ALL_RULES, ruleById } from "../../src/core/rules/index.ts";
import { hydraLaunch, mergeLaunch, project, pythonRecipe, yamlOverride } from "../support/units.ts";

const RECIPE = `def llama3_8b_pretrain_config():
    cfg = _pretrain_common()
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    cfg.model.seq_length = 8190
    cfg.dataset.seq_length = 8190
    cfg.dist.use_decentralized_pg = True
    return cfg
`;
const recipe = () => pythonRecipe(RECIPE, { file: "recipes/llama3.py" });

describe("runRules", () => {
  it("fills the engine fields and returns schema-valid findings, sorted by file, line, column, rule", () => {
    const findings = runRules([recipe()], project());
    expect(findings.map((f) => [f.location.range.start.line, f.ruleId])).toEqual([
      [5, "HCP001"],
      [6, "HCP007"],
      [8, "HCP006"],
    ]);
    for (const f of findings) {
      expect(FindingSchema().parse(f)).toEqual(f);
      expect(f.unitId).toBe("recipes/llama3.py::llama3_8b_pretrain_config");
      expect(f.unitName).toBe("llama3_8b_pretrain_config");
      expect(f.ruleName).toBe(ruleById(f.ruleId)?.name);
    }
  });

  it("sorts across files and units", () => {
    const yaml = yamlOverride("model:\n  context_parallel_size: 4\n  hierarchical_context_parallel_sizes: [2, 4]\n", { file: "a/conf.yaml" });
    const files = runRules([recipe(), yaml], project()).map((f) => f.location.file);
    expect(files).toEqual([...files].sort());
    expect(files[0]).toBe("a/conf.yaml");
  });

  it("select, ignore (case-insensitive) and severity re-grading", () => {
    expect(runRules([recipe()], project(), { select: ["hcp007"] }).map((f) => f.ruleId)).toEqual(["HCP007"]);
    expect(runRules([recipe()], project(), { ignore: ["HCP001", "hcp006"] }).map((f) => f.ruleId)).toEqual(["HCP007"]);
    expect(runRules([recipe()], project(), { select: ["HCP001", "HCP007"], ignore: ["HCP007"] }).map((f) => f.ruleId)).toEqual(["HCP001"]);
    const regraded = runRules([recipe()], project(), { severity: { HCP007: "warning" } });
    expect(regraded.find((f) => f.ruleId === "HCP007")?.severity).toBe("warning");
    expect(regraded.find((f) => f.ruleId === "HCP001")?.severity).toBe("error");
  });

  it("rejects unknown rule ids and unknown options, naming them", () => {
    expect(() => runRules([recipe()], project(), { select: ["HCP999"] })).toThrow(RuleOptionsError);
    expect(() => runRules([recipe()], project(), { select: ["HCP999"] })).toThrow(/unknown rule id/);
    expect(() => runRules([recipe()], project(), { severity: { HCP001: "fatal" as "error" } })).toThrow(RuleOptionsError);
    expect(() => runRules([recipe()], project(), { selct: ["HCP001"] } as never)).toThrow(/selct/);
  });

  it("a launch line merged with its recipe does not repeat the recipe's findings", () => {
    const merged = mergeLaunch(recipe(), hydraLaunch("run_recipe.py --recipe llama3_8b_pretrain_config train.train_iters=10", { file: "run.sh" }));
    const findings = runRules([merged, recipe()], project());
    expect(findings.map((f) => f.ruleId)).toEqual(["HCP001", "HCP007", "HCP006"]);
    // The copy kept is the recipe's own, whose fix edits the recipe file.
    expect(findings.every((f) => f.unitId === "recipes/llama3.py::llama3_8b_pretrain_config")).toBe(true);
    expect(findings[0]?.fix?.edits[0]?.file).toBe("recipes/llama3.py");
  });

  it("a launch line that changes a value keeps its own finding", () => {
    const merged = mergeLaunch(recipe(), hydraLaunch("run_recipe.py --recipe llama3 -cp 16", { file: "run.sh" }));
    const findings = runRules([recipe(), merged], project(), { select: ["HCP007"] });
    expect(findings.map((f) => f.unitId).sort()).toEqual(["recipes/llama3.py::llama3_8b_pretrain_config", "run.sh:1"]);
  });

  it("a throwing rule becomes a finding graded as the rule (never greener), other rules still run", () => {
    const boom: Rule = {
      id: "HCP999",
      name: "always-throws",
      severity: "error",
      doc: { checks: "", why: "", example: "", fix: "" },
      check() {
        throw new TypeError("cannot read x of undefined");
      },
    };
    const rules = [...ALL_RULES, boom];
    const findings = runRules([recipe()], project(), {}, rules);
    const crash = findings.find((f) => f.ruleId === "HCP999");
    expect(crash?.severity).toBe("error");
    expect(crash?.message).toContain("Rule HCP999 (always-throws) failed on llama3_8b_pretrain_config");
    expect(crash?.message).toContain("TypeError: cannot read x of undefined");
    expect(crash?.location).toEqual(recipe().location);
    expect(findings.some((f) => f.ruleId === "HCP001")).toBe(true);
    // A warning rule that throws is a warning; a severity the user chose for the rule applies.
    const warn = runRules([recipe()], project(), {}, [...ALL_RULES, { ...boom, severity: "warning" }]);
    expect(warn.find((f) => f.ruleId === "HCP999")?.severity).toBe("warning");
    const regraded = runRules([recipe()], project(), { severity: { HCP999: "info" } }, rules);
    expect(regraded.find((f) => f.ruleId === "HCP999")?.severity).toBe("info");
  });
});

describe("rule catalogue", () => {
  const EXPECTED = [
    ["HCP001", "error"], ["HCP002", "error"], ["HCP003", "error"], ["HCP004", "error"], ["HCP005", "warning"],
    ["HCP006", "error"], ["HCP007", "error"], ["HCP008", "error"], ["HCP009", "error"], ["HCP010", "error"],
    ["HCP011", "error"], ["HCP012", "error"], ["HCP013", "error"], ["HCP014", "error"], ["HCP016", "error"],
    ["HCP017", "error"], ["HCP018", "warning"], ["HCP020", "error"], ["HCP021", "warning"], ["HCP022", "error"], ["HCP023", "warning"],
    ["HCP024", "error"], ["HCP025", "error"], ["HCP100", "warning"],
  ];

  it("has exactly the catalogue ids, sorted, with the catalogue severities", () => {
    expect(ALL_RULES.map((r) => [r.id, r.severity])).toEqual(EXPECTED);
  });

  it.each(ALL_RULES.map((r) => [r.id, r] as const))("%s has a kebab-case name and a complete doc", (_id, rule) => {
    expect(rule.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)+$/);
    for (const part of [rule.doc.checks, rule.doc.why, rule.doc.example, rule.doc.fix]) expect(part.length).toBeGreaterThan(20);
  });

  it("ruleById is case-insensitive and undefined for unknown ids", () => {
    expect(ruleById("hcp001")?.name).toBe("a2a-p2p-without-sizes");
    expect(ruleById("HCP015")).toBeUndefined();
  });

  it("docs quote the upstream messages", () => {
    expect(ruleById("HCP001")?.doc.why).toContain("hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'.");
    expect(ruleById("HCP003")?.doc.why).toContain("CP implementation a2a+p2p requires cp_group = [a2a_cp_group, p2p_cp_group]!");
    expect(ruleById("HCP010")?.doc.why).toContain("thd format is not supported with hierarchical CP implementation yet!");
  });

  it("every doc example triggers its rule when read, through the real extractors, as a recipe or launch line", async () => {
    const python = await loadPythonLanguage();
    // An example names the Transformer Engine it needs in a comment ("# with transformer-engine 2.9 pinned"); else 1.11.
    const pinFor = (example: string) => {
      const version = /transformer-engine (\d+\.\d+(?:\.\d+)?) pinned/.exec(example)?.[1] ?? "1.11.0";
      return { path: "uv.lock", text: `[[package]]\nname = "transformer-engine"\nversion = "${version}"\n` };
    };
    for (const rule of ALL_RULES) {
      const example = rule.doc.example;
      const pin = pinFor(example);
      const file = /run_recipe\.py|torchrun/.test(example)
        ? { path: "scripts/example.sh", text: `${example}\n` }
        : {
            path: "recipes/example.py",
            text: [
              `def x_pretrain_config():`,
              ...(example.startsWith("cfg = ") ? [] : ["    cfg = _pretrain_common()"]),
              ...example.split("\n").map((l) => `    ${l}`),
              "    return cfg",
              "",
            ].join("\n"),
          };
      const ids = analyze([file, pin], { python, select: [rule.id] }).findings.map((f) => f.ruleId);
      expect([rule.id, [...new Set(ids)]]).toEqual([rule.id, [rule.id]]);
    }
  });

});
