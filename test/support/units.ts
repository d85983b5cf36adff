// Builds ConfigUnits from real source text for rule tests, before the real extractors
// exist: tiny, line-based readers for the four source kinds. Every value range is found in
// the text, so a rule's fix can be applied with applyEdits and the result read back.
import { parseDocument, isMap, isScalar, isPair, LineCounter, type Node } from "yaml";
import { applyEdits } from "../../src/core/model/edits.ts";
import type { Fix, ProjectFacts } from "../../src/core/model/finding.ts";
import {
  SECTIONS,
  isSettingKey,
  known,
  unknown,
  type Anchor,
  type ConfigUnit,
  type Known,
  type Mode,
  type Section,
  type Setting,
  type SettingKey,
  type Value,
} from "../../src/core/model/settings.ts";
import { LineIndex, location, pointLocation } from "../../src/core/model/source.ts";

export interface UnitOptions {
  file?: string;
  name?: string;
  mode?: Mode;
  complete?: boolean;
  gpus?: number;
  /** What built cfg.dataset (HCP022 judges fine-tuning dataset types only). */
  datasetType?: string;
  notes?: string[];
  /** Module constants a Python value may name (`SEQUENCE_LENGTH_64K`). */
  constants?: Record<string, Known>;
}

function modeFromName(name: string): Mode {
  if (/peft|lora|dora/i.test(name)) return "peft";
  if (/sft|finetune/i.test(name)) return "sft";
  if (/pretrain/i.test(name)) return "pretrain";
  return "unknown";
}

function baseUnit(kind: ConfigUnit["kind"], file: string, index: LineIndex, opts: UnitOptions, id: string, name: string, at: number): ConfigUnit {
  const unit: ConfigUnit = {
    id,
    kind,
    name,
    location: location(file, index, at, at),
    settings: {},
    anchors: {},
    mode: opts.mode ?? modeFromName(name),
    complete: opts.complete ?? kind === "recipe",
    notes: (opts.notes ?? []).map((message) => ({ message, location: location(file, index, at, at) })),
  };
  if (opts.gpus !== undefined) unit.gpus = opts.gpus;
  if (opts.datasetType !== undefined) unit.datasetType = opts.datasetType;
  return unit;
}

// ---------------------------------------------------------------------------------
// Python recipes: `cfg.<section>.<field> = <literal>` lines.

/** A small Python literal reader: None/True/False, numbers, strings, lists and tuples. */
export function parsePythonLiteral(text: string, constants: Record<string, Known> = {}): Value {
  const src = text.trim();
  let pos = 0;
  const fail = (): never => {
    throw new Error("not a literal");
  };
  const ws = () => {
    while (pos < src.length && /\s/.test(src[pos] ?? "")) pos++;
  };
  const value = (): Known => {
    ws();
    const rest = src.slice(pos);
    const str = /^(['"])((?:\\.|(?!\1).)*)\1/.exec(rest);
    if (str) {
      pos += str[0].length;
      return (str[2] ?? "").replace(/\\(.)/g, "$1");
    }
    const num = /^-?\d+(?:\.\d+)?(?:e-?\d+)?/i.exec(rest);
    if (num) {
      pos += num[0].length;
      return Number(num[0]);
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (word) {
      pos += word[0].length;
      if (word[0] === "None") return null;
      if (word[0] === "True") return true;
      if (word[0] === "False") return false;
      if (word[0] in constants) return constants[word[0]] ?? null;
      return fail();
    }
    const open = rest[0];
    if (open === "[" || open === "(") {
      const close = open === "[" ? "]" : ")";
      pos++;
      const items: Known[] = [];
      ws();
      while (src[pos] !== close) {
        items.push(value());
        ws();
        if (src[pos] === ",") pos++;
        else if (src[pos] !== close) fail();
        ws();
      }
      pos++;
      return items;
    }
    return fail();
  };
  try {
    const v = value();
    ws();
    return pos === src.length ? known(v) : unknown(`${src} is not a literal`);
  } catch {
    return unknown(`${src} is not a literal`);
  }
}

const PY_ASSIGN = /^([ \t]*)cfg\.(model|dataset|dist|ddp)\.(\w+)[ \t]*=[ \t]*(.*?)[ \t]*(#[^\n]*)?$/dgm;

/**
 * A recipe function. A trailing `# via: <text>` comment marks a value as inherited (not
 * local), as if it came from a base recipe, with `<text>` as its origin.via.
 */
export function pythonRecipe(text: string, opts: UnitOptions = {}): ConfigUnit {
  const file = opts.file ?? "recipes/example.py";
  const index = new LineIndex(text);
  const def = /def (\w+)\(/.exec(text);
  const name = opts.name ?? def?.[1] ?? "recipe";
  const unit = baseUnit("recipe", file, index, opts, `${file}::${name}`, name, def?.index ?? 0);
  let lastLine = 1;
  let indent = "    ";
  for (const m of text.matchAll(PY_ASSIGN)) {
    const key = `${m[2]}.${m[3]}`;
    const [start, end] = m.indices?.[4] ?? [0, 0];
    lastLine = index.point(start).line;
    indent = m[1] ?? "";
    if (!isSettingKey(key)) continue;
    const valueText = text.slice(start, end);
    const via = /#\s*via:\s*(.*)$/.exec(m[5] ?? "")?.[1];
    const constant = /^[A-Za-z_]\w*$/.test(valueText) && opts.constants && valueText in opts.constants;
    const setting: Setting = {
      key,
      value: parsePythonLiteral(valueText, opts.constants),
      origin: { kind: "assignment", location: location(file, index, start, end), text: valueText, syntax: "python" },
      local: via === undefined,
    };
    if (via !== undefined) setting.origin.via = via;
    else if (constant) setting.origin.via = `module constant ${valueText}`;
    unit.settings[key] = setting;
  }
  const at = pointLocation(file, index, index.lineEnd(lastLine));
  for (const section of SECTIONS) {
    unit.anchors[section] = { style: "python-attr", at, indent, receiver: `cfg.${section}.` };
  }
  return unit;
}

// ---------------------------------------------------------------------------------
// YAML override files: top-level sections holding block mappings.

export function yamlOverride(text: string, opts: UnitOptions = {}): ConfigUnit {
  const file = opts.file ?? "conf/override.yaml";
  const index = new LineIndex(text);
  const unit = baseUnit("yaml", file, index, opts, file, opts.name ?? file, 0);
  const doc = parseDocument(text, { lineCounter: new LineCounter(), keepSourceTokens: true });
  if (!isMap(doc.contents)) return unit;
  for (const top of doc.contents.items) {
    const section = isScalar(top.key) ? String(top.key.value) : "";
    if (!(SECTIONS as readonly string[]).includes(section) || !isMap(top.value)) continue;
    let lastEnd = 0;
    let indent = "  ";
    for (const pair of top.value.items) {
      if (!isPair(pair) || !isScalar(pair.key)) continue;
      const keyNode = pair.key as Node;
      const valueNode = pair.value as Node | null;
      const keyStart = keyNode.range?.[0] ?? 0;
      indent = text.slice(index.lineStart(index.point(keyStart).line), keyStart);
      if (!valueNode?.range) continue;
      const [start, valueEnd] = valueNode.range;
      lastEnd = Math.max(lastEnd, valueEnd);
      const key = `${section}.${String(pair.key.value)}`;
      if (!isSettingKey(key)) continue;
      unit.settings[key] = {
        key,
        value: known(valueNode.toJSON() as Known),
        origin: { kind: "yaml", location: location(file, index, start, valueEnd), text: text.slice(start, valueEnd), syntax: "yaml" },
        local: true,
      };
    }
    const line = index.point(lastEnd).line;
    unit.anchors[section as Section] = { style: "yaml", at: pointLocation(file, index, index.lineEnd(line)), indent, receiver: "" };
  }
  return unit;
}

// ---------------------------------------------------------------------------------
// run_recipe.py launch lines: Hydra `section.key=value` overrides and -cp/-tp/-pp flags.

export function parseHydraValue(text: string): Value {
  if (text === "null") return known(null);
  if (text === "true" || text === "false") return known(text === "true");
  if (/^-?\d+(\.\d+)?$/.test(text)) return known(Number(text));
  const list = /^\[(.*)\]$/.exec(text);
  if (list) {
    const items = (list[1] ?? "").split(",").filter((s) => s.trim() !== "").map((s) => parseHydraValue(s.trim()));
    return items.every((v) => v.known) ? known(items.map((v) => (v.known ? v.value : null))) : unknown(`${text} has an unknown element`);
  }
  if (/^\$\{.*\}$|^\$/.test(text)) return unknown(`${text} is interpolated`);
  return known(text.replace(/^'(.*)'$/, "$1"));
}

const HYDRA_OVERRIDE = /(["']?)\+{0,2}((?:model|dataset|dist|ddp)\.[A-Za-z_]+)=([^\s"']+)\1/dg;
const CONVENIENCE: Record<string, SettingKey> = {
  "-cp": "model.context_parallel_size",
  "--context_parallel_size": "model.context_parallel_size",
  "-tp": "model.tensor_model_parallel_size",
  "-pp": "model.pipeline_model_parallel_size",
};

function endAnchorAt(file: string, index: LineIndex, text: string): Anchor["at"] {
  return pointLocation(file, index, text.trimEnd().length);
}

export function hydraLaunch(text: string, opts: UnitOptions = {}): ConfigUnit {
  const file = opts.file ?? "scripts/launch.sh";
  const index = new LineIndex(text);
  const recipe = /--recipe[ =](\S+)/.exec(text)?.[1];
  const modeFlag = /--mode[ =](\w+)/.exec(text)?.[1];
  const start = text.search(/\S/);
  const line = index.point(Math.max(0, start)).line;
  const unitOpts: UnitOptions = { ...opts, mode: opts.mode ?? (modeFlag === "lora" || modeFlag === "dora" ? "peft" : (modeFlag as Mode | undefined)) ?? modeFromName(recipe ?? "") };
  const unit = baseUnit("launch", file, index, unitOpts, `${file}:${line}`, opts.name ?? `run_recipe ${recipe ?? ""}`.trim(), Math.max(0, start));
  if (recipe) unit.baseRecipe = recipe;
  const set = (key: SettingKey, s: number, e: number, kind: Setting["origin"]["kind"]) => {
    const valueText = text.slice(s, e);
    unit.settings[key] = {
      key,
      value: parseHydraValue(valueText),
      origin: { kind, location: location(file, index, s, e), text: valueText, syntax: "hydra" },
      local: true,
    };
  };
  for (const m of text.matchAll(/(?<=\s)(-cp|-tp|-pp|--context_parallel_size)[ =](\d+)/dg)) {
    const key = CONVENIENCE[m[1] ?? ""];
    const [s, e] = m.indices?.[2] ?? [0, 0];
    if (key) set(key, s, e, "cli-flag");
  }
  for (const m of text.matchAll(HYDRA_OVERRIDE)) {
    const key = m[2] ?? "";
    const [s, e] = m.indices?.[3] ?? [0, 0];
    if (isSettingKey(key)) set(key, s, e, "hydra-override");
  }
  const at = endAnchorAt(file, index, text);
  for (const section of SECTIONS) unit.anchors[section] = { style: "hydra", at, indent: "", receiver: "" };
  return unit;
}

// ---------------------------------------------------------------------------------
// Megatron-LM launch lines: `--flag value...` (argparse, nargs='+' lists).

const MLM_LIST_KEYS = new Set<SettingKey>(["model.hierarchical_context_parallel_sizes", "model.cp_comm_type", "model.window_size"]);

function mlmKey(flag: string): SettingKey | undefined {
  const field = flag.replace(/^--/, "").replace(/-/g, "_");
  const candidates = SECTIONS.map((s) => `${s}.${field}`).filter(isSettingKey);
  return candidates[0];
}

export function mlmLaunch(text: string, opts: UnitOptions = {}): ConfigUnit {
  const file = opts.file ?? "scripts/pretrain_gpt.sh";
  const index = new LineIndex(text);
  const start = Math.max(0, text.search(/\S/));
  const unit = baseUnit("mlm-launch", file, index, { complete: true, ...opts }, `${file}:${index.point(start).line}`, opts.name ?? "pretrain_gpt.py", start);
  const tokens = [...text.matchAll(/[^\s\\]+/g)].map((m) => ({ text: m[0], start: m.index ?? 0, end: (m.index ?? 0) + m[0].length }));
  for (let i = 0; i < tokens.length; i++) {
    const flag = tokens[i];
    if (!flag?.text.startsWith("--")) continue;
    const key = mlmKey(flag.text);
    const values = [];
    let j = i + 1;
    while (j < tokens.length && !(tokens[j]?.text.startsWith("--") ?? true)) values.push(tokens[j++]);
    if (!key) continue;
    const first = values[0];
    const last = values[values.length - 1];
    if (!first || !last) {
      // store_true flag: the flag itself is the value.
      unit.settings[key] = { key, value: known(true), origin: { kind: "mlm-flag", location: location(file, index, flag.start, flag.end), text: flag.text, syntax: "mlm" }, local: true };
      continue;
    }
    const parsed = values.map((v) => parseHydraValue(v?.text ?? ""));
    const items = parsed.map((v) => (v.known ? v.value : null));
    const value: Known = MLM_LIST_KEYS.has(key) && !(key === "model.cp_comm_type" && items.length === 1) ? items : (items[0] ?? null);
    unit.settings[key] = {
      key,
      value: parsed.every((v) => v.known) ? known(value) : unknown("unknown flag value"),
      origin: { kind: "mlm-flag", location: location(file, index, first.start, last.end), text: text.slice(first.start, last.end), syntax: "mlm" },
      local: true,
    };
  }
  const at = endAnchorAt(file, index, text);
  for (const section of SECTIONS) unit.anchors[section] = { style: "mlm", at, indent: "", receiver: "" };
  return unit;
}

// ---------------------------------------------------------------------------------

/** A launch line merged with its analyzed recipe: recipe values are inherited, the line's win. */
export function mergeLaunch(recipe: ConfigUnit, launch: ConfigUnit): ConfigUnit {
  const settings: ConfigUnit["settings"] = {};
  for (const [key, s] of Object.entries(recipe.settings)) {
    if (s) settings[key as SettingKey] = { ...s, local: false };
  }
  Object.assign(settings, launch.settings);
  return { ...launch, settings, complete: recipe.complete, mode: launch.mode === "unknown" ? recipe.mode : launch.mode };
}

export function project(te?: string, gpusPerNode = 8): ProjectFacts {
  if (te === undefined) return { gpusPerNode };
  const text = `[[package]]\nname = "transformer-engine"\nversion = "${te}"\n`;
  const index = new LineIndex(text);
  const start = text.indexOf(te);
  return { gpusPerNode, transformerEngine: { version: te, location: location("uv.lock", index, start, start + te.length), source: "uv.lock" } };
}

/** Apply a fix to the file it edits; throws when the fix touches another file. */
export function applyFix(file: string, text: string, fix: Fix | undefined): string {
  if (!fix) throw new Error("no fix");
  const foreign = fix.edits.filter((e) => e.file !== file);
  if (foreign.length > 0) throw new Error(`fix edits ${foreign.map((e) => e.file).join(", ")}`);
  return applyEdits(text, fix.edits);
}
