// Runs rules over configuration units: selection, re-grading, de-duplication, ordering.
// A rule that throws becomes a finding on the unit graded as the worst the rule could have
// said, so a rule that cannot decide never makes a check greener; the analysis never crashes.
import * as z from "zod";
import { SeveritySchema, type Finding, type ProjectFacts, type Rule, type RuleReport, type Severity } from "../model/finding.ts";
import type { ConfigUnit } from "../model/settings.ts";
import { ALL_RULES } from "./index.ts";
import { withoutPlaces } from "./short-message.ts";

export interface RunOptions {
  /** Only these rule ids (all when absent). */
  select?: string[];
  /** Never these rule ids (applied after `select`). */
  ignore?: string[];
  /** Severity per rule id, replacing the rule's own grading for all its findings. */
  severity?: Record<string, Severity>;
}

export class RuleOptionsError extends Error {
  override name = "RuleOptionsError";
}

function optionsSchema(rules: readonly Rule[]) {
  const ids = new Set(rules.map((r) => r.id));
  const ruleId = z
    .string()
    .transform((s) => s.trim().toUpperCase())
    .refine((id) => ids.has(id), { message: "unknown rule id" });
  return z
    .object({
      select: z.array(ruleId).optional(),
      ignore: z.array(ruleId).optional(),
      severity: z.record(ruleId, SeveritySchema()).optional(),
    })
    .strict();
}

export type ParsedRunOptions = z.output<ReturnType<typeof optionsSchema>>;

/** Options that set nothing (what a plain lint passes): nothing to validate, so no schema is built. */
function setsNothing(options: unknown): boolean {
  if (options === undefined || options === null) return true;
  return typeof options === "object" && Object.entries(options).every(([key, value]) => value === undefined && (key === "select" || key === "ignore" || key === "severity"));
}

/** Validates options (ids are case-insensitive); throws RuleOptionsError naming every problem. */
export function parseRunOptions(options: unknown, rules: readonly Rule[] = ALL_RULES): ParsedRunOptions {
  if (setsNothing(options)) return {};
  const parsed = optionsSchema(rules).safeParse(options ?? {});
  if (!parsed.success) throw new RuleOptionsError(`Invalid rule options:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export function activeRules(rules: readonly Rule[], options: ParsedRunOptions): Rule[] {
  const select = options.select && new Set(options.select);
  const ignore = new Set(options.ignore ?? []);
  return rules.filter((r) => (!select || select.has(r.id)) && !ignore.has(r.id));
}

function toFinding(rule: Rule, unit: ConfigUnit, report: RuleReport, regrade: Severity | undefined): Finding {
  const finding: Finding = {
    ruleId: rule.id,
    ruleName: rule.name,
    severity: regrade ?? report.severity ?? rule.severity,
    message: report.message,
    summary: report.summary,
    location: report.location,
    unitId: unit.id,
    unitName: unit.name,
    related: report.related ?? [],
  };
  if (report.fix) finding.fix = report.fix;
  return finding;
}

function crashFinding(rule: Rule, unit: ConfigUnit, error: unknown, regrade: Severity | undefined): Finding {
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  // Reports grade themselves at most the rule's severity: the crash takes that grade, since
  // the rule might have reported it.
  return {
    ruleId: rule.id,
    ruleName: rule.name,
    severity: regrade ?? rule.severity,
    message:
      `Rule ${rule.id} (${rule.name}) failed on ${unit.name}, so this configuration is not checked for it: ${reason.slice(0, 500)}. ` +
      "It counts as the rule's own finding until the rule can decide; the other rules still ran; please report this.",
    summary: `rule ${rule.id} failed on this configuration, so it is not checked for it; please report this`,
    location: unit.location,
    unitId: unit.id,
    unitName: unit.name,
    related: [],
  };
}

function runOne(rule: Rule, unit: ConfigUnit, project: ProjectFacts, regrade: Severity | undefined): Finding[] {
  try {
    return rule.check(unit, project).map((r) => toFinding(rule, unit, r, regrade));
  } catch (error) {
    return [crashFinding(rule, unit, error, regrade)];
  }
}

// The message without its places: a launch line's copy of its recipe's finding says
// "(recipe.py:25, via recipe x)" where the recipe's says "(recipe.py:25)", and is the same finding.
// (Not the short message: a launch line that changes CP keeps its own finding, whose one line may read the same.)
const dedupeKey = (f: Finding): string =>
  [f.ruleId, f.location.file, f.location.range.start.offset, f.location.range.end.offset, withoutPlaces(f.message)].join("\u0000");

/**
 * Same rule, file, range and message (its places aside) is one finding. A launch line merged with its
 * recipe repeats the recipe's own findings (same origin, same text); keep the copy from the
 * unit whose file holds the location, so its fix edits that file rather than adding an override.
 */
export function dedupeFindings(findings: readonly Finding[], units: readonly ConfigUnit[]): Finding[] {
  const unitFile = new Map(units.map((u) => [u.id, u.location.file]));
  const owns = (f: Finding): boolean => unitFile.get(f.unitId) === f.location.file;
  const kept = new Map<string, Finding>();
  for (const f of findings) {
    const key = dedupeKey(f);
    const existing = kept.get(key);
    if (!existing || (!owns(existing) && owns(f))) kept.set(key, f);
  }
  return [...kept.values()];
}

const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

export function compareFindings(a: Finding, b: Finding): number {
  return (
    cmp(a.location.file, b.location.file) ||
    cmp(a.location.range.start.line, b.location.range.start.line) ||
    cmp(a.location.range.start.column, b.location.range.start.column) ||
    cmp(a.ruleId, b.ruleId) ||
    cmp(a.unitId, b.unitId) ||
    cmp(a.message, b.message)
  );
}

export function runRules(
  units: readonly ConfigUnit[],
  project: ProjectFacts,
  options: RunOptions = {},
  rules: readonly Rule[] = ALL_RULES,
): Finding[] {
  const parsed = parseRunOptions(options, rules);
  const active = activeRules(rules, parsed);
  const findings = units.flatMap((unit) => active.flatMap((rule) => runOne(rule, unit, project, parsed.severity?.[rule.id])));
  return dedupeFindings(findings, units).sort(compareFindings);
}
