// Value spellings on launch lines: Hydra override values (`[2,2]`, `null`, `'a b'`), the
// keys they address, and where in the source a value's characters sit.
import { isSettingKey, known, unknown, type Known, type SettingKey, type Value } from "../../model/settings.ts";
import type { Word } from "./words.ts";

/** Spellings that address a SettingKey under another name. */
const KEY_ALIASES: Record<string, SettingKey> = {
  "dataset.sequence_length": "dataset.seq_length",
  "dataset.packed_sequence_specs.pad_seq_to_mult": "dataset.pad_seq_to_mult",
  "dataset.offline_packing_specs.pad_seq_to_mult": "dataset.pad_seq_to_mult",
};

/** `model.context_parallel_size` (or an alias) -> its SettingKey; undefined for keys the rules do not read. */
export function settingKeyFor(dotted: string): SettingKey | undefined {
  if (isSettingKey(dotted)) return dotted;
  return KEY_ALIASES[dotted];
}

const INT = /^[-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?$/;

/** A scalar as Hydra's grammar reads it: int, float, bool, null, else a string. */
function hydraPrimitive(text: string): Known {
  const t = text.trim();
  if (/^null$/i.test(t)) return null;
  if (/^true$/i.test(t)) return true;
  if (/^false$/i.test(t)) return false;
  if (INT.test(t)) return Number(t);
  if (FLOAT.test(t)) return Number(t);
  return t;
}

/** Recursive-descent reader for Hydra values; throws on malformed input (caught by parseHydraValue). */
class HydraValueReader {
  private i = 0;
  constructor(private readonly s: string) {}

  readAll(): Known {
    const v = this.value();
    this.blanks();
    if (this.i !== this.s.length) throw new Error(`unexpected ${this.s[this.i]}`);
    return v;
  }

  private blanks(): void {
    while (this.s[this.i] === " " || this.s[this.i] === "\t") this.i++;
  }

  private value(): Known {
    this.blanks();
    const ch = this.s[this.i];
    if (ch === "[") return this.list();
    if (ch === "{") return this.dict();
    if (ch === "'" || ch === '"') return this.quoted();
    return this.primitive();
  }

  private list(): Known[] {
    this.i++;
    const items: Known[] = [];
    this.blanks();
    if (this.s[this.i] === "]") {
      this.i++;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.blanks();
      const ch = this.s[this.i++];
      if (ch === "]") return items;
      if (ch !== ",") throw new Error("expected , or ]");
    }
  }

  private dict(): Known {
    this.i++;
    const out: Record<string, Known> = {};
    this.blanks();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.blanks();
      const colon = this.s.indexOf(":", this.i);
      if (colon < 0) throw new Error("expected :");
      const key = this.s.slice(this.i, colon).trim();
      this.i = colon + 1;
      out[key] = this.value();
      this.blanks();
      const ch = this.s[this.i++];
      if (ch === "}") return out;
      if (ch !== ",") throw new Error("expected , or }");
    }
  }

  private quoted(): string {
    const q = this.s[this.i++];
    let out = "";
    while (this.i < this.s.length && this.s[this.i] !== q) {
      if (this.s[this.i] === "\\" && this.i + 1 < this.s.length) this.i++;
      out += this.s[this.i++];
    }
    if (this.i >= this.s.length) throw new Error("unterminated quote");
    this.i++;
    return out;
  }

  private primitive(): Known {
    const start = this.i;
    while (this.i < this.s.length && !",]}".includes(this.s[this.i] ?? "")) this.i++;
    if (this.i === start) throw new Error("empty value");
    return hydraPrimitive(this.s.slice(start, this.i));
  }
}

/** What a Hydra override value evaluates to (after the shell removed its own quotes). */
export function parseHydraValue(text: string): Value {
  if (text.includes("${")) return unknown(`OmegaConf interpolation ${text}`);
  if (text.trim() === "") return known("");
  try {
    return known(new HydraValueReader(text).readAll());
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return unknown(`malformed Hydra value ${text} (${why})`);
  }
}

/** Where the characters of some words sit in the source, and whether that is exact. */
export interface Span {
  start: number;
  end: number;
  /** True when source.slice(start, end) spells exactly these words (up to quotes and continuations). */
  exact: boolean;
}

/**
 * Span of the characters [from, to) of each word, from the first to the last. Exact when
 * every character has a source position, positions increase, and whatever lies between
 * them in the source is only quoting, blanks between words, or line continuations.
 */
export function spanOf(source: string, parts: readonly { word: Word; from: number; to: number }[]): Span | undefined {
  let start = -1;
  let prev = -1;
  let exact = true;
  for (const [p, part] of parts.entries()) {
    for (let c = part.from; c < part.to; c++) {
      const o = part.word.origins[c] ?? -1;
      if (o < 0) {
        exact = false;
        continue;
      }
      if (start < 0) start = o;
      else if (o <= prev) exact = false;
      else if (o !== prev + 1) {
        const gap = source.slice(prev + 1, o);
        const allowed = c === part.from && p > 0 ? /^(?:[\s'"]|\\\r?\n)*$/ : /^(?:['"]|\\\r?\n)*$/;
        if (!allowed.test(gap)) exact = false;
      }
      prev = Math.max(prev, o);
    }
  }
  if (start < 0) return undefined;
  return { start, end: prev + 1, exact };
}
