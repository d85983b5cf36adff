// The shell lexer's values: words that remember where each character came from, the
// variables assigned so far, and the helpers that build and join such words.

export interface VarRef {
  name: string;
  /** Source offset of the assignment, so `via` can name its line. */
  offset: number;
}

export interface Word {
  text: string;
  /** Source offset of each character of `text`; -1 when it has none. */
  origins: number[];
  /** Source offsets of the raw word in the command text (after the last raw character). */
  rawStart: number;
  rawEnd: number;
  /** Set when part of the word is not what the shell would see (unset variable, `$(...)`). */
  unresolved?: string;
  /** Variables whose values went into this word. */
  vars: VarRef[];
}

export interface Command {
  words: Word[];
  /** True when the command was read out of a `bash -c STRING` / `eval` argument. */
  nested: boolean;
  /** NVLINK_DOMAIN_SIZE as assigned before the command (`export NVLINK_DOMAIN_SIZE=72`), if it was. */
  nvlinkDomainSize?: VarValue;
}

export interface VarValue {
  /** A scalar has one element; `NAME=(a b c)` has one per element. */
  elements: Word[];
  isArray: boolean;
  offset: number;
}

export type Env = Map<string, VarValue>;

export interface LexIssue {
  offset: number;
  message: string;
}

export interface LexResult {
  commands: Command[];
  issues: LexIssue[];
}

export function isBlank(ch: string | undefined): boolean {
  return ch === " " || ch === "\t" || ch === "\r";
}

export function isWordEnd(ch: string | undefined): boolean {
  return ch === undefined || ch === " " || ch === "\t" || ch === "\r" || ch === "\n" || ch === ";" || ch === "&" ||
    ch === "|" || ch === "(" || ch === ")" || ch === "<" || ch === ">";
}

/** Word under construction. `has` distinguishes an empty quoted word (`""`) from no word. */
export class WordBuilder {
  chars: string[] = [];
  origins: number[] = [];
  has = false;
  rawStart = -1;
  unresolved: string | undefined;
  vars: VarRef[] = [];

  push(ch: string, origin: number): void {
    this.chars.push(ch);
    this.origins.push(origin);
    this.has = true;
  }

  finish(rawEnd: number): Word {
    const word: Word = { text: this.chars.join(""), origins: this.origins, rawStart: this.rawStart, rawEnd, vars: this.vars };
    if (this.unresolved !== undefined) word.unresolved = this.unresolved;
    return word;
  }
}

export function appendWord(cur: WordBuilder, el: Word, ref?: VarRef): void {
  for (let c = 0; c < el.text.length; c++) cur.push(el.text[c] ?? "", el.origins[c] ?? -1);
  cur.has = true;
  if (ref && !cur.vars.includes(ref)) cur.vars.push(ref);
  cur.vars.push(...el.vars);
  if (el.unresolved !== undefined && cur.unresolved === undefined) cur.unresolved = el.unresolved;
}

export function appendValue(previous: VarValue, added: VarValue): VarValue {
  if (added.isArray || previous.isArray) {
    return { elements: [...previous.elements, ...added.elements], isArray: true, offset: added.offset };
  }
  const a = previous.elements[0];
  const b = added.elements[0];
  if (!a || !b) return added;
  const joined: Word = {
    text: a.text + b.text,
    origins: [...a.origins, ...b.origins],
    rawStart: a.rawStart,
    rawEnd: b.rawEnd,
    vars: [...a.vars, ...b.vars],
  };
  const unresolved = a.unresolved ?? b.unresolved;
  if (unresolved !== undefined) joined.unresolved = unresolved;
  return { elements: [joined], isArray: false, offset: added.offset };
}

export function literalWord(text: string, origin: number): Word {
  return { text, origins: [origin], rawStart: origin, rawEnd: origin + 1, vars: [] };
}
export function basename(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? path : path.slice(slash + 1);
}

