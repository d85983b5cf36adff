// How deeply a Python file's blocks nest, measured before the text reaches tree-sitter.
// CPython's tokenizer stops at 100 indentation levels ("too many levels of indentation",
// MAXINDENT in Parser/lexer/state.h), so such a file is not a program anyone runs; past a
// few hundred levels tree-sitter's indentation scanner no longer holds its stack and
// reports a false syntax error at line 1 (or worse, fails inside the WebAssembly runtime).
// Brackets are bounded the same way: CPython's tokenizer stops at 200 open brackets ("too
// many nested parentheses", MAXLEVEL in Parser/lexer/state.h), and an expression nested
// hundreds deep costs the parser and the evaluator a stack frame per level.
// One linear pass with a tiny lexer: strings are skipped, and lines inside brackets are
// continuation lines that open no block.
import { LineIndex, location, type SourceFile } from "../../model/source.ts";
import type { Diagnostic } from "../types.ts";

/** CPython's MAXINDENT. */
export const MAX_INDENT_LEVELS = 100;
/** CPython's MAXLEVEL (open brackets). */
export const MAX_BRACKET_LEVELS = 200;

/** Where a file first nests past CPython's limits, and which limit. */
export interface TooDeep {
  offset: number;
  kind: "indentation" | "brackets";
}

/** Width of a line's indentation, tabs to the next multiple of 8 as CPython counts them. */
function indentWidth(text: string, start: number): { width: number; end: number } {
  let width = 0;
  let i = start;
  for (; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 32) width++;
    else if (ch === 9) width = (Math.floor(width / 8) + 1) * 8;
    else if (ch === 12) width = 0; // form feed resets, as in CPython
    else break;
  }
  return { width, end: i };
}

/** Where the indentation level first exceeds `limit`, or the open brackets `bracketLimit`; undefined when neither does. */
export function firstTooDeep(text: string, limit = MAX_INDENT_LEVELS, bracketLimit = MAX_BRACKET_LEVELS): TooDeep | undefined {
  // Character codes, not one-character strings: this pass reads every character of every Python file.
  const stack: number[] = [0];
  let depth = 0; // open brackets
  let quote = 0; // the open string's quote character, or 0
  let quoteLength = 0; // 1, or 3 for a triple-quoted string
  let lineStart = true;
  let continued = false; // the previous line ended with a backslash
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (lineStart) {
      lineStart = false;
      if (!quote && depth === 0 && !continued) {
        const { width, end } = indentWidth(text, i);
        const next = end < n ? text.charCodeAt(end) : -1;
        const blank = next === -1 || next === NL || next === CR || next === HASH;
        if (!blank) {
          while (stack.length > 1 && stack[stack.length - 1]! > width) stack.pop();
          if (width > stack[stack.length - 1]!) {
            stack.push(width);
            if (stack.length - 1 > limit) return { offset: end, kind: "indentation" };
          }
        }
        i = end;
        if (i >= n) break;
      }
      continued = false;
    }
    const ch = text.charCodeAt(i);
    if (quote) {
      if (ch === BACKSLASH) i++;
      else if (ch === quote && (quoteLength === 1 || (text.charCodeAt(i + 1) === quote && text.charCodeAt(i + 2) === quote))) {
        i += quoteLength - 1;
        quote = 0;
      } else if (ch === NL) {
        if (quoteLength === 1) quote = 0; // an unterminated one-line string ends at the line
        lineStart = true;
      }
      continue;
    }
    if (ch === HASH) {
      const nl = text.indexOf("\n", i);
      if (nl < 0) break;
      i = nl - 1;
      continue;
    }
    if (ch === SINGLE || ch === DOUBLE) {
      quote = ch;
      quoteLength = text.charCodeAt(i + 1) === ch && text.charCodeAt(i + 2) === ch ? 3 : 1;
      i += quoteLength - 1;
    } else if (ch === 40 || ch === 91 || ch === 123) {
      if (++depth > bracketLimit) return { offset: i, kind: "brackets" }; // ( [ {
    } else if ((ch === 41 || ch === 93 || ch === 125) && depth > 0) depth--;
    else if (ch === BACKSLASH && text.charCodeAt(i + 1) === NL) {
      continued = true;
    } else if (ch === NL) lineStart = true;
  }
  return undefined;
}

const NL = 10;
const CR = 13;
const HASH = 35;
const DOUBLE = 34;
const SINGLE = 39;
const BACKSLASH = 92;

/** Each file is scanned once, though both its own extraction and the library's parse ask. */
// Kept with the text scanned, so a file object whose text was replaced is scanned again.
const scanned = new WeakMap<SourceFile, { text: string; deep: TooDeep | undefined }>();

function scan(file: SourceFile): TooDeep | undefined {
  const hit = scanned.get(file);
  if (hit && hit.text === file.text) return hit.deep;
  const deep = firstTooDeep(file.text);
  scanned.set(file, { text: file.text, deep });
  return deep;
}

/** The "not analyzed" diagnostic for a file nested past CPython's limits; null when it is not. */
export function tooDeeplyNested(file: SourceFile): Diagnostic | null {
  const deep = scan(file);
  if (!deep) return null;
  const index = new LineIndex(file.text);
  const line = index.point(deep.offset).line;
  const why =
    deep.kind === "indentation"
      ? `line ${line} opens indentation level ${MAX_INDENT_LEVELS + 1}; Python itself stops at ${MAX_INDENT_LEVELS}: "too many levels of indentation"`
      : `line ${line} opens bracket level ${MAX_BRACKET_LEVELS + 1}; Python itself stops at ${MAX_BRACKET_LEVELS}: "too many nested parentheses"`;
  return {
    file: file.path,
    severity: "warning",
    code: "too-complex",
    message: `not analyzed: too deeply nested (${why})`,
    location: location(file.path, index, deep.offset, deep.offset),
  };
}
