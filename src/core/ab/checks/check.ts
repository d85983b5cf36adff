// The shape of a comparison check: id, name, severity and a doc (checks, why, example, fix),
// like the rules (src/core/rules) and the verdict detectors, so `explain` can show them.
export interface CheckDoc {
  checks: string;
  why: string;
  example: string;
  fix: string;
}

export interface ComparisonCheck {
  id: string;
  name: string;
  severity: "error" | "warning";
  doc: CheckDoc;
}

export function defineCheck<T extends ComparisonCheck>(check: T): T {
  return check;
}
