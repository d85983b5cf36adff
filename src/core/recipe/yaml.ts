// YAML files: ConfigContainer override files (`model:`, `dataset:`... at top level) become
// one "yaml" unit; string scalars that hold a launch command (card.yaml `command: >`,
// GitHub workflow `run: |`) become launch units whose locations point into the YAML text.
import {
  isAlias,
  isMap,
  isScalar,
  parseAllDocuments,
  visit,
  type Document,
  type Node,
  type Pair,
  type Scalar,
  type YAMLMap,
} from "yaml";
import { LineIndex, location, pointLocation, type SourceFile } from "../model/source.ts";
import {
  known,
  SECTIONS,
  unknown,
  type Anchor,
  type ConfigUnit,
  type Known,
  type Section,
  type Setting,
  type SettingKey,
  type Value,
} from "../model/settings.ts";
import { rejectInput } from "./guards.ts";
import {
  aliasContext,
  AliasLimitError,
  effectivePairs,
  mappingOf,
  tryDeref,
  MAX_ALIAS_COUNT_PER_VALUE,
  undefinedAliases,
  UndefinedAliasError,
  type AliasContext,
  type EffectivePair,
} from "./yaml-aliases.ts";
import { extractLaunchLines, mayHoldLaunchLine, settingKeyFor } from "./launch/index.ts";
import { MappedTextBuilder, type MappedText } from "./launch/mapped.ts";
import { emptyResult, type Diagnostic, type ExtractResult } from "./types.ts";

/** Top-level fields of ConfigContainer (training/config.py); an override file uses only these. */
const CONFIG_CONTAINER_FIELDS = new Set([
  "rng", "rerun_state_machine", "train", "model", "optimizer", "optimizer_config_override_provider", "ddp",
  "validation", "scheduler", "dataset", "logger", "tokenizer", "checkpoint", "dist", "ft", "straggler",
  "nvrx_straggler", "profiling", "peft", "comm_overlap", "mixed_precision", "tensor_inspect", "inprocess_restart",
  "env_vars", "defaults",
]);

type ScalarNode = Scalar<unknown>;

const SECTION_LINE = /^(?:model|dataset|dist|ddp)\s*:/m;

export function extractYaml(file: SourceFile): ExtractResult {
  const result = emptyResult();
  const rejected = rejectInput(file.path, file.text);
  if (rejected) return { ...result, diagnostics: [rejected] };
  // Parsing is the expensive part; a file with neither a section key nor a launch hint has
  // nothing for us (workflow files, docs navigation, skill cards).
  if (!SECTION_LINE.test(file.text) && !mayHoldLaunchLine(file.text)) return result;
  const index = new LineIndex(file.text);
  let docs: Document.Parsed[];
  try {
    // `merge`: `<<` keys as the YAML 1.1 loader Bridge uses reads them (see yaml-aliases.ts).
    docs = parseAllDocuments(file.text, { merge: true }) as Document.Parsed[];
  } catch (error) {
    // The library reports problems as document errors; this is a last line of defence.
    const message = error instanceof Error ? error.message : String(error);
    return { ...result, diagnostics: [{ file: file.path, severity: "error", code: "parse-error", message }] };
  }
  if (!Array.isArray(docs)) docs = [];
  const ids = new Set<string>();
  for (const doc of docs) {
    result.diagnostics.push(...documentErrors(file, index, doc));
    const override = overrideUnit(file, index, doc, result.diagnostics);
    if (override) result.units.push(override);
    for (const scalar of launchScalars(doc)) {
      const found = extractLaunchLines(scalarView(file.text, scalar), file, index, ids, new Map(), scalar.range?.[0] ?? 0);
      for (const u of found.units) result.units.push(u);
      for (const d of found.diagnostics) result.diagnostics.push(d);
    }
  }
  return result;
}

function documentErrors(file: SourceFile, index: LineIndex, doc: Document.Parsed): Diagnostic[] {
  return doc.errors.map((e) => {
    const start = e.pos[0];
    const end = Math.max(start, e.pos[1]);
    const at = e.linePos?.[0];
    return {
      file: file.path,
      severity: "error",
      code: "parse-error",
      // The library's own line:col (1-based, like ours) and first message line.
      message: `${at ? `${at.line}:${at.col}: ` : ""}${e.message.split("\n")[0] ?? e.message}`,
      location: location(file.path, index, start, end),
    };
  });
}

// ---------------------------------------------------------------------------------------
// Override files

/**
 * An override file has a ConfigContainer field holding a mapping. When every top-level key
 * is a ConfigContainer field that is enough; otherwise the document must also set one of
 * the settings we read, which tells an override file with a stray key (a typo, a field of
 * a newer Bridge, a tool's own key: ignored one by one, never costing the rest of the file)
 * from other YAML that happens to have a `model:` mapping (model cards: `model: {hf_id: …}`).
 */
function overrideShape(root: YAMLMap, pairs: readonly EffectivePair[], ctx: AliasContext): "override" | "maybe" | "none" {
  let sections = 0;
  // A key that is not a string (`1:`, `[a]:`) is foreign too.
  let foreign = root.items.some((item) => !isMergeOrStringKey(item));
  for (const pair of pairs) {
    if (!CONFIG_CONTAINER_FIELDS.has(pair.key)) foreign = true;
    else if (mappingOf(pair.value, ctx).map) sections++;
  }
  if (sections === 0) return "none";
  return foreign ? "maybe" : "override";
}

function isMergeOrStringKey(item: Pair): boolean {
  if (!isScalar(item.key)) return false;
  const key = item.key.value;
  return typeof key === "string" || (typeof key === "symbol" && key.description === "<<");
}

function ignoredKeys(file: SourceFile, index: LineIndex, root: YAMLMap, pairs: readonly EffectivePair[]): ConfigUnit["notes"] {
  const odd = root.items.filter((item) => !isMergeOrStringKey(item)).map((item) => ({ key: isScalar(item.key) ? item.key.value : undefined, node: item.key }));
  const foreign = pairs.filter((p) => !CONFIG_CONTAINER_FIELDS.has(p.key)).map((p) => ({ key: p.key as unknown, node: p.keyNode as unknown }));
  return [...odd, ...foreign].map(({ key, node }) => ({
    message: `${String(key)}: is not a ConfigContainer field; ignored`,
    location: nodeLocation(file, index, node),
  }));
}

function overrideUnit(file: SourceFile, index: LineIndex, doc: Document.Parsed, diagnostics: Diagnostic[]): ConfigUnit | undefined {
  const root = doc.contents;
  if (!isMap(root)) return undefined;
  const ctx = aliasContext(doc);
  for (const alias of undefinedAliases(ctx)) diagnostics.push(aliasDiagnostic(file, index, new UndefinedAliasError(alias).message, alias));
  try {
    return readOverride(file, index, root, ctx);
  } catch (error) {
    if (!(error instanceof AliasLimitError)) throw error;
    diagnostics.push(aliasDiagnostic(file, index, `${error.message}; the settings of this document are not read`, root));
    return undefined;
  }
}

function aliasDiagnostic(file: SourceFile, index: LineIndex, message: string, node: unknown): Diagnostic {
  return { file: file.path, severity: "error", code: "parse-error", message, location: nodeLocation(file, index, node) };
}

function readOverride(file: SourceFile, index: LineIndex, root: YAMLMap, ctx: AliasContext): ConfigUnit | undefined {
  const pairs = effectivePairs(root, ctx);
  const shape = overrideShape(root, pairs, ctx);
  if (shape === "none") return undefined;
  const settings: Partial<Record<SettingKey, Setting>> = {};
  const anchors: ConfigUnit["anchors"] = {};
  const notes: ConfigUnit["notes"] = ignoredKeys(file, index, root, pairs);
  for (const section of SECTIONS) {
    const pair = pairs.find((p) => p.key === section);
    // A section that is an alias or comes from a merge is shared text: no insertion point.
    const shared = pair && (pair.viaAlias || isAlias(pair.value));
    const anchor = !pair ? missingSectionAnchor(file, index, section) : shared ? undefined : sectionAnchor(file, index, pair);
    if (anchor) anchors[section] = anchor;
    const { map, viaAlias } = pair ? mappingOf(pair.value, ctx) : { map: undefined, viaAlias: false };
    if (pair && map) collectSettings({ file, index, ctx }, section, map, settings, Boolean(pair.viaAlias || viaAlias));
    else if (pair && pair.value !== null && !isEmptyScalar(pair.value)) {
      notes.push({ message: `${section}: is not a mapping; its settings are not read`, location: nodeLocation(file, index, pair.value) });
    }
  }
  if (shape === "maybe" && Object.keys(settings).length === 0) return undefined;
  const start = root.range?.[0] ?? 0;
  return {
    id: file.path,
    kind: "yaml",
    name: baseName(file.path),
    location: pointLocation(file.path, index, start),
    settings,
    anchors,
    mode: "unknown",
    complete: false,
    notes,
  };
}

function isEmptyScalar(node: unknown): boolean {
  return isScalar(node) && (node.value === null || node.value === "");
}

interface Reading {
  file: SourceFile;
  index: LineIndex;
  ctx: AliasContext;
}

/**
 * `model.x`, and one level deeper for `dataset.packed_sequence_specs.pad_seq_to_mult`.
 * `shared`: the mapping is reached through an alias or a merge, so its text also serves
 * other places of the file.
 */
function collectSettings(r: Reading, prefix: string, map: YAMLMap, settings: Partial<Record<SettingKey, Setting>>, shared: boolean): void {
  for (const pair of effectivePairs(map, r.ctx)) {
    const dotted = `${prefix}.${pair.key}`;
    const key = settingKeyFor(dotted);
    const value = pair.value;
    if (key && value) settings[key] = yamlSetting(r, key, value, shared || pair.viaAlias);
    const nested = mappingOf(value, r.ctx);
    if (nested.map && prefix.split(".").length < 2) collectSettings(r, dotted, nested.map, settings, shared || pair.viaAlias || nested.viaAlias);
  }
}

/**
 * The value where it is written: an alias's value is its anchor's text, and replacing that
 * text would change every place that refers to it, so such a value is not local (a fix
 * adds an override in the section instead).
 */
function yamlSetting(r: Reading, key: SettingKey, node: Node, shared: boolean): Setting {
  const written = isAlias(node) ? ((tryDeref(node, r.ctx) ?? node) as Node) : node;
  const [start, end] = valueRange(r.file.text, written);
  const via = written !== node ? `the alias *${(node as { source?: string }).source ?? ""} at line ${r.index.point(node.range?.[0] ?? 0).line}` : shared ? "a YAML merge key or alias" : undefined;
  return {
    key,
    value: yamlValue(written, r.ctx),
    origin: {
      kind: "yaml",
      location: location(r.file.path, r.index, start, end),
      text: r.file.text.slice(start, end),
      syntax: "yaml",
      ...(via ? { via } : {}),
    },
    local: !shared && written === node,
  };
}

/** The value's text without the line break (and blank lines) a block sequence's range ends with. */
function valueRange(text: string, node: Node): [number, number] {
  const r = node.range ?? [0, 0, 0];
  let end = Math.max(r[0], r[1]);
  while (end > r[0] && /\s/.test(text[end - 1] ?? "")) end--;
  return [r[0], end];
}

function yamlValue(node: Node, ctx: AliasContext): Value {
  let js: unknown;
  try {
    // With the document, aliases inside the value resolve (without it they read as {source}).
    js = node.toJS(ctx.doc, { maxAliasCount: MAX_ALIAS_COUNT_PER_VALUE });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.includes("Excessive alias count")) throw new AliasLimitError(`a value expands more than ${MAX_ALIAS_COUNT_PER_VALUE} YAML aliases (an alias bomb?)`);
    if (message.includes("Unresolved alias")) return unknown("YAML value refers to an undefined alias");
    return unknown("YAML value could not be read");
  }
  if (containsInterpolation(js)) return unknown(`OmegaConf interpolation ${JSON.stringify(js)}`);
  return isKnown(js) ? known(js) : unknown("YAML value is not plain data");
}

function containsInterpolation(v: unknown): boolean {
  if (typeof v === "string") return v.includes("${");
  if (Array.isArray(v)) return v.some(containsInterpolation);
  if (v !== null && typeof v === "object") return Object.values(v).some(containsInterpolation);
  return false;
}

function isKnown(v: unknown): v is Known {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isKnown);
  if (typeof v === "object") return Object.values(v as object).every(isKnown);
  return false;
}

/** End of the section's last line, indented like its children; flow sections get none. */
function sectionAnchor(file: SourceFile, index: LineIndex, pair: EffectivePair): Anchor | undefined {
  const value = pair.value;
  const key = pair.keyNode as ScalarNode;
  const keyStart = key.range?.[0] ?? 0;
  const keyIndent = leadingBlanks(index.lineText(index.point(keyStart).line));
  if (isEmptyScalar(value) || value === null) {
    // `model:` with nothing under it: insert the first child under the key.
    const line = index.point(keyStart).line;
    return anchorAt(file, index, index.lineEnd(line), `${keyIndent}  `);
  }
  if (!isMap(value) || value.flow || value.items.length === 0) return undefined;
  const first = value.items[0];
  const last = value.items[value.items.length - 1];
  const firstKeyStart = (first?.key as ScalarNode | undefined)?.range?.[0] ?? keyStart;
  const childIndent = leadingBlanks(index.lineText(index.point(firstKeyStart).line));
  const lastNode = (last?.value ?? last?.key) as Node | undefined;
  const lastEnd = lastNode?.range ? Math.max(lastNode.range[0], lastNode.range[1] - 1) : firstKeyStart;
  return anchorAt(file, index, index.lineEnd(index.point(lastEnd).line), childIndent);
}

function missingSectionAnchor(file: SourceFile, index: LineIndex, section: Section): Anchor {
  return { style: "yaml", at: pointLocation(file.path, index, file.text.length), indent: "", receiver: `${section}:\n  ` };
}

function anchorAt(file: SourceFile, index: LineIndex, offset: number, indent: string): Anchor {
  return { style: "yaml", at: pointLocation(file.path, index, offset), indent, receiver: "" };
}

function leadingBlanks(line: string): string {
  return /^[ \t]*/.exec(line)?.[0] ?? "";
}

function nodeLocation(file: SourceFile, index: LineIndex, node: unknown) {
  const r = (node as Node).range ?? [0, 0, 0];
  return location(file.path, index, r[0], Math.max(r[0], r[1]));
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

// ---------------------------------------------------------------------------------------
// Launch commands inside string scalars

function launchScalars(doc: Document.Parsed): ScalarNode[] {
  const found: ScalarNode[] = [];
  visit(doc, {
    Scalar(key, node) {
      if (key === "key") return;
      if (typeof node.value === "string" && mayHoldLaunchLine(node.value)) found.push(node);
    },
  });
  return found;
}

/**
 * The scalar's value as a view onto the file. The view is rebuilt from the source lines
 * (block indentation stripped, folds applied) and checked against the value the YAML
 * library computed; if they differ (an escape or folding case not rebuilt here), no
 * character gets a position: units are still found, their values point (zero-width) at
 * the scalar's start and are not edited in place (local: false), and no anchor is given.
 */
export function scalarView(text: string, node: ScalarNode): MappedText {
  const value = String(node.value);
  const range = node.range ?? [0, 0, 0];
  const rebuilt = rebuildScalar(text, node.type, range[0], range[1]);
  if (rebuilt && trimEndNewlines(rebuilt.text) === trimEndNewlines(value)) return rebuilt;
  // -1: no exact position; extractLaunchLines is given the scalar start as the fallback.
  const map = new Int32Array(value.length).fill(-1);
  return { text: value, map, base: 0 };
}

function trimEndNewlines(s: string): string {
  return s.replace(/\n+$/, "");
}

function rebuildScalar(text: string, type: Scalar.Type | undefined, start: number, end: number): MappedText | undefined {
  switch (type) {
    case "BLOCK_FOLDED":
    case "BLOCK_LITERAL":
      return rebuildBlock(text, start, end, type === "BLOCK_FOLDED");
    case "PLAIN":
      return rebuildFlowLines(text, start, end);
    case "QUOTE_SINGLE":
      return text.slice(start + 1, end - 1).includes("''") ? undefined : rebuildFlowLines(text, start + 1, end - 1);
    case "QUOTE_DOUBLE":
      return text.slice(start + 1, end - 1).includes("\\") ? undefined : rebuildFlowLines(text, start + 1, end - 1);
    default:
      return undefined;
  }
}

interface SourceLine {
  start: number;
  end: number;
}

function linesBetween(text: string, from: number, to: number): SourceLine[] {
  const lines: SourceLine[] = [];
  let s = from;
  while (s < to) {
    const nl = text.indexOf("\n", s);
    const e = nl < 0 || nl >= to ? to : nl;
    lines.push({ start: s, end: e > s && text[e - 1] === "\r" ? e - 1 : e });
    s = e + 1;
  }
  return lines;
}

/** Plain or quoted multi-line scalars: lines trimmed, single breaks fold to a space. */
function rebuildFlowLines(text: string, from: number, to: number): MappedText {
  const b = new MappedTextBuilder();
  const lines = linesBetween(text, from, to);
  let emptyRun = 0;
  lines.forEach((line, k) => {
    let s = line.start;
    let e = line.end;
    if (k > 0) while (s < e && (text[s] === " " || text[s] === "\t")) s++;
    if (k < lines.length - 1) while (e > s && (text[e - 1] === " " || text[e - 1] === "\t")) e--;
    if (k > 0 && s === e && k < lines.length - 1) {
      emptyRun++;
      return;
    }
    if (k > 0) b.appendSynthetic(emptyRun > 0 ? "\n".repeat(emptyRun) : " ");
    emptyRun = 0;
    b.appendSource(text, s, e);
  });
  return b.build();
}

/** `>` and `|` block scalars: strip the block indentation, fold (for `>`) per YAML 1.2 §8.1.3. */
function rebuildBlock(text: string, start: number, end: number, folded: boolean): MappedText | undefined {
  const headerEnd = text.indexOf("\n", start);
  if (headerEnd < 0 || headerEnd >= end) return { text: "", base: start };
  const header = text.slice(start, headerEnd);
  const explicit = /[1-9]/.exec(header.replace(/#.*$/, ""));
  const lines = linesBetween(text, headerEnd + 1, end);
  let indent = explicit ? Number(explicit[0]) : -1;
  if (indent < 0) {
    const firstContent = lines.find((l) => text.slice(l.start, l.end).trim() !== "");
    if (!firstContent) return { text: "", base: start };
    indent = leadingBlanks(text.slice(firstContent.start, firstContent.end)).length;
  }
  const b = new MappedTextBuilder();
  let previous: "normal" | "more" | undefined;
  let empties = 0;
  for (const line of lines) {
    const content = line.start + indent;
    if (content >= line.end || text.slice(line.start, line.end).trim() === "") {
      empties++;
      continue;
    }
    const kind = text[content] === " " || text[content] === "\t" ? "more" : "normal";
    if (previous !== undefined) {
      const fold = folded && previous === "normal" && kind === "normal";
      b.appendSynthetic(fold ? (empties > 0 ? "\n".repeat(empties) : " ") : "\n".repeat(empties + 1));
    } else if (empties > 0) b.appendSynthetic("\n".repeat(empties));
    b.appendSource(text, content, line.end);
    previous = kind;
    empties = 0;
  }
  return b.build();
}
