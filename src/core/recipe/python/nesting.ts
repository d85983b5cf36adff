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
  const stack: number[] = [0];
  let depth = 0; // open brackets
  let quote = ""; // the open string's delimiter (' " ''' """), or ""
  let lineStart = true;
  let continued = false; // the previous line ended with a backslash
  for (let i = 0; i < text.length; i++) {
    if (lineStart) {
      lineStart = false;
      if (!quote && depth === 0 && !continued) {
        const { width, end } = indentWidth(text, i);
        const next = text[end];
        const blank = next === undefined || next === "\n" || next === "\r" || next === "#";
        if (!blank) {
          while (stack.length > 1 && stack[stack.length - 1]! > width) stack.pop();
          if (width > stack[stack.length - 1]!) {
            stack.push(width);
            if (stack.length - 1 > limit) return { offset: end, kind: "indentation" };
          }
        }
        i = end;
        if (i >= text.length) break;
      }
      continued = false;
    }
    const ch = text[i]!;
    if (quote) {
      if (ch === "\\") i++;
      else if (text.startsWith(quote, i)) {
        i += quote.length - 1;
        quote = "";
      } else if (ch === "\n") {
        if (quote.length === 1) quote = ""; // an unterminated one-line string ends at the line
        lineStart = true;
      }
      continue;
    }
    if (ch === "#") {
      const nl = text.indexOf("\n", i);
      if (nl < 0) break;
      i = nl - 1;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = text.startsWith(ch.repeat(3), i) ? ch.repeat(3) : ch;
      i += quote.length - 1;
    } else if (ch === "(" || ch === "[" || ch === "{") {
      if (++depth > bracketLimit) return { offset: i, kind: "brackets" };
    }
    else if ((ch === ")" || ch === "]" || ch === "}") && depth > 0) depth--;
    else if (ch === "\\" && text[i + 1] === "\n") {
      continued = true;
    } else if (ch === "\n") lineStart = true;
  }
  return undefined;
}

/** The "not analyzed" diagnostic for a file nested past CPython's limits; null when it is not. */
export function tooDeeplyNested(file: SourceFile): Diagnostic | null {
  const deep = firstTooDeep(file.text);
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
