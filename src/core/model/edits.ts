// Turning "this setting should be V" into a text edit in the syntax of the place it
// lives: a Python assignment, a YAML mapping, a Hydra override or a Megatron-LM flag.
import type { Edit } from "./source.ts";
import {
  fieldOf,
  sectionOf,
  type Anchor,
  type ConfigUnit,
  type Known,
  type Setting,
  type SettingKey,
  type Syntax,
} from "./settings.ts";

const YAML_PLAIN = /^[A-Za-z_][A-Za-z0-9_+.\-/]*$/;
const HYDRA_PLAIN = /^[A-Za-z0-9_+.\-/:]+$/;

export function renderPython(value: Known): string {
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(renderPython).join(", ")}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}: ${renderPython(v)}`)
    .join(", ")}}`;
}

export function renderYaml(value: Known): string {
  if (value === null) return "null";
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (typeof value === "string") {
    const reserved = /^(true|false|null|yes|no|on|off|~)$/i.test(value) || /^[-+]?[0-9.]/.test(value);
    return YAML_PLAIN.test(value) && !reserved ? value : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(renderYaml).join(", ")}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${k}: ${renderYaml(v)}`)
    .join(", ")}}`;
}

/** Hydra override values: no spaces inside lists, so one shell word stays one word. */
export function renderHydra(value: Known): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return HYDRA_PLAIN.test(value) ? value : `'${value.replace(/'/g, "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(renderHydra).join(",")}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${k}:${renderHydra(v)}`)
    .join(",")}}`;
}

/** Megatron-LM argparse values: lists are space-separated (`nargs='+'`). */
export function renderMlm(value: Known): string {
  if (Array.isArray(value)) return value.map(renderMlm).join(" ");
  if (value === null) return "";
  return String(value);
}

export function renderValue(value: Known, syntax: Syntax): string {
  switch (syntax) {
    case "python":
      return renderPython(value);
    case "yaml":
      return renderYaml(value);
    case "hydra":
      return renderHydra(value);
    case "mlm":
      return renderMlm(value);
    case "text":
      return typeof value === "string" ? value : JSON.stringify(value);
  }
}

/** `context_parallel_size` -> `--context-parallel-size`. */
export function mlmFlagFor(key: SettingKey): string {
  return `--${fieldOf(key).replace(/_/g, "-")}`;
}

/** A shell word that may hold brackets or spaces: quote it, as docs/domain.md 2.1 advises. */
function shellWord(word: string): string {
  return /[\s\[\]{}*?'"$`\\()]/.test(word) ? `"${word.replace(/(["\\$`])/g, "\\$1")}"` : word;
}

export function replaceValueEdit(setting: Setting, value: Known): Edit {
  return {
    file: setting.origin.location.file,
    range: setting.origin.location.range,
    newText: renderValue(value, setting.origin.syntax),
  };
}

export function insertSettingEdit(anchor: Anchor, key: SettingKey, value: Known): Edit {
  const field = fieldOf(key);
  let newText: string;
  switch (anchor.style) {
    case "python-attr":
      newText = `\n${anchor.indent}${anchor.receiver}${field} = ${renderPython(value)}`;
      break;
    case "yaml":
      newText = `\n${anchor.indent}${anchor.receiver}${field}: ${renderYaml(value)}`;
      break;
    case "hydra":
      newText = ` ${shellWord(`${anchor.receiver}${key}=${renderHydra(value)}`)}`;
      break;
    case "mlm":
      newText = ` ${mlmFlagFor(key)} ${renderMlm(value)}`;
      break;
  }
  return { file: anchor.at.file, range: anchor.at.range, newText };
}

/**
 * The edit that makes `key` equal `value` in this unit: replace the value where the unit
 * itself wrote it, otherwise add an override at the unit's anchor for that section
 * (so a shared base recipe or module constant is left alone). Undefined when the unit
 * offers no place to write.
 */
export function setValueEdit(unit: ConfigUnit, key: SettingKey, value: Known): Edit | undefined {
  const current = unit.settings[key];
  if (current && current.local) return replaceValueEdit(current, value);
  const anchor = unit.anchors[sectionOf(key)];
  return anchor ? insertSettingEdit(anchor, key, value) : undefined;
}

/** Apply non-overlapping edits to a text (used by tests and `lint --fix`). */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.range.start.offset - a.range.start.offset);
  let out = text;
  let floor = Infinity;
  for (const e of sorted) {
    if (e.range.end.offset > floor) continue; // overlapping: keep the later-starting edit only
    out = out.slice(0, e.range.start.offset) + e.newText + out.slice(e.range.end.offset);
    floor = e.range.start.offset;
  }
  return out;
}
