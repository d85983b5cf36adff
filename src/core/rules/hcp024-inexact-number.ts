// HCP024: a number the analyzer cannot hold exactly (an integer past 2^53, inf, nan).
import type { RuleReport } from "../model/finding.ts";
import type { ConfigUnit, Known, Setting } from "../model/settings.ts";
import { defineRule, reportAt } from "./report.ts";
import { bare, oneLine } from "./short-message.ts";

/** 2^53 - 1: past it, a double no longer holds every integer, so arithmetic on it is not exact. */
const EXACT_LIMIT = Number.MAX_SAFE_INTEGER;

export const rule = defineRule({
  id: "HCP024",
  name: "inexact-number",
  severity: "error",
  summary: "a number the analyzer cannot hold exactly",
  doc: {
    checks:
      `A setting whose value holds an integer beyond ±${EXACT_LIMIT} (2^53 - 1), an infinity or a NaN, anywhere in it ` +
      "(a size, a length, an entry of hierarchical_context_parallel_sizes).",
    why:
      "Python keeps such an integer exact, but the analyzer (like JSON and YAML readers in JavaScript) holds numbers as " +
      "doubles, where divisibility and products are no longer exact. Rules that need the value treat it as unknown " +
      "instead of deciding from a rounded number, so the value gets this finding instead of a silent pass. No real " +
      "parallel size, sequence length or head count is near that size: Megatron-Core's world-size and divisibility " +
      "checks (parallel_state.initialize_model_parallel) reject it, or the run runs out of memory first.",
    example: 'cfg.model.cp_comm_type = "a2a+p2p"\ncfg.model.hierarchical_context_parallel_sizes = [2, 2]\ncfg.model.tensor_model_parallel_size = 99999999999999999999',
    fix: "Write the size you meant (a positive integer that divides the GPUs), or leave the key to its recipe.",
  },
  check(unit: ConfigUnit): RuleReport[] {
    const out: RuleReport[] = [];
    for (const setting of Object.values(unit.settings) as Setting[]) {
      if (!setting.value.known) continue;
      const inexact = inexactNumbers(setting.value.value);
      if (inexact.length > 0) out.push(reportAt(unit, setting, messageFor(setting, inexact), { summary: summaryFor(setting, inexact) }));
    }
    return out;
  },
});

/** Whether a double stands for no exact integer or real that the analyzer can reason with. */
export function isInexact(n: number): boolean {
  return !Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n));
}

function inexactNumbers(value: Known): number[] {
  if (typeof value === "number") return isInexact(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(inexactNumbers);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(inexactNumbers);
  return [];
}

const inexactText = (inexact: readonly number[]): string => (inexact.some((n) => !Number.isFinite(n)) ? "an infinity or NaN" : `an integer past 2^53 (${EXACT_LIMIT})`);

function summaryFor(setting: Setting, inexact: readonly number[]): string {
  const what = inexactText(inexact);
  const kind = inexact.some((n) => !Number.isFinite(n)) ? "an infinity or NaN" : "an integer past 2^53";
  return oneLine(`${bare(setting.key)} is written \`${setting.origin.text.trim()}\`, ${kind}; write the size you meant`, `${setting.key} holds ${what}; write the size you meant`);
}

function messageFor(setting: Setting, inexact: readonly number[]): string {
  const written = setting.origin.text.trim().slice(0, 80);
  const what = inexactText(inexact);
  return (
    `${setting.key} is written \`${written}\` (${setting.origin.location.file}:${setting.origin.location.range.start.line}), ` +
    `which holds ${what}. No real run has such a size; Megatron-Core's divisibility checks reject it. The analyzer cannot ` +
    "compute with it exactly, so rules that need this value treat it as unknown. Write the size you meant."
  );
}
