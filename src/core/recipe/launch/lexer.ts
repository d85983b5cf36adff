// A small, forgiving shell lexer: enough of POSIX sh/bash to read launch scripts.
// It splits a script into simple commands made of words, removes quotes, joins
// backslash-newline continuations, skips comments, redirections and here-documents, and
// expands variables assigned earlier in the same text. Every character of every word
// keeps the source offset it came from, so a value that reached a command through
// `CP=4 ... -cp $CP` points at the `4` of the assignment.
//
// It interprets no control flow: assignments are applied in text order (the last one
// written before a use wins), whatever `if`/`case` branch they sit in.
import { sourceOffset, type MappedText } from "./mapped.ts";
import { matchClosing, removeDefaultQuotes } from "./quotes.ts";
import {
  appendValue,
  appendWord,
  basename,
  isBlank,
  isWordEnd,
  literalWord,
  WordBuilder,
  type Command,
  type Env,
  type LexIssue,
  type LexResult,
  type VarRef,
  type VarValue,
  type Word,
} from "./words.ts";

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const ASSIGNMENT = /([A-Za-z_][A-Za-z0-9_]*)(\+?)=/y;
const SKIPPED_KEYWORDS = new Set(["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "{", "}", "!", "time"]);
const DECLARATION_BUILTINS = new Set(["export", "declare", "local", "readonly", "typeset"]);
const SHELLS = new Set(["bash", "sh", "zsh", "dash"]);
const MAX_NESTING = 3;

type WordMode = "split" | "assign";

interface Expansion {
  end: number; // view index after the expansion token
  /** Elements to insert; undefined when the raw text stays literal (unset or unsupported). */
  elements?: Word[];
  isArrayAll?: boolean; // `${A[@]}`: each element is its own word even when quoted
  unresolved?: string;
  ref?: VarRef;
}

export class ShellLexer {
  private i = 0;
  private readonly text: string;
  private readonly commands: Command[] = [];
  private readonly issues: LexIssue[] = [];
  private words: Word[] = [];
  private atStart = true;
  private declaring = false;
  private pendingHeredocs: { delim: string; stripTabs: boolean }[] = [];

  constructor(
    private readonly src: MappedText,
    private readonly env: Env,
    private readonly depth = 0,
    private readonly nested = false,
  ) {
    this.text = src.text;
  }

  static lex(src: MappedText, env: Env = new Map()): LexResult {
    const lexer = new ShellLexer(src, env);
    lexer.run();
    return { commands: lexer.commands, issues: lexer.issues };
  }

  private off(i: number): number {
    return sourceOffset(this.src, i);
  }

  /** Source offset just after view index i-1 (the end of a raw token ending before i). */
  private endOff(i: number): number {
    const o = sourceOffset(this.src, i - 1);
    return o < 0 ? o : o + 1;
  }

  private issue(i: number, message: string): void {
    this.issues.push({ offset: this.off(Math.min(i, this.text.length - 1)), message });
  }

  run(): void {
    const t = this.text;
    while (this.i < t.length) {
      const ch = t[this.i];
      if (isBlank(ch)) {
        this.i++;
      } else if (ch === "\\" && t[this.i + 1] === "\n") {
        this.i += 2;
      } else if (ch === "\\" && t[this.i + 1] === "\r" && t[this.i + 2] === "\n") {
        this.i += 3;
      } else if (ch === "\n") {
        this.endCommand();
        this.i++;
        if (this.pendingHeredocs.length > 0) this.skipHeredocs();
      } else if (ch === ";" || ch === "|" || ch === "(" || ch === ")") {
        this.endCommand();
        this.i++;
      } else if (ch === "&") {
        if (t[this.i + 1] === ">") this.skipRedirection();
        else {
          this.endCommand();
          this.i++;
        }
      } else if (ch === "#") {
        this.skipComment();
      } else if (ch === "<" || ch === ">") {
        this.skipRedirection();
      } else {
        this.readCommandWord();
      }
    }
    this.endCommand();
  }

  private skipComment(): void {
    const nl = this.text.indexOf("\n", this.i);
    this.i = nl < 0 ? this.text.length : nl;
  }

  private endCommand(): void {
    if (this.words.length > 0) {
      const command: Command = { words: this.words, nested: this.nested };
      // The launch scripts' way of stating the NVLink domain (HCP018); read when the command is, not at the end.
      const domain = this.env.get("NVLINK_DOMAIN_SIZE");
      if (domain) command.nvlinkDomainSize = domain;
      this.commands.push(command);
      this.expandNestedShell(command);
    }
    this.words = [];
    this.atStart = true;
    this.declaring = false;
  }

  /** `bash -c "$CMD"` and `eval "$CMD"`: the string is itself a script; read it too. */
  private expandNestedShell(command: Command): void {
    if (this.depth >= MAX_NESTING) return;
    const ws = command.words;
    for (let k = 0; k < ws.length; k++) {
      const name = basename(ws[k]?.text ?? "");
      let script: Word | undefined;
      if (SHELLS.has(name) && ws[k + 1]?.text === "-c") script = ws[k + 2];
      else if (name === "eval" && k === 0 && ws.length === 2) script = ws[1];
      if (!script) continue;
      const inner = new ShellLexer({ text: script.text, map: script.origins, base: 0 }, this.env, this.depth + 1, true);
      inner.run();
      for (const c of inner.commands) this.commands.push(c);
      for (const i of inner.issues) this.issues.push(i);
      return;
    }
  }

  private readCommandWord(): void {
    if (this.atStart && this.tryAssignment()) return;
    const start = this.i;
    const produced = this.readWord("split");
    // `2>&1`: digits glued to a redirection operator are a file descriptor, not a word.
    const next = this.text[this.i];
    if ((next === ">" || next === "<") && produced.length === 1 && /^[0-9]+$/.test(this.text.slice(start, this.i))) return;
    for (const w of produced) {
      if (this.atStart && this.words.length === 0) {
        if (SKIPPED_KEYWORDS.has(w.text)) continue;
        if (DECLARATION_BUILTINS.has(w.text)) {
          this.declaring = true;
          continue;
        }
        if (this.declaring && w.text.startsWith("-")) continue;
      }
      this.atStart = false;
      this.words.push(w);
    }
  }

  /** `NAME=value`, `NAME+=value`, `NAME=(a b c)` at the start of a command. */
  private tryAssignment(): boolean {
    ASSIGNMENT.lastIndex = this.i;
    const m = ASSIGNMENT.exec(this.text);
    if (!m) return false;
    const name = m[1] ?? "";
    const append = m[2] === "+";
    const offset = this.off(this.i);
    this.i = ASSIGNMENT.lastIndex;
    let value: VarValue;
    if (this.text[this.i] === "(") {
      this.i++;
      value = { elements: this.readArrayElements(), isArray: true, offset };
    } else {
      const words = this.readWord("assign");
      const word = words[0] ?? { text: "", origins: [], rawStart: this.off(this.i), rawEnd: this.off(this.i), vars: [] };
      value = { elements: [word], isArray: false, offset };
    }
    const previous = this.env.get(name);
    if (append && previous) value = appendValue(previous, value);
    this.env.set(name, value);
    return true;
  }

  private readArrayElements(): Word[] {
    const t = this.text;
    const elements: Word[] = [];
    while (this.i < t.length) {
      const ch = t[this.i];
      if (isBlank(ch) || ch === "\n") this.i++;
      else if (ch === "\\" && t[this.i + 1] === "\n") this.i += 2;
      else if (ch === "#") this.skipComment();
      else if (ch === ")") {
        this.i++;
        return elements;
      } else if (isWordEnd(ch)) this.i++; // stray operator inside an array: ignore
      else elements.push(...this.readWord("split"));
    }
    this.issue(this.i - 1, "unterminated array assignment: missing ')'");
    return elements;
  }

  /** Skips `> file`, `2>&1`, `&> log`, `>> out`, `<<EOF` (registering the here-document). */
  private skipRedirection(): void {
    const t = this.text;
    if (t[this.i] === "<" && t[this.i + 1] === "<" && t[this.i + 2] !== "<") {
      this.i += 2;
      const stripTabs = t[this.i] === "-";
      if (stripTabs) this.i++;
      while (isBlank(t[this.i])) this.i++;
      const delim = this.readWord("assign")[0]?.text ?? "";
      if (delim) this.pendingHeredocs.push({ delim, stripTabs });
      return;
    }
    while (this.i < t.length && /[<>&|]/.test(t[this.i] ?? "")) this.i++;
    while (isBlank(t[this.i])) this.i++;
    if (!isWordEnd(t[this.i])) this.readWord("assign");
  }

  private skipHeredocs(): void {
    const t = this.text;
    for (const { delim, stripTabs } of this.pendingHeredocs) {
      while (this.i < t.length) {
        const nl = t.indexOf("\n", this.i);
        const lineEnd = nl < 0 ? t.length : nl;
        let line = t.slice(this.i, lineEnd).replace(/\r$/, "");
        if (stripTabs) line = line.replace(/^\t+/, "");
        this.i = nl < 0 ? t.length : nl + 1;
        if (line === delim) break;
      }
    }
    this.pendingHeredocs = [];
  }

  /**
   * Reads one shell word at this.i. In "split" mode an unquoted expansion may produce
   * several words (field splitting); in "assign" mode (right side of NAME=) it does not.
   */
  private readWord(mode: WordMode): Word[] {
    const t = this.text;
    const out: Word[] = [];
    const st = { cur: new WordBuilder() };
    st.cur.rawStart = this.off(this.i);
    const breakWord = (rawEnd: number, rawStart: number, ref?: VarRef): void => {
      if (st.cur.has) out.push(st.cur.finish(rawEnd));
      st.cur = new WordBuilder();
      st.cur.rawStart = rawStart;
      if (ref) st.cur.vars.push(ref);
    };
    while (this.i < t.length && !isWordEnd(t[this.i])) {
      const ch = t[this.i] ?? "";
      if (ch === "'") {
        st.cur.has = true;
        this.readSingleQuoted(st);
      } else if (ch === '"') {
        st.cur.has = true;
        this.readDoubleQuoted(st, (exp, tokStart) => this.insertQuoted(st, exp, tokStart, breakWord));
      } else if (ch === "\\") {
        if (t[this.i + 1] === "\n") this.i += 2;
        else if (this.i + 1 < t.length) {
          st.cur.push(t[this.i + 1] ?? "", this.off(this.i + 1));
          this.i += 2;
        } else this.i++;
      } else if (ch === "$") {
        const tokStart = this.i;
        const exp = this.readExpansion(false);
        if (!exp.elements) this.pushLiteral(st.cur, tokStart, exp.end, exp.unresolved);
        else if (mode === "assign") this.insertJoined(st.cur, exp);
        else this.insertSplit(exp, tokStart, () => st.cur, breakWord);
        this.i = exp.end;
      } else if (ch === "`") {
        const tokStart = this.i;
        const close = t.indexOf("`", this.i + 1);
        const end = close < 0 ? t.length : close + 1;
        if (close < 0) this.issue(tokStart, "unterminated backquote");
        this.pushLiteral(st.cur, tokStart, end, "command substitution");
        this.i = end;
      } else {
        st.cur.push(ch, this.off(this.i));
        this.i++;
      }
    }
    if (st.cur.has) out.push(st.cur.finish(this.endOff(this.i)));
    return out;
  }

  private pushLiteral(cur: WordBuilder, start: number, end: number, unresolved?: string): void {
    for (let k = start; k < end; k++) cur.push(this.text[k] ?? "", this.off(k));
    if (unresolved !== undefined && cur.unresolved === undefined) cur.unresolved = unresolved;
  }

  private readSingleQuoted(st: { cur: WordBuilder }): void {
    const t = this.text;
    const close = t.indexOf("'", this.i + 1);
    const end = close < 0 ? t.length : close;
    if (close < 0) this.issue(this.i, "unterminated single quote");
    for (let k = this.i + 1; k < end; k++) st.cur.push(t[k] ?? "", this.off(k));
    this.i = close < 0 ? t.length : close + 1;
  }

  private readDoubleQuoted(st: { cur: WordBuilder }, onExpansion: (exp: Expansion, tokStart: number) => void): void {
    const t = this.text;
    const open = this.i;
    this.i++;
    while (this.i < t.length && t[this.i] !== '"') {
      const ch = t[this.i] ?? "";
      if (ch === "\\" && this.i + 1 < t.length) {
        const next = t[this.i + 1] ?? "";
        if (next === "\n") this.i += 2;
        else if (next === "$" || next === '"' || next === "\\" || next === "`") {
          st.cur.push(next, this.off(this.i + 1));
          this.i += 2;
        } else {
          st.cur.push(ch, this.off(this.i));
          this.i++;
        }
      } else if (ch === "$") {
        const tokStart = this.i;
        const exp = this.readExpansion(true);
        if (exp.elements) onExpansion(exp, tokStart);
        else this.pushLiteral(st.cur, tokStart, exp.end, exp.unresolved);
        this.i = exp.end;
      } else if (ch === "`") {
        const close = t.indexOf("`", this.i + 1);
        const end = close < 0 ? t.length : close + 1;
        this.pushLiteral(st.cur, this.i, end, "command substitution");
        this.i = end;
      } else {
        st.cur.push(ch, this.off(this.i));
        this.i++;
      }
    }
    if (this.i >= t.length) this.issue(open, "unterminated double quote");
    else this.i++;
  }

  /** Inside double quotes: no splitting, except that "${A[@]}" yields one word per element. */
  private insertQuoted(
    st: { cur: WordBuilder },
    exp: Expansion,
    tokStart: number,
    breakWord: (rawEnd: number, rawStart: number, ref?: VarRef) => void,
  ): void {
    const elements = exp.elements ?? [];
    if (!exp.isArrayAll) {
      this.insertJoined(st.cur, exp);
      return;
    }
    elements.forEach((el, k) => {
      if (k > 0) breakWord(this.endOff(exp.end), this.off(tokStart), exp.ref);
      appendWord(st.cur, el, exp.ref);
    });
  }

  private insertJoined(cur: WordBuilder, exp: Expansion): void {
    (exp.elements ?? []).forEach((el, k) => {
      if (k > 0) cur.push(" ", -1);
      appendWord(cur, el, exp.ref);
    });
    if (exp.unresolved !== undefined && cur.unresolved === undefined) cur.unresolved = exp.unresolved;
  }

  /** Unquoted expansion: split every element on blanks (IFS) into separate words. */
  private insertSplit(
    exp: Expansion,
    tokStart: number,
    current: () => WordBuilder,
    breakWord: (rawEnd: number, rawStart: number, ref?: VarRef) => void,
  ): void {
    const rawEnd = this.endOff(exp.end);
    const rawStart = this.off(tokStart);
    (exp.elements ?? []).forEach((el, k) => {
      if (k > 0) breakWord(rawEnd, rawStart, exp.ref);
      for (let c = 0; c < el.text.length; c++) {
        const ch = el.text[c] ?? "";
        if (ch === " " || ch === "\t" || ch === "\n") breakWord(rawEnd, rawStart, exp.ref);
        else {
          const cur = current();
          cur.push(ch, el.origins[c] ?? -1);
          if (exp.ref && !cur.vars.includes(exp.ref)) cur.vars.push(exp.ref, ...el.vars);
          if (el.unresolved !== undefined && cur.unresolved === undefined) cur.unresolved = el.unresolved;
        }
      }
    });
  }

  /** Parses `$NAME`, `${NAME}`, `${A[@]}`, `${X:-default}`, `$(...)`, `$1` at this.i. */
  private readExpansion(quoted: boolean): Expansion {
    const t = this.text;
    const start = this.i;
    const next = t[start + 1];
    if (next === "(") {
      const end = matchClosing(t, start + 1, "(", ")");
      if (end < 0) this.issue(start, "unterminated command substitution");
      return { end: end < 0 ? t.length : end + 1, unresolved: "command substitution" };
    }
    if (next === "{") {
      const close = matchClosing(t, start + 1, "{", "}");
      if (close < 0) {
        this.issue(start, "unterminated ${...}");
        return { end: t.length, unresolved: "unterminated ${...}" };
      }
      return this.resolveBraced(t.slice(start + 2, close), start + 2, close + 1, quoted);
    }
    if (next !== undefined && NAME_START.test(next)) {
      let end = start + 2;
      while (end < t.length && NAME_CHAR.test(t[end] ?? "")) end++;
      return this.lookup(t.slice(start + 1, end), "0", end);
    }
    if (next !== undefined && /[0-9@*#?$!-]/.test(next)) {
      return { end: start + 2, unresolved: `$${next} is only known at run time` };
    }
    return { end: start + 1, elements: [literalWord("$", this.off(start))] };
  }

  private resolveBraced(inner: string, innerStart: number, end: number, quoted: boolean): Expansion {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]*)\])?(.*)$/s.exec(inner);
    if (!m) return { end, unresolved: `\${${inner}} is not supported` };
    const name = m[1] ?? "";
    const subscript = m[2] ?? "0";
    const rest = m[3] ?? "";
    if (rest === "") return this.lookup(name, subscript, end);
    const dflt = /^:?[-=](.*)$/s.exec(rest);
    if (!dflt) return { end, unresolved: `\${${inner}} is not supported` };
    const known = this.lookup(name, subscript, end);
    if (known.elements && !(rest.startsWith(":") && known.elements.every((e) => e.text === ""))) return known;
    // Unset here: the default written in the file is what runs unless the caller exports it.
    const body = dflt[1] ?? "";
    const bodyStart = innerStart + inner.length - body.length;
    if (body.includes("$") || body.includes("`")) return { end, unresolved: `\${${name}} has a computed default` };
    const removed = removeDefaultQuotes(body, quoted);
    if (!removed) return { end, unresolved: `\${${name}} has a default with an unterminated quote` };
    const word: Word = { text: removed.text, origins: [], rawStart: this.off(bodyStart), rawEnd: this.endOff(bodyStart + body.length), vars: [] };
    for (const k of removed.from) word.origins.push(this.off(bodyStart + k));
    return { end, elements: [word] };
  }

  private lookup(name: string, subscript: string, end: number): Expansion {
    const value = this.env.get(name);
    if (!value) return { end, unresolved: `$${name} is not set in this file` };
    const ref: VarRef = { name, offset: value.offset };
    if (subscript === "@" || subscript === "*") {
      return { end, elements: value.elements, isArrayAll: subscript === "@", ref };
    }
    const index = Number(subscript);
    const el = Number.isInteger(index) ? value.elements[index] : undefined;
    if (!el) return { end, elements: [], ref };
    return { end, elements: [el], ref };
  }
}
