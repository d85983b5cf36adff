// Runs one rule through the engine, so tests see the finished Finding (severity, ids, related).
import type { Finding, ProjectFacts } from "../../src/core/model/finding.ts";
import type { ConfigUnit } from "../../src/core/model/settings.ts";
import { runRules } from "../../src/core/rules/engine.ts";
import { project } from "../support/units.ts";

export function check(ruleId: string, unit: ConfigUnit, facts: ProjectFacts = project()): Finding[] {
  return runRules([unit], facts, { select: [ruleId] });
}

/** The single finding a case must produce. */
export function only(ruleId: string, unit: ConfigUnit, facts?: ProjectFacts): Finding {
  const findings = check(ruleId, unit, facts);
  if (findings.length !== 1) throw new Error(`expected one ${ruleId} finding, got ${findings.length}: ${findings.map((f) => f.message).join(" | ")}`);
  return findings[0] as Finding;
}
