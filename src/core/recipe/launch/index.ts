// Launch lines in shell scripts, Markdown code blocks and YAML strings -> launch units.
import { LineIndex, pointLocation, type SourceFile } from "../../model/source.ts";
import type { ConfigUnit } from "../../model/settings.ts";
import { rejectInput } from "../guards.ts";
import { emptyResult, type Diagnostic, type ExtractResult } from "../types.ts";
import { classifyCommand, commandStart, mlmUnit, runRecipeUnit, type UnitContext } from "./commands.ts";
import { ShellLexer } from "./lexer.ts";
import type { Env } from "./words.ts";
import { identityText, MappedTextBuilder, type MappedText } from "./mapped.ts";

export { parseHydraValue, settingKeyFor } from "./values.ts";
export type { MappedText } from "./mapped.ts";
export { MappedTextBuilder } from "./mapped.ts";

export interface LaunchLines {
  units: ConfigUnit[];
  diagnostics: Diagnostic[];
}

/** Cheap pre-filter: text without any of these cannot hold a launch line. */
const LAUNCH_HINT = /run_recipe\.py|setup_experiment\.py|launch_with_nemo_run\.py|--recipe|pretrain_\w+\.py|--context-parallel-size|--cp-comm-type|--hierarchical-context-parallel-sizes/;

export function mayHoldLaunchLine(text: string): boolean {
  return LAUNCH_HINT.test(text);
}

/**
 * Lexes `src` (a view of `file.text`; see MappedText) as a shell script and returns a
 * unit for every run_recipe or Megatron-LM command in it. `ids` keeps unit ids unique
 * across several calls for one file.
 */
export function extractLaunchLines(
  src: MappedText,
  file: SourceFile,
  index: LineIndex,
  ids: Set<string> = new Set(),
  env: Env = new Map(),
  fallbackOffset?: number,
): LaunchLines {
  const { commands, issues } = ShellLexer.lex(src, env);
  const ctx: UnitContext = { file: file.path, source: file.text, index };
  if (fallbackOffset !== undefined) ctx.fallbackOffset = fallbackOffset;
  const diagnostics: Diagnostic[] = issues.map((issue) => ({
    file: file.path,
    severity: "warning",
    code: "parse-error",
    message: issue.message,
    location: pointLocation(file.path, index, issue.offset >= 0 ? issue.offset : fallbackOffset ?? 0),
  }));
  const units: ConfigUnit[] = [];
  for (const command of commands) {
    const kind = classifyCommand(command.words);
    if (!kind) continue;
    const start = commandStart(ctx, command);
    const id = uniqueId(ids, file.path, index, start);
    units.push(kind === "launch" ? runRecipeUnit(ctx, command, id) : mlmUnit(ctx, command, id));
  }
  return { units, diagnostics };
}

function uniqueId(ids: Set<string>, path: string, index: LineIndex, offset: number): string {
  const p = index.point(offset);
  let id = `${path}:${p.line}`;
  if (ids.has(id)) id = `${path}:${p.line}:${p.column}`;
  for (let n = 2; ids.has(id); n++) id = `${path}:${p.line}:${p.column}#${n}`;
  ids.add(id);
  return id;
}

export function extractShell(file: SourceFile): ExtractResult {
  const result = emptyResult();
  const rejected = rejectInput(file.path, file.text);
  if (rejected) return { ...result, diagnostics: [rejected] };
  if (!mayHoldLaunchLine(file.text)) return result;
  const index = new LineIndex(file.text);
  const found = extractLaunchLines(identityText(file.text), file, index);
  return { ...result, units: found.units, diagnostics: found.diagnostics };
}

const SHELL_LANGUAGES = new Set(["", "bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "terminal"]);
const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^\s`{]*)?.*$/;
const PROMPT = /^\s*\$ /;

interface Fence {
  marker: string;
  language: string;
  /** Offset of the first content line. */
  contentStart: number;
}

/**
 * Markdown: every fenced block in a shell-like language (or none) is lexed as a script.
 * The view keeps each kept character's real offset, so findings land inside the block.
 */
export function extractMarkdown(file: SourceFile): ExtractResult {
  const result = emptyResult();
  const rejected = rejectInput(file.path, file.text);
  if (rejected) return { ...result, diagnostics: [rejected] };
  if (!mayHoldLaunchLine(file.text)) return result;
  const text = file.text;
  const index = new LineIndex(text);
  const ids = new Set<string>();
  let open: Fence | undefined;
  for (let line = 1; line <= index.lineCount; line++) {
    const start = index.lineStart(line);
    const lineText = index.lineText(line);
    const m = FENCE.exec(lineText);
    if (!open) {
      if (m) open = { marker: m[2] ?? "```", language: (m[3] ?? "").toLowerCase(), contentStart: index.lineStart(line + 1) };
      continue;
    }
    const closes = m !== null && (m[2] ?? "").startsWith(open.marker) && lineText.trim() === m[2];
    if (!closes && line < index.lineCount) continue;
    const end = closes ? start : text.length;
    if (SHELL_LANGUAGES.has(open.language)) {
      const block = text.slice(open.contentStart, end);
      if (mayHoldLaunchLine(block)) {
        const view = codeBlockView(text, index, open.contentStart, end, open.language === "console");
        const found = extractLaunchLines(view, file, index, ids);
        for (const u of found.units) result.units.push(u);
        for (const d of found.diagnostics) result.diagnostics.push(d);
      }
    }
    open = undefined;
  }
  return result;
}

/**
 * The lines of a code block with `$ ` prompts removed. In a console block, lines without a
 * prompt are program output unless they continue a command (previous line ends with `\`).
 */
function codeBlockView(text: string, index: LineIndex, from: number, to: number, console: boolean): MappedText {
  const b = new MappedTextBuilder();
  const hasPrompts = console && text.slice(from, to).split("\n").some((l) => PROMPT.test(l));
  let continuing = false;
  let line = index.point(from).line;
  for (let start = index.lineStart(line); start < to; start = index.lineStart(++line)) {
    const end = Math.min(index.lineEnd(line), to);
    const raw = text.slice(start, end);
    const prompt = PROMPT.exec(raw);
    const keep = !hasPrompts || prompt !== null || continuing;
    if (keep) {
      b.appendSource(text, prompt ? start + prompt[0].length : start, end);
      continuing = /\\\s*$/.test(raw);
      b.appendSynthetic("\n", end);
    }
    if (index.lineStart(line + 1) <= start) break;
  }
  return b.build();
}
