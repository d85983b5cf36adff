// Shared pieces of every rule's output: how a value and its origin are described, the
// `related` entries, and fixes built from real edits in the unit's own syntax.
import { setValueEdit } from "../model/edits.ts";
import type { Finding, Fix, ProjectFacts, Rule, RuleReport, Severity } from "../model/finding.ts";
import type { Edit, Location } from "../model/source.ts";
import { sectionOf, type ConfigUnit, type Known, type Setting, type SettingKey, type Syntax } from "../model/settings.ts";
import { compareVersions, parseVersion, valueOf, type Resolution } from "./effective.ts";
import { quote, type TeText } from "./upstream.ts";

/** Identity with a type: lets a rule module declare `export const rule = defineRule({...})`. */
export const defineRule = (rule: Rule): Rule => rule;

/** Python-style rendering (recipes are Python; upstream messages print Python reprs). */
export function repr(value: Known): string {
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(repr).join(", ")}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `'${k}': ${repr(v)}`)
    .join(", ")}}`;
}

/** `file:line`. */
export function at(location: Location): string {
  return `${location.file}:${location.range.start.line}`;
}

/** `file:line`, plus the path the value took (`via`) and its spelling when it is a name. */
export function origin(setting: Setting): string {
  const parts = [at(setting.origin.location)];
  const written = setting.origin.text.trim();
  if (setting.value.known && /^[A-Za-z_][A-Za-z0-9_.]*$/.test(written) && !/^(True|False|None|true|false|null)$/.test(written)) {
    parts.push(`written ${written}`);
  }
  if (setting.origin.via) parts.push(`via ${setting.origin.via}`);
  return parts.join(", ");
}

/** "model.cp_comm_type is 'a2a+p2p' (recipes/llama3.py:42)". */
export function describe(setting: Setting): string {
  const value = setting.value.known ? repr(setting.value.value) : `unknown (${setting.value.reason})`;
  return `${setting.key} is ${value} (${origin(setting)})`;
}

/** Like `describe`, and also says when the value is an upstream default. */
export function describeResolution(key: SettingKey, res: Resolution): string {
  if (res.state === "set") return describe(res.setting);
  if (res.state === "default") return `${key} is not set (upstream default ${repr(res.value)})`;
  return `${key} is unknown (${res.reason})`;
}

/** A `related` entry pointing at where a setting was written. */
export function relatedTo(setting: Setting | undefined, why?: string): Finding["related"] {
  if (!setting) return [];
  const value = setting.value.known ? repr(setting.value.value) : setting.origin.text;
  return [{ message: `${setting.key} = ${value}${why ? `: ${why}` : ""}`, location: setting.origin.location }];
}

export function relatedAll(...entries: Finding["related"][]): Finding["related"] {
  const seen = new Set<string>();
  return entries.flat().filter((e) => {
    const key = `${e.location.file}:${e.location.range.start.offset}:${e.location.range.end.offset}:${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The syntax a new value for `key` would be written in: where it is now, or the anchor's. */
function targetSyntax(unit: ConfigUnit, key: SettingKey): Syntax | undefined {
  const current = unit.settings[key];
  if (current?.local) return current.origin.syntax;
  const style = unit.anchors[sectionOf(key)]?.style;
  if (!style) return undefined;
  return style === "python-attr" ? "python" : style;
}

/**
 * `setValueEdit`, refusing values the target syntax cannot express: Megatron-LM
 * argparse has no spelling for None, and its booleans are valueless `store_true` flags,
 * so writing `--flag False` there would be wrong.
 */
export function editFor(unit: ConfigUnit, key: SettingKey, value: Known): Edit | undefined {
  const syntax = targetSyntax(unit, key);
  if (!syntax || syntax === "text") return undefined;
  if (syntax === "mlm" && (value === null || typeof value === "boolean" || (typeof value === "object" && !Array.isArray(value)))) {
    return undefined;
  }
  return setValueEdit(unit, key, value);
}

/**
 * A fix only when every edit could be made. Identical edits (one flag feeding two keys)
 * collapse; insertions at the same point merge in order, since applyEdits would
 * otherwise apply them back to front.
 */
export function fixOf(description: string, edits: ReadonlyArray<Edit | undefined>): Fix | undefined {
  if (edits.length === 0 || edits.some((e) => e === undefined)) return undefined;
  const merged = new Map<string, Edit>();
  for (const e of edits as Edit[]) {
    const zeroWidth = e.range.start.offset === e.range.end.offset;
    const key = `${e.file}:${e.range.start.offset}:${e.range.end.offset}${zeroWidth ? "" : `:${e.newText}`}`;
    const previous = merged.get(key);
    if (previous && zeroWidth && !previous.newText.includes(e.newText)) merged.set(key, { ...previous, newText: previous.newText + e.newText });
    else if (!previous) merged.set(key, e);
  }
  return { description, edits: [...merged.values()] };
}

/** Set several keys at once; no fix unless all edits can be made. */
export function setValuesFix(unit: ConfigUnit, description: string, values: ReadonlyArray<[SettingKey, Known]>): Fix | undefined {
  return fixOf(
    description,
    values.map(([key, value]) => editFor(unit, key, value)),
  );
}

/** Where a setting entered the unit's own text: its line when written there, else the base or helper call that made it. */
function entryOf(setting: Setting): Location | undefined {
  return setting.local ? setting.origin.location : setting.site;
}

/**
 * Where a finding about `target` and the settings it disagrees with belongs. A value
 * written in the unit is fixed where it is written. An inherited one (a base recipe's, a
 * shared helper's) is reported where the inconsistency was produced: the latest point at
 * which one of the settings entered the unit's text (its own line, or the call that brought
 * it in), so a derived recipe's mistake lands in the derived recipe, not in a base recipe
 * the user should not change. When all of them came in together (one `cfg = base()` call),
 * the base is inconsistent on its own and the finding stays on the base's line, where the
 * base's own unit reports it too.
 */
export function producedAt(unit: ConfigUnit, target: Setting | undefined, involved: ReadonlyArray<Setting | undefined>): Location {
  if (!target) return unit.location;
  if (target.local) return target.origin.location;
  const entries = [target, ...involved].filter((s): s is Setting => s !== undefined).map(entryOf);
  const placed = entries.filter((l): l is Location => l !== undefined && l.file === unit.location.file);
  const distinct = new Set(entries.map((l) => (l ? `${l.file}:${l.range.start.offset}:${l.range.end.offset}` : "")));
  if (placed.length === 0 || distinct.size <= 1) return insideBase(target, involved) ?? target.origin.location;
  return latest(placed);
}

function latest(placed: readonly Location[]): Location {
  return placed.reduce((a, b) => (b.range.start.offset > a.range.start.offset ? b : a));
}

/**
 * All of them came in through one call of a base recipe (`cfg = gpt_oss_20b_pretrain_8gpu_gb300_nvfp4_config()`
 * in a vr200 alias): the finding goes where that base's own unit reports it, the latest call in
 * the base's own code that brought one in, not into a builder further down (an h100 recipe the
 * base starts from). Undefined when the target was written in the base itself, or when the
 * base got them all from one call too (the inconsistency is further down, as for a plain base).
 */
function insideBase(target: Setting, involved: ReadonlyArray<Setting | undefined>): Location | undefined {
  const base = target.baseSite;
  if (!base) return undefined;
  const entries = [target, ...involved].filter((s): s is Setting => s !== undefined).map((s) => s.baseSite ?? s.origin.location);
  const placed = entries.filter((l) => l.file === base.file);
  const distinct = new Set(placed.map((l) => `${l.range.start.offset}:${l.range.end.offset}`));
  return distinct.size > 1 ? latest(placed) : undefined;
}

/**
 * The report, with its location at a setting (or the unit when nothing is set). With
 * `involved` (the settings the target disagrees with), see producedAt. `summary` is the rule's
 * own one line (short-message.ts), written next to the long `message` it shortens.
 */
export function reportAt(
  unit: ConfigUnit,
  target: Setting | undefined,
  message: string,
  extra: { severity?: Severity; fix?: Fix | undefined; related?: Finding["related"]; involved?: ReadonlyArray<Setting | undefined>; summary: string },
): RuleReport {
  const location = extra.involved ? producedAt(unit, target, extra.involved) : target ? target.origin.location : unit.location;
  const report: RuleReport = { message, summary: extra.summary, location };
  if (extra.severity) report.severity = extra.severity;
  if (extra.fix) report.fix = extra.fix;
  if (extra.related && extra.related.length > 0) report.related = extra.related;
  return report;
}

/** "the upstream default 1" or the literal, for messages about a resolution's value. */
export function valueText(res: Resolution): string {
  const v = valueOf(res);
  return v === undefined ? "unknown" : repr(v);
}

/** "Transformer Engine 2.15.0 (uv.lock, uv.lock:812)", or a sentence start saying it is unknown. */
export function teDescription(project: ProjectFacts): string {
  const te = project.transformerEngine;
  if (!te) return "The Transformer Engine version is not known (no pin found); Transformer Engine";
  return `Transformer Engine ${te.version} (${te.source}, ${at(te.location)})`;
}

export function teRelated(project: ProjectFacts): Finding["related"] {
  const te = project.transformerEngine;
  return te ? [{ message: `Transformer Engine ${te.version} pinned here (${te.source})`, location: te.location }] : [];
}

/**
 * The upstream message as the pinned Transformer Engine prints it. Without a readable pin
 * (or when the pin is outside every range), every text is quoted with its release range,
 * newest first, so the finding matches whichever a log shows.
 */
export function teQuote(project: ProjectFacts, texts: readonly TeText[]): string {
  const pin = project.transformerEngine && parseVersion(project.transformerEngine.version);
  const inRange = (t: TeText, v: number[]) => {
    const since = parseVersion(t.since);
    const until = t.until === undefined ? undefined : parseVersion(t.until);
    return since !== undefined && compareVersions(v, since) >= 0 && (until === undefined || compareVersions(v, until) < 0);
  };
  const hit = pin ? texts.find((t) => inRange(t, pin)) : undefined;
  if (hit) return quote(hit.text);
  const range = (t: TeText) => (t.until ? `Transformer Engine ${t.since} … before ${t.until}` : `Transformer Engine ${t.since} and later`);
  return [...texts]
    .reverse()
    .map((t) => `${quote(t.text)} (${range(t)})`)
    .join(" or ");
}
